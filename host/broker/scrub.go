package broker

import (
	"cmp"
	"errors"
	"slices"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// What a scrubbed key is replaced with: whose it was, never which.
const (
	scrubbedOperator = "[operator key]"
	scrubbedTenant   = "[tenant key]"
)

// minScrubbedKey is the length under which a key is not scrubbed from what the broker
// returns. Shorter "keys" are the placeholders of endpoints that take none ("EMPTY",
// "ollama", "none"): no secret, and words an answer may hold, which scrubbing would
// change into something a scorer cannot read.
const minScrubbedKey = 8

// keyForms are the forms key may take in an answer: as it is, and as JSON text writes
// it inside a string, with or without '/' and HTML's characters escaped (an echoing judge
// that answers JSON escapes what it echoes, and a scorer that decodes the answer would
// bring the key back).
func keyForms(key string) []string {
	forms := []string{key}
	for _, slash := range []bool{false, true} {
		for _, html := range []bool{false, true} {
			pairs := []string{`\`, `\\`, `"`, `\"`}
			if slash {
				pairs = append(pairs, `/`, `\/`)
			}
			if html {
				pairs = append(pairs, `<`, `\u003c`, `>`, `\u003e`, `&`, `\u0026`)
			}
			if f := strings.NewReplacer(pairs...).Replace(key); !slices.Contains(forms, f) {
				forms = append(forms, f)
			}
		}
	}
	return forms
}

// rescrub rebuilds the replacer of every key the broker holds: each endpoint's operator
// key and every tenant's own key. Call it with b.mu held, after the keys changed.
func (b *Broker) rescrub() {
	type form struct{ text, as string }
	var forms []form
	seen := map[string]bool{}
	add := func(key, as string) {
		if len(key) < minScrubbedKey {
			return
		}
		for _, f := range keyForms(key) {
			if !seen[f] {
				seen[f] = true
				forms = append(forms, form{f, as})
			}
		}
	}
	for _, name := range b.order {
		add(b.targets[name].ep.APIKey, scrubbedOperator)
	}
	for _, c := range b.creds {
		add(c.secret, scrubbedTenant)
	}
	if len(forms) == 0 {
		b.scrub.Store(nil)
		return
	}
	// Longest first: a key that holds another is replaced whole, not in part.
	slices.SortStableFunc(forms, func(a, b form) int { return cmp.Compare(len(b.text), len(a.text)) })
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f.text, f.as)
	}
	b.scrub.Store(strings.NewReplacer(pairs...))
}

// scrubText returns s without any key the broker holds.
func (b *Broker) scrubText(s string) string {
	r := b.scrub.Load()
	if r == nil || s == "" {
		return s
	}
	return r.Replace(s)
}

// scrubResponse scrubs what a completion carries back: the answer, its finish reason and
// its error. A judge may echo what it was sent, the Authorization header included, and
// what a scorer reads of an answer ends in results, steps, reasons, exports and the
// queue's job errors, where another tenant may read it.
func (b *Broker) scrubResponse(r *sdk.CompletionResponse) {
	r.Content = b.scrubText(r.Content)
	r.FinishReason = b.scrubText(r.FinishReason)
	if r.Error != nil {
		e := *r.Error
		e.Message = b.scrubText(e.Message)
		r.Error = &e
	}
}

// keyless is err from the endpoint as a batch error may wrap it: its text scrubbed and
// nothing else of it kept (go-openai's errors hold the endpoint's body, which may echo a
// key, where errors.As would find it), except the sentinel callers branch on.
func (b *Broker) keyless(err error) error {
	if errors.Is(err, ErrResponseTooLarge) {
		return err // says only how large the answer was
	}
	return errors.New(b.scrubText(err.Error()))
}
