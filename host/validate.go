package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/scorekit/scorekit/schemas"
	"github.com/scorekit/scorekit/sdk"
)

// ValidationError says why a JSON document does not match its schema. Its message names
// the document, the place in it and what is wrong:
//
//	run: missing required field "output"
//	run: context[2]: want a string or {id, text}, got number
//	config: temperature: want number, got string
//
// It wraps the sentinel of the document's kind: [sdk.ErrInvalidRun], [sdk.ErrInvalidResult],
// [ErrInvalidConfig] or [ErrInvalidInfo].
type ValidationError struct {
	// Doc names the document: "run", "result", "info" or "config".
	Doc string
	// Path is where the problem is, as in Go ("context[2]", "dimensions.relevance");
	// empty for the document itself.
	Path string
	// Problem says what is wrong there and, where it can, what is wanted.
	Problem string
	// More counts further problems left out of the message.
	More int

	kind error
}

// Error renders "doc: path: problem (and N more problems)".
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString(e.Doc)
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Problem)
	switch {
	case e.More == 1:
		b.WriteString(" (and 1 more problem)")
	case e.More > 1:
		fmt.Fprintf(&b, " (and %d more problems)", e.More)
	}
	return b.String()
}

// Unwrap returns the sentinel of the document's kind.
func (e *ValidationError) Unwrap() error { return e.kind }

// DecodeRun decodes one dataset line into a run. Unknown fields are tolerated; a missing
// "output", a context passage that is neither a string nor {id, text}, or a mistyped field
// is an error that names the field and wraps [sdk.ErrInvalidRun]. A leading UTF-8 byte
// order mark is dropped. Runs come in the shapes [sdk.Run.UnmarshalJSON] accepts; context
// passages without an ID are numbered by position.
//
// A line is read once, by a fast path that decodes what is plainly valid; a line it does
// not accept is validated against the run schema, so that the error names the field.
//
// [DecodeCheckedRun] returns the run as the pipeline trusts it, checked here once.
func DecodeRun(line []byte) (sdk.Run, error) {
	line = bytes.TrimPrefix(line, utf8BOM)
	r, ok := decodeRunFast(line)
	if !ok {
		var err error
		if r, err = decodeRunChecked(line); err != nil {
			return r, err
		}
	}
	if err := checkRun(&r); err != nil {
		return r, fmt.Errorf("run: %w", err)
	}
	return r, nil
}

// decodeRunChecked is DecodeRun's slow path: the schema, then encoding/json. The run is
// decoded, not yet checked (checkRun).
func decodeRunChecked(line []byte) (sdk.Run, error) {
	var r sdk.Run
	err := decodeChecked(line, "run", sdk.ErrInvalidRun, &r)
	return r, err
}

// decodeChecked checks raw against the contract's schema of doc (run, result or info),
// then decodes it into v with encoding/json; either failure wraps kind.
func decodeChecked(raw []byte, doc string, kind error, v any) error {
	c, err := contract()
	if err != nil {
		return err
	}
	if err := c.of(doc).check(raw, doc, kind); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return &ValidationError{Doc: doc, Problem: err.Error(), kind: kind}
	}
	return nil
}

// utf8BOM is the byte order mark some editors and exporters put at the start of a file.
var utf8BOM = []byte("\xef\xbb\xbf")

// FlagTextRepaired flags a result that held text no database stores (invalid UTF-8, a
// NUL, a lone UTF-16 surrogate): it carries U+FFFD in that text's place.
const FlagTextRepaired = "text_repaired"

// DecodeResult validates a result from an untrusted runtime (WASM, process) against the
// result schema, decodes it and checks it with [sdk.Result.Validate]. Unknown fields are
// errors. The error names the field and wraps [sdk.ErrInvalidResult]; the pipeline turns
// it into a failed result with code invalid_result.
//
// Decoding puts U+FFFD in place of invalid UTF-8 and of a \u escape of a surrogate
// outside a high-low pair; a result that held either is flagged [FlagTextRepaired], so
// that the repair is said, not silent.
func DecodeResult(raw []byte) (sdk.Result, error) {
	var r sdk.Result
	if err := decodeChecked(raw, "result", sdk.ErrInvalidResult, &r); err != nil {
		return r, err
	}
	if err := r.Validate(); err != nil {
		return r, fmt.Errorf("result: %w", err)
	}
	if replacesText(raw) && !r.HasFlag(FlagTextRepaired) {
		r.Flags = append(r.Flags, FlagTextRepaired)
	}
	return r, nil
}

// replacesText reports whether decoding the JSON text raw puts U+FFFD in place of some of
// it: raw is not valid UTF-8, or holds a \u escape of a UTF-16 surrogate that is not in a
// high-low pair.
func replacesText(raw []byte) bool {
	if !utf8.Valid(raw) {
		return true
	}
	for i := 0; i < len(raw); {
		if raw[i] != '\\' || i+1 >= len(raw) {
			i++
			continue
		}
		u, ok := escapeAt(raw, i)
		switch {
		case !ok:
			i += 2 // another escape (\" \\ \n ...), or not one
		case u >= 0xD800 && u < 0xDC00: // high: a low one must follow
			if low, ok := escapeAt(raw, i+6); !ok || low < 0xDC00 || low >= 0xE000 {
				return true
			}
			i += 12
		case u >= 0xDC00 && u < 0xE000: // a low one alone
			return true
		default:
			i += 6
		}
	}
	return false
}

// escapeAt reads the \uXXXX escape at raw[i:].
func escapeAt(raw []byte, i int) (rune, bool) {
	if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
		return 0, false
	}
	u, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
	return rune(u), err == nil
}

// DecodeInfo validates an Info from an untrusted runtime against the info schema and
// decodes it. Unknown fields are errors; the error wraps [ErrInvalidInfo].
func DecodeInfo(raw []byte) (sdk.Info, error) {
	var i sdk.Info
	err := decodeChecked(raw, "info", ErrInvalidInfo, &i)
	return i, err
}

// contractSchemas are the compiled schemas of package schemas.
type contractSchemas struct {
	run, result, info *compiledSchema
}

// of returns the schema of doc: run, result or info.
func (c *contractSchemas) of(doc string) *compiledSchema {
	switch doc {
	case "run":
		return c.run
	case "result":
		return c.result
	}
	return c.info
}

// contract compiles the embedded schemas the first time one is needed. They are part of
// the binary, so an error here is a build defect, reported on every call rather than as
// a panic.
var contract = sync.OnceValues(func() (*contractSchemas, error) {
	var c contractSchemas
	for _, x := range []struct {
		name string
		dst  **compiledSchema
	}{{schemas.Run, &c.run}, {schemas.Result, &c.result}, {schemas.Info, &c.info}} {
		raw, err := schemas.Get(x.name)
		if err != nil {
			return nil, err
		}
		cs, err := compileSchema(schemas.ID(x.name), raw)
		if err != nil {
			return nil, fmt.Errorf("host: embedded schema %s: %w; run `go generate ./schemas`", x.name, err)
		}
		*x.dst = cs
	}
	return &c, nil
})

// compiledSchema is a compiled JSON Schema plus an index of its subschemas by location,
// used to describe what a failed oneOf wanted.
type compiledSchema struct {
	sch   *jsonschema.Schema
	byLoc map[string]*jsonschema.Schema
}

func compileSchema(url string, raw []byte) (*compiledSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// A format the contract declares (a run's time is date-time) is a rule, not a hint.
	c.AssertFormat()
	c.UseLoader(noLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, err
	}
	cs := &compiledSchema{sch: sch, byLoc: map[string]*jsonschema.Schema{}}
	cs.index(sch)
	return cs, nil
}

// noLoader refuses to load referenced schemas. The library's default reads local files,
// and a config schema comes from a plugin the host does not trust: it must be
// self-contained ($defs, not remote or file $refs).
type noLoader struct{}

// Load refuses url.
func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schemas may not reference %s; inline it under $defs", url)
}

func (cs *compiledSchema) index(s *jsonschema.Schema) {
	if s == nil || cs.byLoc[s.Location] != nil {
		return
	}
	cs.byLoc[s.Location] = s
	cs.index(s.Ref)
	cs.index(s.Not)
	cs.index(s.Items2020)
	cs.index(s.PropertyNames)
	for _, l := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems} {
		for _, sub := range l {
			cs.index(sub)
		}
	}
	for _, sub := range s.Properties {
		cs.index(sub)
	}
	if sub, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
		cs.index(sub)
	}
	if sub, ok := s.Items.(*jsonschema.Schema); ok {
		cs.index(sub)
	}
}

// check parses raw and validates it. Errors are *ValidationError wrapping kindErr.
func (cs *compiledSchema) check(raw []byte, doc string, kindErr error) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return &ValidationError{Doc: doc, Problem: jsonProblem(raw, err), kind: kindErr}
	}
	return cs.validate(inst, doc, kindErr)
}

// validate validates a parsed document (numbers as json.Number).
func (cs *compiledSchema) validate(inst any, doc string, kindErr error) error {
	err := cs.sch.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &ValidationError{Doc: doc, Problem: err.Error(), kind: kindErr}
	}
	probs := cs.problems(ve, inst)
	if len(probs) == 0 { // cannot happen; keep the library's wording rather than nothing
		return &ValidationError{Doc: doc, Problem: ve.Error(), kind: kindErr}
	}
	sort.SliceStable(probs, func(i, j int) bool { return probs[i].path < probs[j].path })
	return &ValidationError{Doc: doc, Path: probs[0].path, Problem: probs[0].what, More: len(probs) - 1, kind: kindErr}
}

func jsonProblem(raw []byte, err error) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "empty; want a JSON object"
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "invalid JSON: unexpected end of input; is the line cut short?"
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, se)
	}
	return "invalid JSON: " + err.Error()
}

type problem struct{ path, what string }

var printer = message.NewPrinter(language.English)

// problems flattens a validation error tree into what a person needs: the failing leaves,
// with a failed oneOf/anyOf described by its alternatives unless the value had the type of
// exactly one alternative, whose own failure is then the better explanation.
func (cs *compiledSchema) problems(e *jsonschema.ValidationError, inst any) []problem {
	path := goPath(e.InstanceLocation, inst)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		out := make([]problem, 0, len(k.Missing))
		for _, f := range k.Missing {
			out = append(out, problem{path, fmt.Sprintf("missing required field %q", f)})
		}
		return out
	case *kind.AdditionalProperties:
		known := cs.knownFields(e.SchemaURL)
		out := make([]problem, 0, len(k.Properties))
		for _, f := range k.Properties {
			w := fmt.Sprintf("unknown field %q", f)
			if known != "" {
				w += " (known: " + known + ")"
			}
			out = append(out, problem{path, w})
		}
		return out
	case *kind.Type:
		return []problem{{path, fmt.Sprintf("want %s, got %s", strings.Join(k.Want, " or "), k.Got)}}
	case *kind.OneOf, *kind.AnyOf:
		if o, ok := k.(*kind.OneOf); ok && len(o.Subschemas) > 1 {
			return []problem{{path, "matches " + cs.matched(e.SchemaURL, o.Subschemas) + "; want exactly one of them"}}
		}
		var deeper []*jsonschema.ValidationError
		for _, c := range e.Causes {
			if !typeMismatch(c, len(e.InstanceLocation)) {
				deeper = append(deeper, c)
			}
		}
		if len(deeper) == 1 {
			return cs.problems(deeper[0], inst)
		}
		return []problem{{path, "want " + cs.alternatives(e.SchemaURL) + ", got " + jsonType(valueAt(e.InstanceLocation, inst))}}
	}
	if len(e.Causes) > 0 {
		var out []problem
		for _, c := range e.Causes {
			out = append(out, cs.problems(c, inst)...)
		}
		return out
	}
	return []problem{{path, e.ErrorKind.LocalizedString(printer)}}
}

// typeMismatch reports whether a oneOf branch failed only because the value itself (at
// depth, not a field inside it) has another type.
func typeMismatch(e *jsonschema.ValidationError, depth int) bool {
	if _, ok := e.ErrorKind.(*kind.Type); ok {
		return len(e.InstanceLocation) == depth
	}
	if len(e.Causes) == 0 {
		return false
	}
	for _, c := range e.Causes {
		if !typeMismatch(c, depth) {
			return false
		}
	}
	return true
}

// alternatives describes the branches of the oneOf/anyOf at loc: "a string or {id, text}".
func (cs *compiledSchema) alternatives(loc string) string {
	s := cs.byLoc[loc]
	if s == nil {
		return "another value"
	}
	branches := s.OneOf
	if len(branches) == 0 {
		branches = s.AnyOf
	}
	parts := make([]string, 0, len(branches))
	for _, b := range branches {
		parts = append(parts, describe(b))
	}
	return strings.Join(parts, " or ")
}

// matched describes the branches (by index) of the oneOf at loc that a value matched:
// "a grading by choices and a grading on a scale".
func (cs *compiledSchema) matched(loc string, idx []int) string {
	s := cs.byLoc[loc]
	if s == nil {
		return "more than one alternative of a oneOf"
	}
	parts := make([]string, 0, len(idx))
	for _, i := range idx {
		if i >= 0 && i < len(s.OneOf) {
			parts = append(parts, describe(s.OneOf[i]))
		}
	}
	if len(parts) < 2 {
		return "more than one alternative of a oneOf"
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

func describe(s *jsonschema.Schema) string {
	for s.Ref != nil && s.Types == nil && s.Title == "" {
		s = s.Ref
	}
	if s.Title != "" {
		return s.Title
	}
	if len(s.Properties) > 0 {
		keys := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return "{" + strings.Join(keys, ", ") + "}"
	}
	if s.Types == nil || s.Types.IsEmpty() {
		return "any value"
	}
	types := s.Types.ToStrings()
	for i, t := range types {
		types[i] = article(t) + t
	}
	return strings.Join(types, " or ")
}

func article(t string) string {
	switch t {
	case "null":
		return ""
	case "integer", "object", "array":
		return "an "
	}
	return "a "
}

// knownFields lists the properties of the object schema at loc, sorted.
func (cs *compiledSchema) knownFields(loc string) string {
	s := cs.byLoc[loc]
	if s == nil || len(s.Properties) == 0 {
		return ""
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}

// goPath renders a JSON pointer's tokens the way Go code reads them: context[2].text,
// metadata["a key"]. Array indexes are told from object keys by walking the instance.
func goPath(tokens []string, inst any) string {
	var b strings.Builder
	cur := inst
	for _, t := range tokens {
		switch v := cur.(type) {
		case []any:
			b.WriteString("[" + t + "]")
			if i, err := strconv.Atoi(t); err == nil && i >= 0 && i < len(v) {
				cur = v[i]
			} else {
				cur = nil
			}
			continue
		case map[string]any:
			cur = v[t]
		default:
			cur = nil
		}
		if isIdent(t) {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(t)
		} else {
			b.WriteString("[" + strconv.Quote(t) + "]")
		}
	}
	return b.String()
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return false
	}
	return true
}

func valueAt(tokens []string, inst any) any {
	cur := inst
	for _, t := range tokens {
		switch v := cur.(type) {
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(v) {
				return nil
			}
			cur = v[i]
		case map[string]any:
			cur = v[t]
		default:
			return nil
		}
	}
	return cur
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64, int:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
