// Package verdict extracts the JSON object a judge meant to return from the text it
// actually returned, and reads the score in it.
//
// Judges wrap their JSON in code fences, put prose around it, leave trailing commas, quote
// numbers, use single quotes, answer on a 0-100 or 1-10 scale when asked for 0-1, and stop
// mid-object when they hit their token limit. [Extract] repairs what can be repaired without
// guessing and reports the rest with the raw text in the error, so that a scorer can return
// failed (never 0) and a person can see what the judge said.
//
// The package depends on the standard library only: it is compiled into WASM guests.
package verdict

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Errors callers branch on. Every error Extract and Score return wraps one of them.
var (
	// ErrNoJSON: the text holds no JSON object or array.
	ErrNoJSON = errors.New("no JSON object in judge output")
	// ErrTruncated: the text opens an object that never closes (the judge hit its token
	// limit). Raise the judge's max tokens or shorten the prompt.
	ErrTruncated = errors.New("judge output truncated (JSON object never closes)")
	// ErrMalformed: an object was found but is not valid JSON, even after repairs.
	ErrMalformed = errors.New("malformed JSON in judge output")
	// ErrScore: the score is missing, not a number, out of range or on an ambiguous scale.
	ErrScore = errors.New("unusable score in judge output")
)

// FlagPercentageScale is the flag a judge scorer sets on a result when it read its judge's
// answer on a 0-100 scale ([Score] or [Scores] divided it by 100). The host does not read
// any scorer's own numbers as percentages: a plugin that declares 0-1 and returns 2 is
// failed, so this reading belongs to the code that parsed the judge's words.
const FlagPercentageScale = "percentage_scale"

// rawLimit caps how much of the judge's text an error message quotes.
const rawLimit = 1000

// quote returns the raw text for an error message, verbatim so a person can read it,
// capped at rawLimit bytes.
func quote(text string) string {
	if len(text) > rawLimit {
		return fmt.Sprintf("judge output (first %d of %d bytes): %s", rawLimit, len(text), text[:rawLimit])
	}
	return "judge output: " + text
}

// Extract finds the JSON object (or array) in text and decodes it into v.
//
// It looks inside a ```json code fence first, then at every '{' or '[' in order, and takes
// the first candidate that decodes. A candidate that does not decode as it stands is
// repaired: trailing commas are dropped, single-quoted strings become double-quoted, and
// Python's True/False/None become true/false/null. When v is a struct (or holds structs),
// a string where a number is expected ("95") is read as the number, and a number where a
// string is expected as its text. Text that opens an object and never closes it is
// [ErrTruncated]. Errors include the raw text.
func Extract(text string, v any) error {
	body := text
	if fenced, ok := fence(text); ok {
		body = fenced
	}
	truncated := false
	var lastErr error
	for i := 0; i < len(body); i++ {
		if body[i] != '{' && body[i] != '[' {
			continue
		}
		end, closed := span(body, i)
		if !closed {
			// Only the outermost unterminated candidate counts as truncation; inner ones
			// would be found again inside it.
			truncated = true
			break
		}
		cand := body[i:end]
		if err := decode(cand, v); err == nil {
			return nil
		} else {
			lastErr = err
		}
		if body[i] == '{' {
			// A well-formed but undecodable object is not a reason to search inside it.
			i = end - 1
		}
	}
	switch {
	case truncated:
		return fmt.Errorf("%w: %s", ErrTruncated, quote(text))
	case lastErr != nil:
		return fmt.Errorf("%w: %v: %s", ErrMalformed, lastErr, quote(text))
	default:
		return fmt.Errorf("%w: %s", ErrNoJSON, quote(text))
	}
}

// fence returns the content of the first ``` code fence in text, when there is one with
// an object or array inside.
func fence(text string) (string, bool) {
	start := strings.Index(text, "```")
	if start < 0 {
		return "", false
	}
	rest := text[start+3:]
	// Drop the language tag (```json).
	if nl := strings.IndexByte(rest, '\n'); nl >= 0 && !strings.ContainsAny(rest[:nl], "{[") {
		rest = rest[nl+1:]
	}
	if end := strings.Index(rest, "```"); end >= 0 {
		rest = rest[:end]
	}
	if !strings.ContainsAny(rest, "{[") {
		return "", false
	}
	return rest, true
}

// span returns the index just past the bracket that closes the one at body[start], and
// whether it closes at all. Strings in double or single quotes are skipped.
func span(body string, start int) (int, bool) {
	depth := 0
	var quoteCh byte
	escaped := false
	for i := start; i < len(body); i++ {
		c := body[i]
		if quoteCh != 0 {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == quoteCh:
				quoteCh = 0
			}
			continue
		}
		switch c {
		case '"':
			quoteCh = c
		case '\'':
			// An apostrophe is a quote only where a JSON value or key may start.
			if prev := lastSignificant(body[start:i]); prev == '{' || prev == '[' || prev == ',' || prev == ':' {
				quoteCh = c
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
	}
	return len(body), false
}

// lastSignificant returns the last non-space byte of s, or 0.
func lastSignificant(s string) byte {
	s = strings.TrimRight(s, " \t\r\n")
	if s == "" {
		return 0
	}
	return s[len(s)-1]
}

// decode decodes cand into v, repairing it if it does not decode as it stands.
func decode(cand string, v any) error {
	var tree any
	if err := unmarshalNumber(cand, &tree); err != nil {
		repaired := repair(cand)
		if err2 := unmarshalNumber(repaired, &tree); err2 != nil {
			return err
		}
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		tree = coerce(tree, rv.Elem().Type())
	}
	b, err := json.Marshal(tree)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func unmarshalNumber(s string, v *any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

// repair rewrites the common deviations from JSON that judges produce: single-quoted
// strings, trailing commas, and Python literals.
func repair(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	var quoteCh byte
	escaped := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if quoteCh != 0 {
			switch {
			case escaped:
				escaped = false
				if quoteCh == '\'' && c == '\'' {
					// \' inside a single-quoted string is a plain apostrophe.
					trimmed := b.String()
					b.Reset()
					b.WriteString(trimmed[:len(trimmed)-1])
				}
				b.WriteByte(c)
			case c == '\\':
				escaped = true
				b.WriteByte(c)
			case c == quoteCh:
				quoteCh = 0
				b.WriteByte('"')
			case c == '"' && quoteCh == '\'':
				b.WriteString(`\"`)
			default:
				b.WriteByte(c)
			}
			continue
		}
		switch {
		case c == '"':
			quoteCh = c
			b.WriteByte(c)
		case c == '\'':
			quoteCh = c
			b.WriteByte('"')
		case c == ',':
			if next := nextSignificant(s[i+1:]); next == '}' || next == ']' {
				continue
			}
			b.WriteByte(c)
		case isWordStart(s, i):
			word := s[i:]
			replaced := false
			for _, lit := range [...][2]string{{"True", "true"}, {"False", "false"}, {"None", "null"}} {
				if strings.HasPrefix(word, lit[0]) && !isWordByte(at(s, i+len(lit[0]))) {
					b.WriteString(lit[1])
					i += len(lit[0]) - 1
					replaced = true
					break
				}
			}
			if !replaced {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func nextSignificant(s string) byte {
	s = strings.TrimLeft(s, " \t\r\n")
	if s == "" {
		return 0
	}
	return s[0]
}

func at(s string, i int) byte {
	if i >= len(s) {
		return 0
	}
	return s[i]
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isWordStart(s string, i int) bool {
	return (s[i] == 'T' || s[i] == 'F' || s[i] == 'N') && (i == 0 || !isWordByte(s[i-1]))
}

// coerce converts numbers in strings to numbers where t wants a number, and numbers to
// strings where t wants a string. Values under an interface type are left alone.
func coerce(v any, t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32,
		reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if s, ok := v.(string); ok {
			if f, err := Number(s); err == nil {
				if t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64 {
					return f
				}
				if f == math.Trunc(f) {
					return json.Number(strconv.FormatFloat(f, 'f', -1, 64))
				}
			}
		}
	case reflect.String:
		if n, ok := v.(json.Number); ok {
			return n.String()
		}
	case reflect.Bool:
		if s, ok := v.(string); ok {
			if b, err := strconv.ParseBool(strings.TrimSpace(s)); err == nil {
				return b
			}
		}
	case reflect.Slice, reflect.Array:
		if arr, ok := v.([]any); ok {
			out := make([]any, len(arr))
			for i, e := range arr {
				out[i] = coerce(e, t.Elem())
			}
			return out
		}
	case reflect.Map:
		if m, ok := v.(map[string]any); ok {
			out := make(map[string]any, len(m))
			for k, e := range m {
				out[k] = coerce(e, t.Elem())
			}
			return out
		}
	case reflect.Struct:
		if m, ok := v.(map[string]any); ok {
			out := make(map[string]any, len(m))
			for k, e := range m {
				if f, ok := field(t, k); ok {
					out[k] = coerce(e, f.Type)
				} else {
					out[k] = e
				}
			}
			return out
		}
	}
	return v
}

// field finds the struct field that encoding/json would decode key into.
func field(t reflect.Type, key string) (reflect.StructField, bool) {
	var fold reflect.StructField
	found := false
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag := f.Tag.Get("json"); tag != "" {
			if tag == "-" {
				continue
			}
			if n, _, _ := strings.Cut(tag, ","); n != "" {
				name = n
			}
		}
		if name == key {
			return f, true
		}
		if !found && strings.EqualFold(name, key) {
			fold, found = f, true
		}
	}
	return fold, found
}

// Number parses a number as judges write it: "0.8", " 95 ", "95%" (0.95), "8/10" (0.8),
// "8 out of 10" (0.8). A percent or a fraction is divided out; a bare number is returned as
// it is.
func Number(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %q is not a number", ErrScore, s)
		}
		return f / 100, nil
	}
	num, den, ok := strings.Cut(s, "/")
	if !ok {
		num, den, ok = strings.Cut(s, " out of ")
	}
	if ok {
		n, err1 := strconv.ParseFloat(strings.TrimSpace(num), 64)
		d, err2 := strconv.ParseFloat(strings.TrimSpace(den), 64)
		if err1 != nil || err2 != nil || d <= 0 {
			return 0, fmt.Errorf("%w: %q is not a fraction", ErrScore, s)
		}
		return n / d, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is not a number", ErrScore, s)
	}
	return f, nil
}

// Score maps the score a judge returned, asked for a 0-1 score, to [0, 1].
//
// x is what Extract decoded for the score field: a number (float64, int, json.Number) or
// a string. The rule:
//   - a number in [0, 1] is the score: 0.95 -> 0.95, 1 -> 1.0;
//   - a number in (10, 100] is a percentage: 95 -> 0.95, "100" -> 1.0;
//   - a stated scale is divided out: "95%" -> 0.95, "7/10" or "7 out of 10" -> 0.7;
//   - a bare number in (1, 10] is ambiguous (7 of 10, or 7 percent?) and is an error, as
//     is anything negative, above 100, NaN or not a number. Use [ScoreOutOf] when the
//     prompt asked for another scale.
//
// An error wraps [ErrScore]; the scorer returns failed, never a guessed score.
func Score(x any) (float64, error) {
	f, stated, err := number(x)
	if err != nil {
		return 0, err
	}
	if stated {
		return unit(f, x)
	}
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0) || f < 0:
		return 0, fmt.Errorf("%w: %v is not a score", ErrScore, x)
	case f <= 1:
		return f, nil
	case f <= 10:
		return 0, fmt.Errorf("%w: %v is ambiguous (1-10 or 0-100 scale?); ask the judge for a 0-1 score or a stated scale such as \"7/10\"", ErrScore, x)
	case f <= 100:
		return f / 100, nil
	default:
		return 0, fmt.Errorf("%w: %v is above 100", ErrScore, x)
	}
}

// Scores maps the scores of one judge answer, asked for on a 0-1 scale (the dimensions of
// a rubric), to [0, 1] together, with the rule of [Score] applied to the answer as a
// whole: when the largest is in [0, 1] they are taken as they are; when it is in
// (10, 100] the judge answered in percent and every score is divided by 100, so a 1 beside
// a 90 is 1 percent, not 1.0; when it is in (1, 10] the scale is ambiguous (0-10, or a
// percentage that happens to be low?) and the answer is an error, as is any score that is
// negative, NaN, infinite or above 100. percent reports the division, for
// [FlagPercentageScale]. The map returned is a new one; errors wrap [ErrScore].
func Scores(xs map[string]float64) (out map[string]float64, percent bool, err error) {
	top := 0.0
	for k, v := range xs {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 100 {
			return nil, false, fmt.Errorf("%w: %q is %v, outside 0-1 (and 0-100)", ErrScore, k, v)
		}
		top = math.Max(top, v)
	}
	if top > 1 && top <= 10 {
		return nil, false, fmt.Errorf("%w: the largest score is %v: ambiguous (1-10 or 0-100 scale?); ask the judge for 0-1 scores", ErrScore, top)
	}
	percent = top > 10
	out = make(map[string]float64, len(xs))
	for k, v := range xs {
		if percent {
			v /= 100
		}
		out[k] = v
	}
	return out, percent, nil
}

// ScoreOutOf maps a score the judge gave on a 0-max scale (max 1, 5, 10, 100 ...) to
// [0, 1]. A stated scale in the value ("7/10", "70%") wins over max.
func ScoreOutOf(x any, max float64) (float64, error) {
	if max <= 0 {
		return 0, fmt.Errorf("%w: scale maximum %v must be positive", ErrScore, max)
	}
	f, stated, err := number(x)
	if err != nil {
		return 0, err
	}
	if !stated {
		f /= max
	}
	return unit(f, x)
}

func unit(f float64, x any) (float64, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1 {
		return 0, fmt.Errorf("%w: %v is outside the scale", ErrScore, x)
	}
	return f, nil
}

// number reads x as a float; stated reports a percent or fraction that was divided out.
func number(x any) (f float64, stated bool, err error) {
	switch n := x.(type) {
	case nil:
		return 0, false, fmt.Errorf("%w: no score", ErrScore)
	case float64:
		return n, false, nil
	case float32:
		return float64(n), false, nil
	case int:
		return float64(n), false, nil
	case int64:
		return float64(n), false, nil
	case json.Number:
		f, err := n.Float64()
		if err != nil {
			return 0, false, fmt.Errorf("%w: %q is not a number", ErrScore, n)
		}
		return f, false, nil
	case string:
		f, err := Number(n)
		if err != nil {
			return 0, false, err
		}
		return f, strings.ContainsAny(n, "%/") || strings.Contains(n, " out of "), nil
	case json.RawMessage:
		var v any
		if err := unmarshalNumber(string(n), &v); err != nil {
			return 0, false, fmt.Errorf("%w: %s is not a number", ErrScore, n)
		}
		return number(v)
	default:
		return 0, false, fmt.Errorf("%w: %v (%T) is not a number", ErrScore, x, x)
	}
}
