package doctest

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// A page of scorer examples, as docs/SCORERS.md writes them: indented (or fenced) shell
// blocks of `scorekit schema NAME` and `echo '<run>' | scorekit score ... -`, each example
// followed by a sentence that says what it gives (`score 0.83`, reason `...`, flag `...`,
// `integrity` 0), sometimes with an indented block of the result as a person reads it
// ("score 0.42" and "reason: ..." on lines of their own). The Markdown is parsed with
// goldmark and the shell with mvdan.cc/sh, so line wraps, code spans across lines and
// quoting do not matter.

// scorersPage is what a page of scorer examples holds.
type scorersPage struct {
	// Commands are the page's scorekit commands, in order.
	Commands []pageCommand
	// Files are the files the page shows by name ("with this config in `rubric.json`"
	// followed by a block), for the commands that pass them.
	Files map[string]string
}

// pageCommand is one scorekit command of the page.
type pageCommand struct {
	// Line is where the command starts in the page.
	Line int
	// Args follow "scorekit".
	Args []string
	// Stdin is what the command's echo writes into it, newline included; "" when the
	// command reads nothing.
	Stdin string
	// Result is what the page says a piped scorekit score gives; nil for other commands.
	Result *statedResult
}

// String is the command as the page writes it, without the run, for messages.
func (c pageCommand) String() string {
	s := "scorekit " + strings.Join(c.Args, " ")
	if c.Stdin != "" {
		s = "echo '...' | " + s
	}
	return s
}

// statedResult is what the page says an example gives. A field the page does not state is
// left at its zero value and not checked.
type statedResult struct {
	// Status is "scored" when a score is stated, or a `skipped` or `failed` code span.
	Status string
	// Score is the stated score.
	Score *statedNumber
	// Reason is the stated reason, white space collapsed.
	Reason string
	// Passed is "not passed" (false) or "passes", "passed" (true).
	Passed *bool
	// Flags are the code spans after "flag" or "flags".
	Flags []string
	// Dimensions are `name` N pairs of the sentence and a result block's
	// "dimensions {...}".
	Dimensions map[string]statedNumber
	// JudgeAnswer is the judge's answer the page quotes ("when the judge answers `{...}`").
	JudgeAnswer string
}

func (r *statedResult) says() bool {
	return r.Status != "" || r.Score != nil || r.Reason != "" || r.Passed != nil || len(r.Flags) > 0 || len(r.Dimensions) > 0
}

// statedNumber is a number as the page writes it: a score of 0.71 is any within 0.005 of
// it. The page rounds to two decimals and drops trailing zeros, so a number written with
// fewer (1, 0.5) is still held to two: "score 1" is not 0.996.
type statedNumber struct {
	Value    float64
	Decimals int
}

func (n statedNumber) String() string { return strconv.FormatFloat(n.Value, 'f', n.Decimals, 64) }

// Matches reports whether v, as the page rounds, is n.
func (n statedNumber) Matches(v float64) bool {
	return math.Abs(v-n.Value) <= 0.5*math.Pow10(-max(n.Decimals, 2))+1e-12
}

func parseStatedNumber(s string) (statedNumber, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return statedNumber{}, err
	}
	n := statedNumber{Value: v}
	if _, frac, ok := strings.Cut(s, "."); ok {
		n.Decimals = len(frac)
	}
	return n, nil
}

// readScorersPage reads a page of scorer examples. It is an error for a piped example to
// state no result, for a result block to be unreadable, or for a command block to hold
// anything but scorekit commands and echo pipelines into them.
func readScorersPage(doc string) (scorersPage, error) {
	src := []byte(doc)
	root := goldmark.New().Parser().Parse(text.NewReader(src))
	page := scorersPage{Files: map[string]string{}}
	var errs []error
	// open is the piped example whose result is being read: the first paragraph after it,
	// then the result blocks right after that paragraph.
	open, sawSentence := -1, false
	closeOpen := func() {
		if open >= 0 && !page.Commands[open].Result.says() {
			c := page.Commands[open]
			errs = append(errs, fmt.Errorf("line %d: %s: the page does not say what it gives; follow it with a sentence such as: gives `score 0.5`, reason `...`", c.Line, c))
		}
		open, sawSentence = -1, false
	}
	var prev []token // the last paragraph, for the name of the file a block shows
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		switch n := n.(type) {
		case *ast.Paragraph:
			toks := inlineTokens(n, src)
			if open >= 0 && !sawSentence {
				if err := readSentence(firstSentence(toks), page.Commands[open].Result); err != nil {
					errs = append(errs, fmt.Errorf("line %d: %w", lineOf(n, src), err))
				}
				sawSentence = true
			} else {
				closeOpen()
			}
			prev = toks
		case *ast.CodeBlock, *ast.FencedCodeBlock:
			// Indented blocks separated only by blank lines are one block to Markdown but
			// several to a reader (a config file, then the command that reads it).
			for _, ch := range chunks(blockText(n, src), lineOf(n, src)) {
				switch {
				case open >= 0 && sawSentence && isResultBlock(ch.body):
					if err := readResultBlock(ch.body, ch.line, page.Commands[open].Result); err != nil {
						errs = append(errs, err)
					}
				case mentionsScorekit(ch.body):
					closeOpen()
					cmds, err := parseCommands(ch.body, ch.line)
					if err != nil {
						errs = append(errs, err)
					}
					for _, c := range cmds {
						page.Commands = append(page.Commands, c)
						if c.Result != nil {
							closeOpen()
							open = len(page.Commands) - 1
						}
					}
				default:
					closeOpen()
					if len(prev) > 0 && prev[len(prev)-1].code && strings.Contains(prev[len(prev)-1].s, ".") {
						page.Files[prev[len(prev)-1].s] = ch.body
					}
				}
				prev = nil
			}
		default:
			closeOpen()
			prev = nil
		}
	}
	closeOpen()
	return page, errors.Join(errs...)
}

var scorekitWord = regexp.MustCompile(`(^|[\s|/])scorekit\s`)

func mentionsScorekit(body string) bool { return scorekitWord.MatchString(body) }

// lineOf returns the page line where block n starts.
func lineOf(n ast.Node, src []byte) int {
	lines := n.Lines()
	if lines.Len() == 0 {
		return 0
	}
	return strings.Count(string(src[:lines.At(0).Start]), "\n") + 1
}

// chunk is a run of a code block's lines between blank lines.
type chunk struct {
	body string
	line int
}

func chunks(body string, line int) []chunk {
	var out []chunk
	var cur []string
	start := line
	for i, l := range strings.Split(body, "\n") {
		if strings.TrimSpace(l) == "" {
			if len(cur) > 0 {
				out = append(out, chunk{strings.Join(cur, "\n") + "\n", start})
			}
			cur, start = nil, line+i+1
			continue
		}
		cur = append(cur, l)
	}
	if len(cur) > 0 {
		out = append(out, chunk{strings.Join(cur, "\n") + "\n", start})
	}
	return out
}

func blockText(n ast.Node, src []byte) string {
	var b strings.Builder
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		b.Write(seg.Value(src))
	}
	return b.String()
}

// token is a run of a paragraph's text, or one code span.
type token struct {
	code bool
	s    string
}

// inlineTokens flattens a paragraph into text and code spans; a line break is a space,
// emphasis and links are their text.
func inlineTokens(p ast.Node, src []byte) []token {
	var out []token
	add := func(code bool, s string) {
		if !code && len(out) > 0 && !out[len(out)-1].code {
			out[len(out)-1].s += s
			return
		}
		out = append(out, token{code, s})
	}
	var walk func(ast.Node)
	walk = func(n ast.Node) {
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.CodeSpan:
				var b strings.Builder
				for t := c.FirstChild(); t != nil; t = t.NextSibling() {
					if t, ok := t.(*ast.Text); ok {
						b.Write(t.Value(src))
					}
				}
				add(true, strings.ReplaceAll(b.String(), "\n", " "))
			case *ast.Text:
				s := string(c.Value(src))
				if c.SoftLineBreak() || c.HardLineBreak() {
					s += " "
				}
				add(false, s)
			case *ast.String:
				add(false, string(c.Value))
			default:
				walk(c)
			}
		}
	}
	walk(p)
	return out
}

// firstSentence returns the tokens up to the end of the paragraph's first sentence: a
// full stop in text (not in a code span, not in "e.g.") that ends the paragraph or is
// followed by a space.
func firstSentence(toks []token) []token {
	for i, t := range toks {
		if t.code {
			continue
		}
		for j := 0; j < len(t.s); j++ {
			if t.s[j] != '.' {
				continue
			}
			last := j+1 == len(t.s) && i+1 == len(toks)
			if !last && (j+1 == len(t.s) || t.s[j+1] != ' ') {
				continue
			}
			if strings.HasSuffix(t.s[:j], "e.g") || strings.HasSuffix(t.s[:j], "i.e") {
				continue
			}
			out := append([]token(nil), toks[:i]...)
			return append(out, token{s: t.s[:j+1]})
		}
	}
	return toks
}

var (
	statedScore = regexp.MustCompile(`^score (-?[0-9]+(?:\.[0-9]+)?)$`)
	leadNumber  = regexp.MustCompile(`^\s+(-?[0-9]+(?:\.[0-9]+)?)\b`)
	identifier  = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	notPassed   = regexp.MustCompile(`\bnot passed\b`)
	passed      = regexp.MustCompile(`\b(passes|passed)\b`)
)

// endsWord reports whether text s ends with the word w (and spaces).
func endsWord(s, w string) bool {
	s = strings.TrimRight(s, " ")
	return s == w || strings.HasSuffix(s, " "+w) || strings.HasSuffix(s, "("+w)
}

// readSentence reads what the sentence after an example states into r.
func readSentence(toks []token, r *statedResult) error {
	var words strings.Builder
	for i, t := range toks {
		before := ""
		if i > 0 && !toks[i-1].code {
			before = toks[i-1].s
		}
		if !t.code {
			words.WriteString(t.s)
			continue
		}
		switch m := statedScore.FindStringSubmatch(t.s); {
		case m != nil:
			n, err := parseStatedNumber(m[1])
			if err != nil {
				return err
			}
			r.Score, r.Status = &n, "scored"
		case t.s == "skipped" || t.s == "failed":
			r.Status = t.s
		case endsWord(before, "reason"):
			r.Reason = collapse(t.s)
		case strings.HasSuffix(strings.TrimRight(before, " "), "the judge answers"):
			r.JudgeAnswer = t.s
		case endsWord(before, "flag") || endsWord(before, "flags"):
			r.Flags = append(r.Flags, t.s)
			for j := i + 2; j < len(toks) && toks[j].code; j += 2 {
				if sep := strings.TrimSpace(toks[j-1].s); sep != "," && sep != "and" && sep != ", and" {
					break
				}
				r.Flags = append(r.Flags, toks[j].s)
			}
		case identifier.MatchString(t.s) && i+1 < len(toks) && !toks[i+1].code && leadNumber.MatchString(toks[i+1].s):
			if slices.Contains(r.Flags, t.s) {
				break
			}
			n, err := parseStatedNumber(leadNumber.FindStringSubmatch(toks[i+1].s)[1])
			if err != nil {
				return err
			}
			if r.Dimensions == nil {
				r.Dimensions = map[string]statedNumber{}
			}
			r.Dimensions[t.s] = n
		}
	}
	w := words.String()
	if strings.Contains(w, "that reasoning as the reason") && r.JudgeAnswer != "" {
		// "when the judge answers `{"reasoning": "...", ...}`, `score 1` with that
		// reasoning as the reason"
		var a struct{ Reasoning string }
		if err := json.Unmarshal([]byte(r.JudgeAnswer), &a); err != nil {
			return fmt.Errorf("the judge's answer %s is not JSON: %w", r.JudgeAnswer, err)
		}
		if a.Reasoning == "" {
			return fmt.Errorf("the reason is the judge's reasoning, but the judge's answer %s has none", r.JudgeAnswer)
		}
		r.Reason = collapse(a.Reasoning)
	}
	switch {
	case notPassed.MatchString(w):
		f := false
		r.Passed = &f
	case passed.MatchString(w):
		t := true
		r.Passed = &t
	}
	return nil
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

var resultEntry = regexp.MustCompile(`^(score|reason:)`)

// isResultBlock reports whether a block is a result as a person reads it: its first line
// starts with "score" or "reason:".
func isResultBlock(body string) bool { return resultEntry.MatchString(body) }

var scoreEntry = regexp.MustCompile(`^score (-?[0-9]+(?:\.[0-9]+)?)(?:, dimensions (\{.*\}))?$`)

// readResultBlock reads a result block whose first line is page line line into r:
// entries start at column 0 ("score N", optionally ", dimensions {JSON}"; "reason: TEXT")
// and go on over indented lines.
func readResultBlock(body string, line int, r *statedResult) error {
	type entry struct {
		text string
		line int
	}
	var entries []entry
	for i, l := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		if len(entries) == 0 || l != "" && l[0] != ' ' && l[0] != '\t' {
			entries = append(entries, entry{l, line + i})
			continue
		}
		entries[len(entries)-1].text += " " + l
	}
	for _, e := range entries {
		text := collapse(e.text)
		if reason, ok := strings.CutPrefix(text, "reason: "); ok {
			r.Reason = reason
			continue
		}
		m := scoreEntry.FindStringSubmatch(text)
		if m == nil {
			return fmt.Errorf("line %d: result block line %q: want \"score N\", \"score N, dimensions {JSON}\" or \"reason: TEXT\"", e.line, text)
		}
		n, err := parseStatedNumber(m[1])
		if err != nil {
			return fmt.Errorf("line %d: %w", e.line, err)
		}
		r.Score, r.Status = &n, "scored"
		if m[2] != "" {
			dims, err := parseStatedDimensions(m[2])
			if err != nil {
				return fmt.Errorf("line %d: result block dimensions %s: %w", e.line, m[2], err)
			}
			if r.Dimensions == nil {
				r.Dimensions = map[string]statedNumber{}
			}
			maps.Copy(r.Dimensions, dims)
		}
	}
	return nil
}

// parseStatedDimensions reads {"name": N, ...}, keeping each number as written.
func parseStatedDimensions(s string) (map[string]statedNumber, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var raw map[string]json.Number
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	out := map[string]statedNumber{}
	for k, v := range raw {
		n, err := parseStatedNumber(v.String())
		if err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, nil
}

// parseCommands reads a shell block whose first line is page line line: each statement is
// a scorekit command, or echo 'TEXT' piped into one.
func parseCommands(body string, line int) ([]pageCommand, error) {
	f, err := syntax.NewParser().Parse(strings.NewReader(body), "")
	if err != nil {
		return nil, fmt.Errorf("line %d: the shell block does not parse: %w", line, err)
	}
	var out []pageCommand
	var errs []error
	for _, st := range f.Stmts {
		at := line + int(st.Pos().Line()) - 1
		c := pageCommand{Line: at}
		call := st.Cmd
		if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && b.Op == syntax.Pipe {
			echo, err := callWords(b.X.Cmd)
			if err != nil || len(echo) != 2 || echo[0] != "echo" {
				errs = append(errs, fmt.Errorf("line %d: a pipe into scorekit must start with echo 'TEXT' (one argument)", at))
				continue
			}
			c.Stdin, call = echo[1]+"\n", b.Y.Cmd
		}
		words, err := callWords(call)
		switch {
		case err == nil && len(st.Redirs) > 0:
			err = errors.New("a redirection")
		case err == nil && (len(words) < 2 || words[0] != "scorekit"):
			err = fmt.Errorf("%q is not a scorekit command", strings.Join(words, " "))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: only scorekit commands and echo 'TEXT' | scorekit ... are run from this page; this has %w", at, err))
			continue
		}
		c.Args = words[1:]
		if c.Args[0] == "score" {
			if c.Stdin == "" {
				errs = append(errs, fmt.Errorf("line %d: a scorekit score example reads its run from echo: echo '<run>' | scorekit score ... -", at))
				continue
			}
			c.Result = &statedResult{}
		}
		out = append(out, c)
	}
	return out, errors.Join(errs...)
}

// callWords returns a simple command's words with their quotes removed (as the shell
// removes them); expansions and assignments are refused, so a word is what it says.
func callWords(cmd syntax.Command) ([]string, error) {
	call, ok := cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 {
		return nil, errors.New("a command that is not simple (a list, a loop, a subshell...)")
	}
	var out []string
	for _, w := range call.Args {
		var bad syntax.Node
		syntax.Walk(w, func(n syntax.Node) bool {
			switch n.(type) {
			case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp, *syntax.ProcSubst, *syntax.ExtGlob, *syntax.BraceExp:
				bad = n
			}
			return bad == nil
		})
		if bad != nil {
			return nil, fmt.Errorf("an expansion (%T), which a reader would have to guess", bad)
		}
		s, err := expand.Literal(nil, w)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
