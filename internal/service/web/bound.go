package web

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorekit/scorekit/internal/textkit"
)

// A page shows what a person can read of a run and its results, never all of it at any
// size: each part is cut to a bound below, and says what was cut, with a link to the
// whole run as JSON through the API (GET /v1/runs/{id}). A run is read as a stream of
// tokens, never decoded into a tree, so a value nested thousands of levels deep costs
// what is shown of it, not its depth times its size (indented in full, a run whose
// metadata held two chains of 9,000 arrays was a page of 324 MB). No page is buffered
// past maxPageBytes whatever it holds (render).
const (
	maxTextBytes    = 32 << 10 // a run's input or output
	maxPassageBytes = 8 << 10  // one context passage
	maxPassages     = 50       // context passages shown
	maxJSONDepth    = 8        // levels of JSON shown; deeper values show as […] or {…}
	maxJSONItems    = 100      // items of one array or object shown
	maxJSONString   = 2 << 10  // one string within JSON
	maxJSONBytes    = 64 << 10 // the rest of a run (metadata, tool calls, ...) as JSON
	maxResultText   = 4 << 10  // a result's reason or error message
	maxListed       = 50       // dimensions, flags or adjustments of one result
	maxRunResults   = 100      // results on a run's page, the newest
	maxPageBytes    = 4 << 20  // one page
)

// shown is a part of a run as a page shows it: its text within a bound, and what was cut
// ("" when nothing was).
type shown struct {
	Text string
	Cut  string
}

// runShown is a stored run as a page shows it.
type runShown struct {
	// ID is the run's id, for the link to the whole run.
	ID            string
	Input, Output shown
	Context       []shown
	// ContextCut says how many passages are not shown.
	ContextCut string
	// Rest is the run's other fields (metadata, tool calls, ...) as indented JSON.
	Rest shown
	// Broken says where the run's JSON stopped decoding: what comes before is shown.
	Broken string
}

// Cut reports whether any part of the run is not shown whole.
func (r runShown) Cut() bool {
	if r.Input.Cut != "" || r.Output.Cut != "" || r.ContextCut != "" || r.Rest.Cut != "" || r.Broken != "" {
		return true
	}
	for _, c := range r.Context {
		if c.Cut != "" {
			return true
		}
	}
	return false
}

// showRun reads a stored run's input, output and context as text, and the rest of it as
// indented JSON, each within its bound. A body that stops decoding is shown up to there,
// and Broken says so.
func showRun(id string, raw []byte) runShown {
	r := runShown{ID: id}
	d := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	rest := newPrinter(maxJSONBytes)
	err := func() error {
		if t, err := d.ReadToken(); err != nil {
			return err
		} else if t.Kind() != '{' {
			return fmt.Errorf("it is not a JSON object")
		}
		restItems, restLeft := 0, 0
		for d.PeekKind() != '}' {
			t, err := d.ReadToken()
			if err != nil {
				return err
			}
			switch name := t.String(); name {
			case "id", "agent", "time": // in the page's head
				err = d.SkipValue()
			case "input":
				r.Input, err = textValue(d, maxTextBytes)
			case "output":
				r.Output, err = textValue(d, maxTextBytes)
			case "context":
				err = r.passages(d)
			default:
				if restItems == maxJSONItems || rest.full() {
					restLeft++
					err = d.SkipValue()
					break
				}
				if restItems == 0 {
					rest.b.WriteString("{")
				} else {
					rest.b.WriteString(",")
				}
				restItems++
				rest.b.WriteString("\n  ")
				rest.name(name)
				err = rest.value(d, 1, "  ")
			}
			if err != nil {
				return err
			}
		}
		if restLeft > 0 {
			rest.left(restItems, restLeft, "")
		}
		if restItems > 0 || restLeft > 0 {
			rest.b.WriteString("\n}")
		}
		_, err := d.ReadToken()
		return err
	}()
	if err != nil {
		r.Broken = fmt.Sprintf("the stored run's JSON does not decode past byte %d (%s); what comes before is shown", d.InputOffset(), jsonProblem(err))
	}
	r.Rest = rest.shown()
	return r
}

// passages reads the context: each passage as text, at most maxPassages of them.
func (r *runShown) passages(d *jsontext.Decoder) error {
	if d.PeekKind() != '[' {
		s, err := textValue(d, maxPassageBytes)
		r.Context = append(r.Context, s)
		return err
	}
	if _, err := d.ReadToken(); err != nil {
		return err
	}
	left := 0
	for d.PeekKind() != ']' {
		if len(r.Context) == maxPassages {
			if err := d.SkipValue(); err != nil {
				return err
			}
			left++
			continue
		}
		s, err := passage(d)
		if err != nil {
			return err
		}
		r.Context = append(r.Context, s)
	}
	if left > 0 {
		r.ContextCut = fmt.Sprintf("%s past the first %d not shown", count(left, "passage", "passages"), maxPassages)
	}
	_, err := d.ReadToken()
	return err
}

// passage reads one passage: a string as it is, {id, text} as "[id] text", anything else
// as JSON.
func passage(d *jsontext.Decoder) (shown, error) {
	if d.PeekKind() != '{' {
		return textValue(d, maxPassageBytes)
	}
	v, err := d.ReadValue()
	if err != nil {
		return shown{}, err
	}
	pd := jsontext.NewDecoder(bytes.NewReader(v), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	var id, text string
	hasText, plain := false, true
	pd.ReadToken() // {
	for plain && pd.PeekKind() == '"' {
		nt, err := pd.ReadToken()
		if err != nil {
			break
		}
		name := nt.String() // before the next read voids the token
		t, err := pd.ReadToken()
		switch {
		case err != nil || t.Kind() == '{' || t.Kind() == '[':
			plain = false
		case name == "text" && t.Kind() == '"':
			text, hasText = t.String(), true
		case name == "id" && (t.Kind() == '"' || t.Kind() == '0'):
			id = t.String()
		default:
			plain = false
		}
	}
	if plain && hasText {
		if id != "" {
			text = "[" + id + "] " + text
		}
		return cutText(text, maxPassageBytes), nil
	}
	return textValue(jsontext.NewDecoder(bytes.NewReader(v), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)), maxPassageBytes)
}

// textValue reads a value as text within max bytes: a string as it is, null as nothing,
// anything else as indented JSON.
func textValue(d *jsontext.Decoder, max int) (shown, error) {
	switch d.PeekKind() {
	case '"':
		t, err := d.ReadToken()
		if err != nil {
			return shown{}, err
		}
		return cutText(t.String(), max), nil
	case 'n':
		_, err := d.ReadToken()
		return shown{}, err
	}
	p := newPrinter(max)
	err := p.value(d, 0, "")
	return p.shown(), err
}

// rawText is a run's input or output (JSON) as text within a few KB, for a listing that
// clips it further.
func rawText(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	s, err := textValue(jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)), 4<<10)
	if err != nil && s.Text == "" {
		return cutText(string(raw), 4<<10).Text
	}
	return s.Text
}

// cutText is s within max bytes (cut at a character), and what was cut.
func cutText(s string, max int) shown {
	if len(s) <= max {
		return shown{Text: s}
	}
	return shown{Text: textkit.Prefix(s, max) + "…", Cut: fmt.Sprintf("the first %s of %s are shown", textkit.FormatBytes(int64(max)), textkit.FormatBytes(int64(len(s))))}
}

// cut is a result's text (reason, error message) within max bytes, saying so when cut;
// the template's way to cutText.
func cut(s string, max int) string {
	c := cutText(s, max)
	if c.Cut == "" {
		return s
	}
	return c.Text + " [cut: " + c.Cut + "; the API has it whole]"
}

// head is a result's list (flags, adjustments, dimensions) cut to maxListed items; more
// says how many are left out.
func head(list any) any {
	v := reflect.ValueOf(list)
	if v.Kind() == reflect.Slice && v.Len() > maxListed {
		return v.Slice(0, maxListed).Interface()
	}
	return list
}

// more is how many items of a list of n head leaves out (0: none).
func more(n int) int { return max(n-maxListed, 0) }

// printer writes JSON values indented, within its bounds, counting what it leaves out.
type printer struct {
	b   strings.Builder
	max int // bytes of text written before the rest is left out
	// deep counts values nested past maxJSONDepth, shown as […] or {…}; long the strings
	// cut to maxJSONString; items the items past maxJSONItems of an array or object;
	// rest the values left out once max was reached.
	deep, long, items, rest int
}

func newPrinter(max int) *printer { return &printer{max: max} }

func (p *printer) full() bool { return p.b.Len() >= p.max }

// value writes the next value of d at the given depth and indent. It recurses at most
// maxJSONDepth times: anything deeper is skipped by the decoder, which keeps no more
// than a bit per level for it.
func (p *printer) value(d *jsontext.Decoder, depth int, indent string) error {
	k := d.PeekKind()
	if k != '{' && k != '[' {
		t, err := d.ReadToken()
		if err != nil {
			return err
		}
		if k == '"' {
			p.str(t.String())
		} else {
			p.b.WriteString(t.String())
		}
		return nil
	}
	open, close := "[", "]"
	if k == '{' {
		open, close = "{", "}"
	}
	if depth >= maxJSONDepth {
		p.deep++
		p.b.WriteString(open + "…" + close)
		return d.SkipValue()
	}
	if _, err := d.ReadToken(); err != nil {
		return err
	}
	p.b.WriteString(open)
	if d.PeekKind() == jsontext.Kind(close[0]) {
		_, err := d.ReadToken()
		p.b.WriteString(close)
		return err
	}
	n, left := 0, 0
	for d.PeekKind() != jsontext.Kind(close[0]) {
		if n == maxJSONItems || p.full() {
			if k == '{' {
				if _, err := d.ReadToken(); err != nil {
					return err
				}
			}
			if err := d.SkipValue(); err != nil {
				return err
			}
			left++
			continue
		}
		if n > 0 {
			p.b.WriteString(",")
		}
		p.b.WriteString("\n" + indent + "  ")
		if k == '{' {
			t, err := d.ReadToken()
			if err != nil {
				return err
			}
			p.name(t.String())
		}
		if err := p.value(d, depth+1, indent+"  "); err != nil {
			return err
		}
		n++
	}
	if _, err := d.ReadToken(); err != nil {
		return err
	}
	if left > 0 {
		p.left(n, left, indent)
	}
	p.b.WriteString("\n" + indent + close)
	return nil
}

// left notes, after n items of an array or object, the left items not shown.
func (p *printer) left(n, left int, indent string) {
	if n == maxJSONItems {
		p.items += left
	} else {
		p.rest += left
	}
	fmt.Fprintf(&p.b, "\n%s  … %d more", indent, left)
}

// name writes an object member's name.
func (p *printer) name(s string) {
	p.str(s)
	p.b.WriteString(": ")
}

// str writes a string quoted, cut to maxJSONString.
func (p *printer) str(s string) {
	cut := len(s) > maxJSONString
	if cut {
		p.long++
		s = textkit.Prefix(s, maxJSONString)
	}
	q, err := jsontext.AppendQuote(nil, s)
	if err != nil {
		q = []byte(`"` + strings.ToValidUTF8(s, "\uFFFD") + `"`)
	}
	if cut {
		q = append(q[:len(q)-1], `…"`...)
	}
	p.b.Write(q)
}

// shown is what the printer wrote, and what it left out.
func (p *printer) shown() shown {
	var parts []string
	if p.deep > 0 {
		parts = append(parts, fmt.Sprintf("%s nested deeper than %d levels shown as […] or {…}", count(p.deep, "value", "values"), maxJSONDepth))
	}
	if p.items > 0 {
		parts = append(parts, fmt.Sprintf("%s past the first %d of an array or object left out", count(p.items, "item", "items"), maxJSONItems))
	}
	if p.long > 0 {
		parts = append(parts, fmt.Sprintf("%s cut to %s", count(p.long, "string", "strings"), textkit.FormatBytes(int64(maxJSONString))))
	}
	if p.rest > 0 {
		parts = append(parts, fmt.Sprintf("%s past the first %s of text left out", count(p.rest, "value", "values"), textkit.FormatBytes(int64(p.max))))
	}
	return shown{Text: p.b.String(), Cut: strings.Join(parts, "; ")}
}

// count is "1 value" or "2 values".
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// jsonProblem says what is wrong with JSON without Go's prefixes.
func jsonProblem(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "it ends early"
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); strings.HasPrefix(s, "jsontext:") && i >= 0 {
		return s[i+2:]
	}
	return s
}
