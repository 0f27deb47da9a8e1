package heuristic

import (
	"bufio"
	"context"
	_ "embed" // the stop list
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/scorekit/scorekit/sdk"
)

// keywordCoverageScorer is the scorer NewKeywordCoverage returns.
type keywordCoverageScorer struct {
	stop map[string]struct{}
}

var _ sdk.Scorer = (*keywordCoverageScorer)(nil)

//go:embed stopwords_en.txt
var stopwordsEN string

// NewKeywordCoverage returns the keyword coverage scorer.
// A turn whose only output is its tool calls is skipped: there is no text to compare.
//
// It measures the share of the input's keywords that also occur in the output,
// as Mastra's keyword coverage scorer does with the keyword-extractor package: the text is
// stripped of HTML tags and split on white space; each word loses sentence punctuation
// (. , ; ! ? ( ) : and quotes) unless it is a URL; words made only of digits and words in
// the SMART English stop list are dropped; the rest, lower-cased and de-duplicated, are the
// keywords. The score is matched / input keywords, and 1 when the input has no keywords.
func NewKeywordCoverage() sdk.Scorer {
	stop := map[string]struct{}{}
	sc := bufio.NewScanner(strings.NewReader(stopwordsEN))
	for sc.Scan() {
		if w := sc.Text(); w != "" && !strings.HasPrefix(w, "#") {
			stop[w] = struct{}{}
		}
	}
	return &keywordCoverageScorer{stop: stop}
}

// Info describes the scorer.
func (*keywordCoverageScorer) Info() sdk.Info {
	return describe("keyword_coverage",
		"Share of the input's keywords (words outside a stop list, digits dropped) that occur in the output; "+
			"1 when the input has none. Mastra's keyword coverage scorer.",
		0.5, "", "")
}

// Score grades call.Run: keyword coverage of the input by the output.
func (k *keywordCoverageScorer) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	if r, ok := skipToolOnly("keyword_coverage", &call.Run); ok {
		return r, nil
	}
	var buf []byte
	ref := k.keywords(call.Run.Input, &buf)
	if len(ref) == 0 {
		return sdk.Scored(1, "the input has no keywords to cover"), nil
	}
	if err := ctx.Err(); err != nil { // each pass is linear; look between them
		return sdk.Result{}, err
	}
	found := k.find(call.Run.Output, ref, &buf)
	matched := 0
	var missing []string
	for i, w := range ref {
		if found[i] {
			matched++
		} else if len(missing) < 10 {
			missing = append(missing, w)
		}
	}
	reason := string(text(make([]byte, 0, 64)).s("the output has ").d(matched).s(" of the input's ").d(len(ref)).s(" keywords"))
	if len(missing) > 0 {
		reason += "; missing: " + strings.Join(missing, ", ")
	}
	res := sdk.Scored(float64(matched)/float64(len(ref)), reason)
	res.Steps = []sdk.Step{numbersStep("analyze", []string{"matched_keywords", "total_keywords"}, []float64{float64(matched), float64(len(ref))})}
	return res, nil
}

// keywords extracts the distinct keywords of s, in order.
func (k *keywordCoverageScorer) keywords(s string, buf *[]byte) []string {
	var out []string
	var seen map[string]struct{} // past a few keywords; a scan of out before
	eachJSWord(stripTags(s), func(w string) bool {
		key, ok := keyword(w, buf)
		if !ok {
			return true
		}
		if _, stop := k.stop[key]; stop {
			return true
		}
		if seen != nil {
			if _, dup := seen[key]; dup {
				return true
			}
		} else if slices.Contains(out, key) {
			return true
		}
		key = strings.Clone(key) // key may be a view of buf
		out = append(out, key)
		if seen != nil {
			seen[key] = struct{}{}
		} else if len(out) == 16 {
			seen = make(map[string]struct{}, 32)
			for _, w := range out {
				seen[w] = struct{}{}
			}
		}
		return true
	})
	return out
}

// find reports, for each keyword of ref, whether a word of s is that keyword. The output's
// words go through the same normalization as the input's, but need no stop list (no
// keyword is a stop word) and no set of their own; the scan ends once every keyword is
// found.
func (k *keywordCoverageScorer) find(s string, ref []string, buf *[]byte) []bool {
	found := make([]bool, len(ref))
	left := len(ref)
	var index map[string]int
	if len(ref) > 8 {
		index = make(map[string]int, len(ref))
		for i, w := range ref {
			index[w] = i
		}
	}
	eachJSWord(stripTags(s), func(w string) bool {
		key, ok := keyword(w, buf)
		if !ok {
			return true
		}
		i := -1
		if index != nil {
			if j, hit := index[key]; hit {
				i = j
			}
		} else {
			i = slices.Index(ref, key)
		}
		if i >= 0 && !found[i] {
			found[i] = true
			left--
		}
		return left > 0
	})
	return found
}

// eachJSWord calls fn with every run of characters other than JavaScript white space, in
// order, until fn returns false.
func eachJSWord(text string, fn func(w string) bool) {
	start := -1
	for i := 0; i <= len(text); {
		space, size := true, 1
		if i < len(text) {
			if c := text[i]; c < utf8.RuneSelf {
				space = c == ' ' || c-'\t' <= '\r'-'\t'
			} else {
				var r rune
				r, size = utf8.DecodeRuneInString(text[i:])
				space = isJSSpace(r)
			}
		}
		switch {
		case !space && start < 0:
			start = i
		case space && start >= 0:
			if !fn(text[start:i]) {
				return
			}
			start = -1
		}
		i += size
	}
}

// keyword normalizes w, one white-space-separated word, as keyword-extractor does before
// its stop list: sentence punctuation stripped and lower-cased unless w is a URL. ok is
// false for a word that is never a keyword (empty, all digits, a lone _ @ & #). The result
// may be a view of *buf, valid until the next call.
func keyword(w string, buf *[]byte) (key string, ok bool) {
	// One pass over an ASCII word says what it needs (keywordSlow reads it up to five
	// times: for ':', punctuation, digits, upper case and to lower it, which a WebAssembly
	// guest pays for byte by byte); words with non-ASCII, punctuation to strip, one
	// character, only digits or an upper-case URL take the general path.
	colon, punct, digits, upper := false, false, true, false
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c >= utf8.RuneSelf:
			return keywordSlow(w, buf)
		case c-'a' < 26:
			digits = false
		case c-'A' < 26:
			digits, upper = false, true
		case c-'0' < 10:
		default:
			digits = false
			switch c {
			case ':':
				colon, punct = true, true
			case '.', ',', ';', '!', '?', '(', ')', '"', '\'':
				punct = true
			}
		}
	}
	if punct && !(colon && (strings.Contains(w, "http://") || strings.Contains(w, "https://"))) || len(w) <= 1 || digits || upper && colon {
		return keywordSlow(w, buf)
	}
	if !upper {
		return w, true
	}
	b := append((*buf)[:0], w...)
	for i, c := range b {
		if c-'A' < 26 {
			b[i] = c + 'a' - 'A'
		}
	}
	*buf = b
	return unsafe.String(unsafe.SliceData(b), len(b)), true
}

// keywordSlow is keyword for any word.
func keywordSlow(w string, buf *[]byte) (key string, ok bool) {
	url := strings.IndexByte(w, ':') >= 0 && (strings.Contains(w, "http://") || strings.Contains(w, "https://"))
	if !url && hasPunct(w) {
		*buf = stripPunctTo((*buf)[:0], w)
		w = unsafe.String(unsafe.SliceData(*buf), len(*buf))
	}
	if len(w) == 1 && strings.ContainsRune("_@&#", rune(w[0])) {
		return "", false
	}
	if w == "" || allDigits(w) {
		return "", false
	}
	if url {
		return w, true // no stop word holds "://", so the stop list never drops a URL
	}
	return lowerInto(w, buf), true
}

// lowerInto is strings.ToLower(w), written into *buf when w is ASCII with upper case (w may
// itself be a view of *buf), and w itself when it has none.
func lowerInto(w string, buf *[]byte) string {
	upper := false
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= utf8.RuneSelf {
			return strings.ToLower(w)
		}
		upper = upper || c-'A' < 26
	}
	if !upper {
		return w
	}
	b := append((*buf)[:0], w...)
	for i, c := range b {
		if c-'A' < 26 {
			b[i] = c + 'a' - 'A'
		}
	}
	*buf = b
	return unsafe.String(unsafe.SliceData(b), len(b))
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

// stripPunctTo appends w without . , ; ! ? ( ) : " and curly quotes anywhere, and without a
// straight apostrophe at either end, to dst. An invalid byte becomes U+FFFD, as ranging
// over w yields it.
func stripPunctTo(dst []byte, w string) []byte {
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
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

func allDigits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}

// hasPunct is strings.ContainsAny(w, ".,;!?():\"'\u201C\u201D\u2018\u2019") in one byte
// loop: a set with non-ASCII characters makes ContainsAny decode w and search the set per rune.
func hasPunct(w string) bool {
	for i := 0; i < len(w); i++ {
		switch w[i] {
		case '.', ',', ';', '!', '?', '(', ')', ':', '"', '\'':
			return true
		case 0xE2: // U+2018, U+2019, U+201C, U+201D are E2 80 98/99/9C/9D
			if i+2 < len(w) && w[i+1] == 0x80 {
				switch w[i+2] {
				case 0x98, 0x99, 0x9C, 0x9D:
					return true
				}
			}
		}
	}
	return false
}
