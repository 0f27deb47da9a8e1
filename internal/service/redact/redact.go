// Package redact replaces personal data and secrets in text: e-mail addresses, phone
// numbers, payment card numbers (Luhn-checked, known issuer prefixes), secrets (API keys
// and tokens of well-known formats, bearer tokens, private keys, values assigned to
// password/secret/token/api_key) and a tenant's own patterns. The evaluation service
// applies a tenant's rules to every run before it is stored, so nothing redacted reaches
// the store, a scorer or a judge.
//
// Patterns are Go regular expressions (RE2): matching takes time linear in the text
// whatever the pattern, so a tenant's pattern cannot backtrack catastrophically. Built-in
// kinds are written to leave ordinary numbers alone (years, dates, prices, versions,
// ids): a phone number needs a phone's shape (a leading +, a trunk 0, or the (NXX)
// NXX-XXXX form) and 8 to 15 digits; a card number needs a card issuer's prefix and
// length and a valid Luhn check digit.
package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Built-in kinds.
const (
	Email  = "email"
	Phone  = "phone"
	Card   = "card"
	Secret = "secret"
)

// Kinds are the built-in kinds, in the order they apply: a secret or an e-mail address
// is replaced before its digits could be read as a card or a phone number.
var Kinds = []string{Secret, Email, Card, Phone}

// Custom is the kind under which metrics count a tenant's own patterns (their names are
// the tenant's, and would multiply series).
const Custom = "custom"

// Limits of a tenant's own patterns.
const (
	MaxPatterns     = 32
	MaxPatternBytes = 512
)

// Config is a tenant's redaction rules, stored in its policy.
type Config struct {
	// Kinds lists the built-in kinds to redact: email, phone, card, secret. Optional.
	Kinds []string `json:"kinds,omitempty"`
	// Patterns are the tenant's own, each redacted under its name. Optional.
	Patterns []Pattern `json:"patterns,omitempty"`
}

// Pattern is a tenant's own redaction pattern.
type Pattern struct {
	// Name names what the pattern finds (lower-case letters, digits and _); it is the
	// kind its redactions are counted under. Required.
	Name string `json:"name"`
	// Regexp is an RE2 regular expression (no backreferences or lookaround); every
	// match is replaced. Required.
	Regexp string `json:"regexp"`
}

// IsZero reports whether c redacts nothing.
func (c Config) IsZero() bool { return len(c.Kinds) == 0 && len(c.Patterns) == 0 }

// Counts counts redactions by kind.
type Counts map[string]int

// Redactor applies a Config. It is safe for concurrent use.
type Redactor struct {
	rules []rule
}

type rule struct {
	kind string
	re   *regexp.Regexp
	// group, when > 0, is the submatch replaced (the value of "password: VALUE").
	group int
	// valid, when set, confirms a match (digit counts, Luhn).
	valid func(string) bool
	// around, when set, confirms a match by the text around it (start and end are the
	// match's place in text).
	around func(text string, start, end int) bool
	// maybe, when set, is a cheap test that the text can hold a match at all.
	maybe func(string) bool
	// anchors, when set, returns places every match contains (an '@', a run of digits,
	// a keyword): the pattern then runs only on the text around them (radius bytes,
	// widened to whitespace), not over the whole text. Go's regular expressions cost a
	// few hundred nanoseconds a byte per pattern; a run is mostly prose.
	anchors func(string) []int
	radius  int
	// segment, when set, is a cheap test that a stretch around anchors can hold a match
	// (enough digits), before the pattern runs on it.
	segment func(string) bool
}

var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// Compile checks c and returns its Redactor; a nil Redactor (and no error) for a zero
// Config. An error names the kind or pattern at fault and how to fix it.
func Compile(c Config) (*Redactor, error) {
	if c.IsZero() {
		return nil, nil
	}
	r := &Redactor{}
	for _, k := range Kinds {
		if slices.Contains(c.Kinds, k) {
			r.rules = append(r.rules, builtin[k]...)
		}
	}
	for _, k := range c.Kinds {
		if _, ok := builtin[k]; !ok {
			return nil, fmt.Errorf("redact.kinds: unknown kind %q: use %s, or a pattern of your own under redact.patterns", k, strings.Join(Kinds, ", "))
		}
	}
	if len(c.Patterns) > MaxPatterns {
		return nil, fmt.Errorf("redact.patterns: %d patterns; at most %d: join alternatives with | in one pattern", len(c.Patterns), MaxPatterns)
	}
	seen := map[string]bool{}
	for i, p := range c.Patterns {
		at := fmt.Sprintf("redact.patterns[%d]", i)
		switch {
		case !namePattern.MatchString(p.Name):
			return nil, fmt.Errorf("%s: name %q: use 1-32 lower-case letters, digits or _, starting with a letter", at, p.Name)
		case builtin[p.Name] != nil || p.Name == Custom:
			return nil, fmt.Errorf("%s: name %q is a built-in kind: list it under redact.kinds, or name your pattern otherwise", at, p.Name)
		case seen[p.Name]:
			return nil, fmt.Errorf("%s: name %q is used twice: join the two patterns with |", at, p.Name)
		case len(p.Regexp) > MaxPatternBytes:
			return nil, fmt.Errorf("%s (%s): the pattern is %d bytes; at most %d", at, p.Name, len(p.Regexp), MaxPatternBytes)
		}
		seen[p.Name] = true
		re, err := regexp.Compile(p.Regexp)
		if err != nil {
			return nil, fmt.Errorf("%s (%s): %v: write an RE2 expression (no backreferences or lookaround; https://github.com/google/re2/wiki/Syntax)", at, p.Name, err)
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("%s (%s): %q matches the empty text, so it would redact between every character: make it match at least one character", at, p.Name, p.Regexp)
		}
		r.rules = append(r.rules, rule{kind: p.Name, re: re})
	}
	return r, nil
}

// Text returns s with every match replaced by "[redacted:KIND]", counting each in counts
// (which may be nil when r redacts nothing).
func (r *Redactor) Text(s string, counts Counts) string {
	if r == nil {
		return s
	}
	for _, ru := range r.rules {
		s = ru.apply(s, counts)
	}
	return s
}

func (ru rule) apply(s string, counts Counts) string {
	spans := ru.find(s)
	if spans == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp[0]])
		b.WriteString("[redacted:" + ru.kind + "]")
		last = sp[1]
		counts[ru.kind]++
	}
	b.WriteString(s[last:])
	return b.String()
}

// find returns the spans of s the rule redacts, in order.
func (ru rule) find(s string) [][2]int {
	if ru.maybe != nil && !ru.maybe(s) {
		return nil
	}
	var matches [][]int
	if ru.anchors == nil {
		matches = ru.re.FindAllStringSubmatchIndex(s, -1)
	} else {
		for _, seg := range segments(s, ru.anchors(s), ru.radius) {
			if ru.segment != nil && !ru.segment(s[seg[0]:seg[1]]) {
				continue
			}
			for _, m := range ru.re.FindAllStringSubmatchIndex(s[seg[0]:seg[1]], -1) {
				for i := range m {
					if m[i] >= 0 {
						m[i] += seg[0]
					}
				}
				matches = append(matches, m)
			}
		}
	}
	var spans [][2]int
	for _, m := range matches {
		start, end := m[0], m[1]
		if ru.group > 0 {
			start, end = m[2*ru.group], m[2*ru.group+1]
			if start < 0 {
				continue
			}
		}
		if (ru.valid != nil && !ru.valid(s[start:end])) || (ru.around != nil && !ru.around(s, start, end)) {
			continue
		}
		spans = append(spans, [2]int{start, end})
	}
	return spans
}

// segments returns the stretches of s within radius of the anchors, merged where they
// meet and widened to whitespace (or the ends of s) on both sides. At such an edge a
// pattern's \b and $ mean what they mean in the whole text: the byte beyond is
// whitespace, a non-word character that ends no match that is not followed by it.
func segments(s string, anchors []int, radius int) [][2]int {
	var out [][2]int
	for _, a := range anchors {
		lo, hi := max(0, a-radius), min(len(s), a+radius)
		for lo > 0 && !space(s[lo-1]) {
			lo--
		}
		for hi < len(s) && !space(s[hi]) {
			hi++
		}
		if n := len(out); n > 0 && lo <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], hi)
			continue
		}
		out = append(out, [2]int{lo, hi})
	}
	return out
}

func space(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' }

// JSON redacts every string in doc, a valid JSON value, except the values of the
// top-level keys in keep (a run's id, agent and time), and returns the document with
// what it redacted. Only the strings redacted change: the rest of the document, key
// order and numbers included, is kept byte for byte, and a document with nothing to
// redact is returned as it is.
func (r *Redactor) JSON(doc []byte, keep ...string) ([]byte, Counts, error) {
	if r == nil {
		return doc, nil, nil
	}
	var (
		out       []byte // doc up to done, with the redactions; nil until the first
		done      int
		counts    = Counts{}
		depth     int
		object    = len(bytes.TrimLeft(doc, " \t\r\n")) > 0 && bytes.TrimLeft(doc, " \t\r\n")[0] == '{'
		expectKey bool // the next string at depth 1 is a key of the top-level object
		kept      bool // the value at depth 1 is one of keep's
	)
	for i := 0; i < len(doc); i++ {
		switch doc[i] {
		case '{', '[':
			depth++
			expectKey = depth == 1 && object
		case '}', ']':
			depth--
		case ',':
			if depth == 1 && object {
				expectKey, kept = true, false
			}
		case '"':
			end, escaped := stringEnd(doc, i)
			if end < 0 {
				return nil, nil, fmt.Errorf("redact: unterminated string at byte %d", i)
			}
			lit := doc[i : end+1]
			var text string
			if escaped {
				if err := json.Unmarshal(lit, &text); err != nil {
					return nil, nil, fmt.Errorf("redact: string at byte %d: %w", i, err)
				}
			} else {
				text = string(lit[1 : len(lit)-1])
			}
			switch {
			case expectKey:
				expectKey, kept = false, slices.Contains(keep, text)
			case depth == 1 && kept:
			default:
				if red := r.Text(text, counts); red != text {
					q, err := quote(red)
					if err != nil {
						return nil, nil, err
					}
					out = append(append(out, doc[done:i]...), q...)
					done = end + 1
				}
			}
			i = end
		}
	}
	if out == nil {
		return doc, nil, nil
	}
	return append(out, doc[done:]...), counts, nil
}

// stringEnd returns the index of the quote that ends the JSON string starting at
// doc[start], and whether the string holds an escape; -1 when it does not end.
func stringEnd(doc []byte, start int) (int, bool) {
	escaped := false
	for i := start + 1; i < len(doc); i++ {
		switch doc[i] {
		case '\\':
			escaped = true
			i++
		case '"':
			return i, escaped
		}
	}
	return -1, escaped
}

// quote returns s as a JSON string, with <, > and & as they are.
func quote(s string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
