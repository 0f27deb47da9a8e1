package heuristic

import (
	"bufio"
	"context"
	_ "embed" // the stop list
	"fmt"
	"strings"
	"unicode"

	"github.com/scorekit/scorekit/sdk"
)

// KeywordCoverage measures the share of the input's keywords that also occur in the output,
// as Mastra's keyword coverage scorer does with the keyword-extractor package: the text is
// stripped of HTML tags and split on white space; each word loses sentence punctuation
// (. , ; ! ? ( ) : and quotes) unless it is a URL; words made only of digits and words in
// the SMART English stop list are dropped; the rest, lower-cased and de-duplicated, are the
// keywords. The score is matched / input keywords, and 1 when the input has no keywords.
type KeywordCoverage struct {
	stop map[string]struct{}
}

var _ sdk.Scorer = (*KeywordCoverage)(nil)

//go:embed stopwords_en.txt
var stopwordsEN string

// NewKeywordCoverage returns the keyword coverage scorer.
func NewKeywordCoverage() sdk.Scorer {
	stop := map[string]struct{}{}
	sc := bufio.NewScanner(strings.NewReader(stopwordsEN))
	for sc.Scan() {
		if w := sc.Text(); w != "" && !strings.HasPrefix(w, "#") {
			stop[w] = struct{}{}
		}
	}
	return &KeywordCoverage{stop: stop}
}

// Info describes the scorer.
func (*KeywordCoverage) Info() sdk.Info {
	return describe("keyword_coverage",
		"Share of the input's keywords (words outside a stop list, digits dropped) that occur in the output; "+
			"1 when the input has none. Mastra's keyword coverage scorer.",
		0.5, "", "")
}

// Score grades call.Run: keyword coverage of the input by the output.
func (k *KeywordCoverage) Score(_ context.Context, call sdk.Call) (sdk.Result, error) {
	ref := k.keywords(call.Run.Input)
	if len(ref) == 0 {
		return sdk.Scored(1, "the input has no keywords to cover"), nil
	}
	got := map[string]struct{}{}
	for _, w := range k.keywords(call.Run.Output) {
		got[w] = struct{}{}
	}
	matched := 0
	var missing []string
	for _, w := range ref {
		if _, ok := got[w]; ok {
			matched++
		} else if len(missing) < 10 {
			missing = append(missing, w)
		}
	}
	reason := fmt.Sprintf("the output has %d of the input's %d keywords", matched, len(ref))
	if len(missing) > 0 {
		reason += "; missing: " + strings.Join(missing, ", ")
	}
	res := sdk.Scored(float64(matched)/float64(len(ref)), reason)
	res.Steps = []sdk.Step{step("analyze", map[string]int{"total_keywords": len(ref), "matched_keywords": matched})}
	return res, nil
}

// keywords extracts the distinct keywords of s, in order.
func (k *KeywordCoverage) keywords(s string) []string {
	text := strings.TrimFunc(stripTags(s), isJSSpace)
	if text == "" {
		return nil
	}
	var out []string
	seen := map[string]struct{}{}
	for _, w := range strings.FieldsFunc(text, isJSSpace) {
		url := strings.Contains(w, "http://") || strings.Contains(w, "https://")
		if !url {
			w = stripPunct(w)
		}
		if len(w) == 1 && strings.ContainsRune("_@&#", rune(w[0])) {
			continue
		}
		if w == "" || allDigits(w) {
			continue
		}
		low := strings.ToLower(w)
		if _, stop := k.stop[low]; stop {
			continue
		}
		if !url {
			w = low
		}
		if _, dup := seen[w]; dup {
			continue
		}
		seen[w] = struct{}{}
		out = append(out, w)
	}
	return out
}

// isJSSpace is JavaScript's \s: Unicode white space and the byte-order mark.
func isJSSpace(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' }

// stripTags removes every "<...>" with at least one character inside.
func stripTags(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+1:], '>')
		if j <= 0 { // no closing '>' or "<>": keep the '<' and go on
			b.WriteString(s[:i+1])
			s = s[i+1:]
			continue
		}
		b.WriteString(s[:i])
		s = s[i+1+j+1:]
	}
	b.WriteString(s)
	return b.String()
}

// stripPunct removes . , ; ! ? ( ) : " and curly quotes anywhere, and a straight apostrophe
// at either end.
func stripPunct(w string) string {
	if !strings.ContainsAny(w, ".,;!?():\"'\u201C\u201D\u2018\u2019") {
		return w
	}
	var b strings.Builder
	last := len(w) - 1
	for i, r := range w {
		switch r {
		case '.', ',', ';', '!', '?', '(', ')', ':', '"', '\u201C', '\u201D', '\u2018', '\u2019':
			continue
		case '\'':
			if i == 0 || i == last {
				continue
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

func allDigits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}
