package rubric

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/template/parse"

	"github.com/scorekit/scorekit/sdk"
)

// The executor runs a checked template tree with text/template's semantics for what the
// checker lets through: fields of the run's view, variables, if/with/range/else, break and
// continue, pipelines, and funcs. Its values are string, int, float64, bool, []any (a list)
// and map[string]any (an item). It counts every node it runs, every byte its functions
// handle and every byte it writes, and stops at the limits with a *budgetError.

// view is what a template sees of a run: JSON's field names, every field present (empty
// when the run has none), lists of items, and metadata as JSON text.
func view(run *sdk.Run) map[string]any {
	context := make([]any, len(run.Context))
	for i, p := range run.Context {
		context[i] = map[string]any{"id": p.ID, "text": p.Text}
	}
	conversation := make([]any, len(run.Conversation))
	for i, t := range run.Conversation {
		conversation[i] = map[string]any{"role": t.Role, "content": t.Content, "name": t.Name,
			"tool_call_id": t.ToolCallID, "tool_calls": toolCalls(t.ToolCalls)}
	}
	metadata := ""
	if len(run.Metadata) > 0 {
		if b, err := json.Marshal(run.Metadata); err == nil {
			metadata = string(b)
		}
	}
	return map[string]any{
		"input": run.Input, "output": run.Output, "expected": run.Expected, "purpose": run.Purpose(),
		"agent": run.Agent, "metadata": metadata, "context": context, "conversation": conversation,
		"tool_calls": toolCalls(run.ToolCalls),
	}
}

func toolCalls(calls []sdk.ToolCall) []any {
	out := make([]any, len(calls))
	for i, c := range calls {
		out[i] = map[string]any{"id": c.ID, "name": c.Name, "arguments": c.Arguments, "result": c.Result}
	}
	return out
}

// budgetError is a render stopped for doing too much; the run is failed with
// limit_exceeded.
type budgetError struct{ msg string }

func (e *budgetError) Error() string { return e.msg }

// render runs the template on run within the limits.
func (s *scorer) render(run *sdk.Run) (string, error) {
	root := view(run)
	x := &executor{tree: s.tmpl, run: run}
	x.vars = append(x.vars, binding{"$", root})
	if err := x.list(s.tmpl.Root, root); err != nil {
		if errors.Is(err, errBreak) || errors.Is(err, errContinue) {
			return "", errors.New("break or continue outside a range")
		}
		return "", err
	}
	return x.out.String(), nil
}

type binding struct {
	name string
	v    any
}

type executor struct {
	tree   *parse.Tree
	run    *sdk.Run
	vars   []binding
	out    strings.Builder
	visits int
	work   int
}

// errBreak and errContinue carry {{break}} and {{continue}} up to their range.
var (
	errBreak    = errors.New("break")
	errContinue = errors.New("continue")
)

// fail is an error at node n, located as text/template locates its own.
func (x *executor) fail(n parse.Node, format string, args ...any) error {
	loc, ctx := x.tree.ErrorContext(n)
	return fmt.Errorf("%s: at <%s>: %s", loc, ctx, fmt.Sprintf(format, args...))
}

func (x *executor) visit() error {
	x.visits++
	if x.visits > maxNodeVisits {
		return &budgetError{fmt.Sprintf("the template ran over %d steps on this run; make it do less per list item", maxNodeVisits)}
	}
	return nil
}

// charge counts n bytes of function work.
func (x *executor) charge(n int) error {
	x.work += n
	if x.work > maxFuncBytes {
		return &budgetError{fmt.Sprintf("the template's functions handled over %d MiB for this run; make them do less (e.g. {{printf \"%%.2000s\" .output}})", maxFuncBytes>>20)}
	}
	return nil
}

func (x *executor) write(s string) error {
	if x.out.Len()+len(s) > maxPromptBytes {
		return &budgetError{fmt.Sprintf("the prompt for this run is over %d MiB; show the judge less of the run (e.g. {{printf \"%%.2000s\" .output}})", maxPromptBytes>>20)}
	}
	x.out.WriteString(s)
	return nil
}

func (x *executor) list(l *parse.ListNode, dot any) error {
	if l == nil {
		return nil
	}
	for _, n := range l.Nodes {
		if err := x.node(n, dot); err != nil {
			return err
		}
	}
	return nil
}

func (x *executor) node(n parse.Node, dot any) error {
	if err := x.visit(); err != nil {
		return err
	}
	switch n := n.(type) {
	case *parse.TextNode:
		return x.write(string(n.Text))
	case *parse.CommentNode:
		return nil
	case *parse.BreakNode:
		return errBreak
	case *parse.ContinueNode:
		return errContinue
	case *parse.ActionNode:
		v, err := x.pipe(n.Pipe, dot)
		if err != nil || len(n.Pipe.Decl) > 0 {
			return err
		}
		text, err := x.text(v)
		if err != nil {
			return err
		}
		return x.write(text)
	case *parse.IfNode, *parse.WithNode:
		var b *parse.BranchNode
		if i, ok := n.(*parse.IfNode); ok {
			b = &i.BranchNode
		} else {
			b = &n.(*parse.WithNode).BranchNode
		}
		mark := len(x.vars)
		defer func() { x.vars = x.vars[:mark] }()
		v, err := x.pipe(b.Pipe, dot)
		if err != nil {
			return err
		}
		if !truth(v) {
			return x.list(b.ElseList, dot)
		}
		if _, with := n.(*parse.WithNode); with {
			dot = v
		}
		return x.list(b.List, dot)
	case *parse.RangeNode:
		return x.rangeNode(n, dot)
	}
	return x.fail(n, "%s is not available in a rubric template", n) // the checker refused it already
}

func (x *executor) rangeNode(r *parse.RangeNode, dot any) error {
	mark := len(x.vars)
	defer func() { x.vars = x.vars[:mark] }()
	v, err := x.eval(r.Pipe, dot)
	if err != nil {
		return err
	}
	items, _ := v.([]any)
	if len(items) == 0 {
		return x.list(r.ElseList, dot)
	}
	for i, item := range items {
		if err := x.visit(); err != nil { // an iteration is a step, whatever its body
			return err
		}
		x.vars = x.vars[:mark]
		switch len(r.Pipe.Decl) {
		case 1:
			x.vars = append(x.vars, binding{r.Pipe.Decl[0].Ident[0], item})
		case 2:
			x.vars = append(x.vars, binding{r.Pipe.Decl[0].Ident[0], i}, binding{r.Pipe.Decl[1].Ident[0], item})
		}
		err := x.list(r.List, item)
		switch {
		case errors.Is(err, errBreak):
			return nil
		case errors.Is(err, errContinue):
		case err != nil:
			return err
		}
	}
	return nil
}

// pipe evaluates a pipeline and binds its variables to its value.
func (x *executor) pipe(p *parse.PipeNode, dot any) (any, error) {
	v, err := x.eval(p, dot)
	if err != nil {
		return nil, err
	}
	for _, d := range p.Decl {
		if p.IsAssign {
			x.set(d.Ident[0], v)
		} else {
			x.vars = append(x.vars, binding{d.Ident[0], v})
		}
	}
	return v, nil
}

// eval evaluates a pipeline's commands, each one's value the last argument of the next.
func (x *executor) eval(p *parse.PipeNode, dot any) (any, error) {
	var v any
	for i, cmd := range p.Cmds {
		var piped []any
		if i > 0 {
			piped = []any{v}
		}
		var err error
		if v, err = x.command(cmd, dot, piped); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (x *executor) set(name string, v any) {
	for i := len(x.vars) - 1; i >= 0; i-- {
		if x.vars[i].name == name {
			x.vars[i].v = v
			return
		}
	}
}

func (x *executor) lookup(name string) any {
	for i := len(x.vars) - 1; i >= 0; i-- {
		if x.vars[i].name == name {
			return x.vars[i].v
		}
	}
	return nil
}

func (x *executor) command(cmd *parse.CommandNode, dot any, piped []any) (any, error) {
	if err := x.visit(); err != nil {
		return nil, err
	}
	id, ok := cmd.Args[0].(*parse.IdentifierNode)
	if !ok {
		return x.operand(cmd.Args[0], dot)
	}
	args := cmd.Args[1:]
	// and and or evaluate their arguments only as far as they need, as text/template's do.
	if id.Ident == "and" || id.Ident == "or" {
		var v any
		for i := 0; i < len(args)+len(piped); i++ {
			var err error
			if i < len(args) {
				if v, err = x.operand(args[i], dot); err != nil {
					return nil, err
				}
			} else {
				v = piped[0]
			}
			if truth(v) == (id.Ident == "or") {
				return v, nil
			}
		}
		return v, nil
	}
	vals := make([]any, 0, len(args)+len(piped))
	for _, a := range args {
		v, err := x.operand(a, dot)
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
	}
	vals = append(vals, piped...)
	v, err := x.call(id.Ident, vals)
	if err != nil {
		var b *budgetError
		if errors.As(err, &b) {
			return nil, err
		}
		return nil, x.fail(cmd, "%s: %v", id.Ident, err)
	}
	return v, nil
}

func (x *executor) operand(n parse.Node, dot any) (any, error) {
	switch n := n.(type) {
	case *parse.DotNode:
		return dot, nil
	case *parse.FieldNode:
		return field(dot, n.Ident), nil
	case *parse.VariableNode:
		return field(x.lookup(n.Ident[0]), n.Ident[1:]), nil
	case *parse.ChainNode:
		v, err := x.operand(n.Node, dot)
		if err != nil {
			return nil, err
		}
		return field(v, n.Field), nil
	case *parse.PipeNode:
		return x.eval(n, dot)
	case *parse.StringNode:
		return n.Text, nil
	case *parse.NumberNode:
		if n.IsInt {
			return int(n.Int64), nil
		}
		return n.Float64, nil
	case *parse.BoolNode:
		return n.True, nil
	}
	return nil, x.fail(n, "%s is not available in a rubric template", n) // the checker refused it already
}

// field follows names through items; the checker has made sure each one exists.
func field(v any, names []string) any {
	for _, name := range names {
		m, _ := v.(map[string]any)
		v = m[name]
	}
	return v
}

// truth is text/template's: false, 0, "" and an empty list are false.
func truth(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case int:
		return x != 0
	case float64:
		return x != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// text prints a value as text/template does for text, numbers and booleans; a list or an
// item (which only and/or can yield here) as JSON.
func (x *executor) text(v any) (string, error) {
	switch t := v.(type) {
	case string:
		return t, nil
	case int:
		return strconv.Itoa(t), nil
	case float64:
		return fmt.Sprint(t), nil
	case bool:
		return strconv.FormatBool(t), nil
	case nil:
		return "", nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return string(b), x.charge(len(b))
}

// call runs one of funcs on checked arguments.
func (x *executor) call(name string, args []any) (any, error) {
	switch name {
	case "json":
		b, err := json.Marshal(args[0])
		if err != nil {
			return nil, err
		}
		return string(b), x.charge(len(b))
	case "meta":
		return x.meta(args)
	case "lower", "upper", "trim":
		s := args[0].(string)
		if err := x.charge(2 * len(s)); err != nil {
			return nil, err
		}
		switch name {
		case "lower":
			return strings.ToLower(s), nil
		case "upper":
			return strings.ToUpper(s), nil
		}
		return strings.TrimSpace(s), nil
	case "printf":
		if err := x.charge(textBytes(args)); err != nil {
			return nil, err
		}
		out := fmt.Sprintf(args[0].(string), args[1:]...)
		return out, x.charge(len(out))
	case "len":
		switch t := args[0].(type) {
		case string:
			return len(t), nil
		case []any:
			return len(t), nil
		}
		return 0, nil
	case "index":
		list, _ := args[0].([]any)
		i := args[1].(int)
		if i < 0 || i >= len(list) {
			return nil, fmt.Errorf("index %d is out of range: the list has %d items", i, len(list))
		}
		return list[i], nil
	case "not":
		return !truth(args[0]), nil
	case "eq", "ne":
		if err := x.charge(textBytes(args)); err != nil {
			return nil, err
		}
		eq := false
		for _, b := range args[1:] {
			eq = eq || args[0] == b // the checker let through values of one comparable kind
		}
		return eq == (name == "eq"), nil
	case "lt", "le", "gt", "ge":
		a, b := args[0].(int), args[1].(int)
		switch name {
		case "lt":
			return a < b, nil
		case "le":
			return a <= b, nil
		case "gt":
			return a > b, nil
		}
		return a >= b, nil
	}
	return nil, fmt.Errorf("function %q is not available", name) // the checker refused it already
}

// textBytes is the length of the text among args: what a function reads of them.
func textBytes(args []any) int {
	n := 0
	for _, a := range args {
		if s, ok := a.(string); ok {
			n += len(s)
		}
	}
	return n
}

// meta is the run's metadata at a key path: text as it is, other values as JSON, ""
// when absent.
func (x *executor) meta(keys []any) (any, error) {
	var v any = x.run.Metadata
	for _, k := range keys {
		obj, ok := v.(map[string]any)
		if !ok {
			return "", nil
		}
		if v, ok = obj[k.(string)]; !ok {
			return "", nil
		}
	}
	var out string
	switch t := v.(type) {
	case nil:
		return "", nil
	case string:
		out = t
	default:
		b, err := json.Marshal(t)
		if err != nil {
			return "", nil
		}
		out = string(b)
	}
	return out, x.charge(len(out))
}
