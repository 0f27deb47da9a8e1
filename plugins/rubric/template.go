package rubric

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/template/parse"
)

// DefaultTemplate shows the judge every field the run has, each in its own tagged
// section: the agent's purpose, the conversation it was given (or its input), the
// evidence it retrieved, the tools it called, its output and the reference answer.
const DefaultTemplate = `{{if .purpose}}The agent's purpose:
<purpose>
{{.purpose}}
</purpose>

{{end}}{{if .conversation}}The conversation the agent was given:
<conversation>
{{range .conversation}}[{{.role}}{{if .name}} {{.name}}{{end}}] {{.content}}
{{range .tool_calls}}  (calls {{.name}} {{.arguments}})
{{end}}{{end}}</conversation>
{{else}}The input the agent was given:
<input>
{{.input}}
</input>
{{end}}{{if .context}}
The evidence the agent retrieved:
<context>
{{range .context}}[{{.id}}] {{.text}}
{{end}}</context>
{{end}}{{if .tool_calls}}
The tools the agent called:
<tool_calls>
{{range .tool_calls}}- {{.name}}({{.arguments}}){{if .result}} -> {{.result}}{{end}}
{{end}}</tool_calls>
{{end}}
The agent's output:
<output>
{{.output}}
</output>
{{if .expected}}
A reference answer:
<expected>
{{.expected}}
</expected>
{{end}}`

// Limits on rendering one run. A template is the tenant's, and in the native runtime it
// runs in the host's process, so its work is bounded whatever it says: its output by
// maxPromptBytes, the bytes its functions read and write by maxFuncBytes, and the nodes
// it executes by maxNodeVisits.
const (
	maxPromptBytes = 8 << 20
	maxFuncBytes   = 64 << 20
	maxNodeVisits  = 10_000_000
)

// The types a template's expressions may have. The checker knows the type of every
// expression, so it can name an unknown field, or a function given the wrong kind of
// value, when the scorer is configured rather than when a run happens to reach it.
type kind int

const (
	kString kind = iota
	kInt
	kNumber
	kBool
	kList
	kObject
	kAny // what and/or return when their arguments differ: printable, not indexable
)

type ty struct {
	kind   kind
	name   string         // for messages: "the run", "a context passage"
	elem   *ty            // of a list
	fields map[string]*ty // of an object
	hint   string         // said when a field is asked of this type
}

var (
	tString = &ty{kind: kString, name: "text"}
	tInt    = &ty{kind: kInt, name: "an integer"}
	tNumber = &ty{kind: kNumber, name: "a number"}
	tBool   = &ty{kind: kBool, name: "a boolean"}
	tAny    = &ty{kind: kAny, name: "a value of mixed kinds"}

	tMetadata = &ty{kind: kString, name: "metadata (JSON text)", hint: `read a key with {{meta "key"}}`}
	tToolCall = &ty{kind: kObject, name: "a tool call", fields: map[string]*ty{
		"id": tString, "name": tString, "arguments": tString, "result": tString}}
	tToolCalls = &ty{kind: kList, name: "a list of tool calls", elem: tToolCall}
	tPassage   = &ty{kind: kObject, name: "a context passage", fields: map[string]*ty{"id": tString, "text": tString}}
	tTurn      = &ty{kind: kObject, name: "a conversation turn", fields: map[string]*ty{
		"role": tString, "content": tString, "name": tString, "tool_call_id": tString, "tool_calls": tToolCalls}}
	tRun = &ty{kind: kObject, name: "the run", fields: map[string]*ty{
		"input": tString, "output": tString, "expected": tString, "purpose": tString, "agent": tString,
		"metadata":     tMetadata,
		"context":      {kind: kList, name: "a list of context passages", elem: tPassage},
		"conversation": {kind: kList, name: "a list of conversation turns", elem: tTurn},
		"tool_calls":   tToolCalls,
	}}
)

// funcs are the functions a template may call, with how each is checked (exec.go runs
// them). text/template's other builtins (call, html, js, urlquery, print, println, slice)
// are refused by name.
var funcs = map[string]func(args []*ty) (*ty, error){
	"json": arity(1, func([]*ty) (*ty, error) { return tString, nil }),
	"meta": func(args []*ty) (*ty, error) {
		if len(args) == 0 {
			return nil, errors.New(`meta takes a key: {{meta "team"}}, or a path: {{meta "customer" "tier"}}`)
		}
		return tString, want(args, "meta's keys", kString)
	},
	"lower": arity(1, strFunc("lower")),
	"upper": arity(1, strFunc("upper")),
	"trim":  arity(1, strFunc("trim")),
	"printf": func(args []*ty) (*ty, error) {
		if len(args) == 0 || args[0].kind != kString {
			return nil, errors.New(`printf takes a format first: {{printf "%.200s" .output}}`)
		}
		return tString, nil
	},
	"len": arity(1, func(args []*ty) (*ty, error) {
		if k := args[0].kind; k != kList && k != kString {
			return nil, fmt.Errorf("len of %s: want a list or text", args[0].name)
		}
		return tInt, nil
	}),
	"index": arity(2, func(args []*ty) (*ty, error) {
		if args[0].kind != kList || args[1].kind != kInt {
			return nil, fmt.Errorf("index of %s by %s: want a list and an integer, e.g. {{index .context 0}}", args[0].name, args[1].name)
		}
		return args[0].elem, nil
	}),
	"not": arity(1, func([]*ty) (*ty, error) { return tBool, nil }),
	"and": andOr,
	"or":  andOr,
	"eq":  compare(2, -1, "eq", kString, kInt, kNumber, kBool),
	"ne":  compare(2, 2, "ne", kString, kInt, kNumber, kBool),
	"lt":  compare(2, 2, "lt", kInt),
	"le":  compare(2, 2, "le", kInt),
	"gt":  compare(2, 2, "gt", kInt),
	"ge":  compare(2, 2, "ge", kInt),
}

func arity(n int, f func([]*ty) (*ty, error)) func([]*ty) (*ty, error) {
	return func(args []*ty) (*ty, error) {
		if len(args) != n {
			return nil, fmt.Errorf("takes %d argument%s, got %d", n, plural(n), len(args))
		}
		return f(args)
	}
}

func strFunc(name string) func([]*ty) (*ty, error) {
	return func(args []*ty) (*ty, error) { return tString, want(args, name+"'s argument", kString) }
}

func andOr(args []*ty) (*ty, error) {
	if len(args) == 0 {
		return nil, errors.New("takes at least 1 argument")
	}
	for _, a := range args[1:] {
		if a != args[0] {
			return tAny, nil
		}
	}
	return args[0], nil
}

func compare(minArgs, maxArgs int, name string, kinds ...kind) func([]*ty) (*ty, error) {
	return func(args []*ty) (*ty, error) {
		if len(args) < minArgs || maxArgs > 0 && len(args) > maxArgs {
			return nil, fmt.Errorf("%s compares 2 values, got %d", name, len(args))
		}
		for _, a := range args {
			if !slices.Contains(kinds, a.kind) {
				return nil, fmt.Errorf("%s cannot compare %s; eq and ne compare text, numbers or booleans, lt, le, gt and ge integers, e.g. {{if eq .role \"user\"}} or {{if gt (len .context) 0}}", name, a.name)
			}
			if a.kind != args[0].kind {
				return nil, fmt.Errorf("%s compares values of one kind, got %s and %s", name, args[0].name, a.name)
			}
		}
		return tBool, nil
	}
}

func want(args []*ty, what string, k kind) error {
	for _, a := range args {
		if a.kind != k {
			return fmt.Errorf("%s: want text, got %s", what, a.name)
		}
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func funcNames() string {
	names := make([]string, 0, len(funcs))
	for n := range funcs {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// parseTemplate parses src with Go's text/template parser and checks it: every field
// exists on the value it is asked of, every function is one of funcs and gets the kinds
// it takes, a range goes over a list, a list or an item is printed through json, and
// there is one template ({{define}}, {{block}} and {{template}} are not available). An
// error names the line and what to fix.
//
// exec.go runs the tree. text/template's own executor is not used: it finds fields and
// methods by reflection, which keeps every exported method of the program in a WASM
// build (2 MiB more for the built-ins), and it cannot count the work it does.
func parseTemplate(src string) (*parse.Tree, error) {
	tree := parse.New(Name)
	tree.Mode = parse.SkipFuncCheck // unknown functions get the checker's message
	set := map[string]*parse.Tree{}
	if _, err := tree.Parse(src, "", "", set); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "template: "))
	}
	if len(set) > 1 {
		return nil, errors.New("{{define}} and {{block}} are not available in a rubric template; write one template")
	}
	if tree.Root == nil {
		return nil, errors.New("the template is empty")
	}
	c := &checker{tree: tree}
	c.push("$", tRun)
	if err := c.list(tree.Root, tRun); err != nil {
		return nil, err
	}
	return tree, nil
}

// checker walks a parsed template with the type of dot and of each variable.
type checker struct {
	tree *parse.Tree
	vars []variable
}

type variable struct {
	name string
	t    *ty
}

func (c *checker) push(name string, t *ty) { c.vars = append(c.vars, variable{name, t}) }

func (c *checker) lookup(name string) *ty {
	for i := len(c.vars) - 1; i >= 0; i-- {
		if c.vars[i].name == name {
			return c.vars[i].t
		}
	}
	return nil
}

// fail is an error at node n: "rubric:LINE:COL: problem".
func (c *checker) fail(n parse.Node, format string, args ...any) error {
	loc, _ := c.tree.ErrorContext(n)
	return fmt.Errorf("%s: %s", loc, fmt.Sprintf(format, args...))
}

func (c *checker) list(l *parse.ListNode, dot *ty) error {
	if l == nil {
		return nil
	}
	for _, n := range l.Nodes {
		if err := c.node(n, dot); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) node(n parse.Node, dot *ty) error {
	switch n := n.(type) {
	case *parse.TextNode, *parse.CommentNode, *parse.BreakNode, *parse.ContinueNode:
		return nil
	case *parse.ActionNode:
		t, err := c.pipe(n.Pipe, dot, true)
		if err == nil && len(n.Pipe.Decl) == 0 && (t.kind == kList || t.kind == kObject) {
			return c.fail(n, "%s is not text; print it with json, e.g. {{json .context}}", t.name)
		}
		return err
	case *parse.IfNode:
		return c.branch(&n.BranchNode, dot, false)
	case *parse.WithNode:
		return c.branch(&n.BranchNode, dot, true)
	case *parse.RangeNode:
		return c.rangeNode(n, dot)
	case *parse.TemplateNode:
		return c.fail(n, "{{template}} is not available in a rubric template; write one template")
	}
	return c.fail(n, "%s is not available in a rubric template", n)
}

// branch checks if and with: with's body sees the pipeline's value as dot. Variables
// declared in the pipeline are seen by both lists, as text/template scopes them.
func (c *checker) branch(b *parse.BranchNode, dot *ty, with bool) error {
	mark := len(c.vars)
	defer func() { c.vars = c.vars[:mark] }()
	t, err := c.pipe(b.Pipe, dot, true)
	if err != nil {
		return err
	}
	body := dot
	if with {
		body = t
	}
	if err := c.list(b.List, body); err != nil {
		return err
	}
	return c.list(b.ElseList, dot)
}

func (c *checker) rangeNode(r *parse.RangeNode, dot *ty) error {
	mark := len(c.vars)
	defer func() { c.vars = c.vars[:mark] }()
	t, err := c.pipe(r.Pipe, dot, false)
	if err != nil {
		return err
	}
	if t.kind != kList {
		return c.fail(r, "range over %s: a range goes over a list (.context, .conversation, .tool_calls)", t.name)
	}
	switch len(r.Pipe.Decl) {
	case 1:
		c.push(r.Pipe.Decl[0].Ident[0], t.elem)
	case 2:
		c.push(r.Pipe.Decl[0].Ident[0], tInt)
		c.push(r.Pipe.Decl[1].Ident[0], t.elem)
	}
	if err := c.list(r.List, t.elem); err != nil {
		return err
	}
	return c.list(r.ElseList, dot)
}

// pipe types a pipeline; declare says whether its variables take its value (a range's
// take the element, which its caller handles).
func (c *checker) pipe(p *parse.PipeNode, dot *ty, declare bool) (*ty, error) {
	var t *ty
	for i, cmd := range p.Cmds {
		var piped *ty
		if i > 0 {
			piped = t
		}
		var err error
		if t, err = c.command(cmd, dot, piped); err != nil {
			return nil, err
		}
	}
	if p.IsAssign {
		for _, v := range p.Decl {
			if prev := c.lookup(v.Ident[0]); prev != nil && prev != t {
				return nil, c.fail(v, "%s holds %s; it cannot be given %s", v.Ident[0], prev.name, t.name)
			}
		}
	} else if declare {
		for _, v := range p.Decl {
			c.push(v.Ident[0], t)
		}
	}
	return t, nil
}

func (c *checker) command(cmd *parse.CommandNode, dot, piped *ty) (*ty, error) {
	if id, ok := cmd.Args[0].(*parse.IdentifierNode); ok {
		check, ok := funcs[id.Ident]
		if !ok {
			return nil, c.fail(id, "function %q is not available in a rubric template (available: %s)", id.Ident, funcNames())
		}
		args := make([]*ty, 0, len(cmd.Args))
		for _, a := range cmd.Args[1:] {
			t, err := c.operand(a, dot)
			if err != nil {
				return nil, err
			}
			args = append(args, t)
		}
		if piped != nil {
			args = append(args, piped)
		}
		t, err := check(args)
		if err != nil {
			return nil, c.fail(id, "%s: %v", id.Ident, err)
		}
		return t, nil
	}
	if len(cmd.Args) > 1 || piped != nil {
		return nil, c.fail(cmd, "%s is not a function and takes no arguments", cmd.Args[0])
	}
	return c.operand(cmd.Args[0], dot)
}

// operand types one value in a command.
func (c *checker) operand(n parse.Node, dot *ty) (*ty, error) {
	switch n := n.(type) {
	case *parse.DotNode:
		return dot, nil
	case *parse.FieldNode:
		return c.fields(n, dot, n.Ident)
	case *parse.VariableNode:
		t := c.lookup(n.Ident[0])
		if t == nil { // the parser refuses undefined variables; this is a safety net
			return nil, c.fail(n, "undefined variable %s", n.Ident[0])
		}
		return c.fields(n, t, n.Ident[1:])
	case *parse.ChainNode:
		t, err := c.operand(n.Node, dot)
		if err != nil {
			return nil, err
		}
		return c.fields(n, t, n.Field)
	case *parse.PipeNode:
		if len(n.Decl) > 0 {
			return nil, c.fail(n, "declare variables in an action, not inside parentheses")
		}
		return c.pipe(n, dot, false)
	case *parse.StringNode:
		return tString, nil
	case *parse.NumberNode:
		if n.IsInt {
			return tInt, nil
		}
		if n.IsFloat {
			return tNumber, nil
		}
		return nil, c.fail(n, "%s: write a decimal number", n.Text)
	case *parse.BoolNode:
		return tBool, nil
	case *parse.IdentifierNode:
		return nil, c.fail(n, "function %s needs parentheses to be an argument: (%s ...)", n.Ident, n.Ident)
	}
	return nil, c.fail(n, "%s is not available in a rubric template", n)
}

// fields follows a chain of field names from t.
func (c *checker) fields(n parse.Node, t *ty, chain []string) (*ty, error) {
	for _, f := range chain {
		if t.kind != kObject {
			msg := fmt.Sprintf("field %q of %s: it has no fields", f, t.name)
			if t.hint != "" {
				msg += "; " + t.hint
			}
			return nil, c.fail(n, "%s", msg)
		}
		next, ok := t.fields[f]
		if !ok {
			known := make([]string, 0, len(t.fields))
			for k := range t.fields {
				known = append(known, k)
			}
			slices.Sort(known)
			return nil, c.fail(n, "unknown field %q of %s (known: %s)", f, t.name, strings.Join(known, ", "))
		}
		t = next
	}
	return t, nil
}
