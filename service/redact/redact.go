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
		if ru.maybe != nil && !ru.maybe(s) {
			continue
		}
		s = ru.apply(s, counts)
	}
	return s
}

func (ru rule) apply(s string, counts Counts) string {
	idx := ru.re.FindAllStringSubmatchIndex(s, -1)
	if idx == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
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
		b.WriteString(s[last:start])
		b.WriteString("[redacted:" + ru.kind + "]")
		last = end
		counts[ru.kind]++
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// JSON redacts every string in doc, a JSON value, except the values of the top-level
// keys in keep (a run's id, agent and time), and returns the document with what it
// redacted. A document with nothing to redact is returned as it is, byte for byte.
func (r *Redactor) JSON(doc []byte, keep ...string) ([]byte, Counts, error) {
	if r == nil {
		return doc, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil, fmt.Errorf("redact: %w", err)
	}
	counts := Counts{}
	if obj, ok := v.(map[string]any); ok {
		for k, x := range obj {
			if !slices.Contains(keep, k) {
				obj[k] = r.walk(x, counts)
			}
		}
	} else {
		v = r.walk(v, counts)
	}
	if len(counts) == 0 {
		return doc, nil, nil
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, nil, fmt.Errorf("redact: %w", err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), counts, nil
}

func (r *Redactor) walk(v any, counts Counts) any {
	switch x := v.(type) {
	case string:
		return r.Text(x, counts)
	case []any:
		for i := range x {
			x[i] = r.walk(x[i], counts)
		}
	case map[string]any:
		for k := range x {
			x[k] = r.walk(x[k], counts)
		}
	}
	return v
}
