package heuristic

import (
	"bufio"
	"context"
	_ "embed" // the lexicon
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/scorekit/scorekit/sdk"
)

// Tone measures sentiment consistency, as Mastra's tone scorer does with the sentiment
// package. A text's sentiment is its comparative score: the sum of its words' valences
// (sign flipped after a negator such as "not" or "don't") divided by its number of tokens.
//
//   - With reference_tone (or compare_input) set, the score is max(0, 1 - |sentiment of
//     the output - sentiment of the reference|).
//   - Otherwise it is the stability of the output's tone across its sentences:
//     max(0, 1 - variance of the sentences' sentiments); one sentence scores 1.
//
// The tokenizer and the arithmetic are the reference's; the lexicon is scorekit's own
// (tone_lexicon.txt, about 400 common words), not AFINN, so sentiments differ where a text's
// sentiment words are missing from one list or rated differently. BENCHMARKS.md reports the
// agreement.
type Tone struct {
	cfg     toneConfig
	lexicon map[string]float64
	// lengths[c] has bit n set when a lexicon word of n bytes starts with byte c, so most
	// tokens are passed over without a map lookup.
	lengths [256]uint64
}

type toneConfig struct {
	ReferenceTone string `json:"reference_tone"`
	CompareInput  bool   `json:"compare_input"`
}

var (
	_ sdk.Scorer     = (*Tone)(nil)
	_ sdk.Configurer = (*Tone)(nil)
)

//go:embed tone_lexicon.txt
var toneLexicon string

// NewTone returns the tone scorer with its default config (stability of the output's tone).
func NewTone() sdk.Scorer {
	lex := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(toneLexicon))
	for sc.Scan() {
		word, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(word, "#") {
			continue
		}
		if v, err := strconv.ParseFloat(val, 64); err == nil {
			lex[word] = v
		}
	}
	t := &Tone{lexicon: lex}
	for w := range lex {
		if len(w) > 0 && len(w) < 64 {
			t.lengths[w[0]] |= 1 << len(w)
		} else {
			t.lengths[0] = ^uint64(0) // a word the filter cannot hold: look every token up
		}
	}
	return t
}

const toneSchema = `{"type": "object", "additionalProperties": false, "properties": {
	"reference_tone": {"type": "string", "description": "A text whose sentiment the output should match. Optional. Default is none: score the stability of the output's tone across its sentences."},
	"compare_input": {"type": "boolean", "description": "Use the run's input as the reference tone. Optional. Default is false."}}}`

// Info describes the scorer.
func (*Tone) Info() sdk.Info {
	return describe("tone",
		"Sentiment consistency: closeness of the output's sentiment to a reference tone (reference_tone, or the input "+
			"with compare_input), else stability of the tone across the output's sentences. Mastra's tone scorer.",
		0.5, toneSchema, `{"reference_tone": "", "compare_input": false}`)
}

// Configure applies the config.
func (t *Tone) Configure(raw json.RawMessage) error {
	cfg := toneConfig{}
	if err := decodeConfig("tone", t.Info().Defaults, raw, &cfg); err != nil {
		return err
	}
	if cfg.ReferenceTone != "" && cfg.CompareInput {
		return fmt.Errorf("configure tone: reference_tone and compare_input are both set; keep one")
	}
	t.cfg = cfg
	return nil
}

// Score grades call.Run: tone consistency of the output.
func (t *Tone) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	out := call.Run.Output
	ref, hasRef := t.cfg.ReferenceTone, t.cfg.ReferenceTone != ""
	if t.cfg.CompareInput {
		ref, hasRef = call.Run.Input, true
	}
	if hasRef {
		var buf []byte
		rs, fs := t.comparative(out, &buf), t.comparative(ref, &buf)
		diff := math.Abs(rs - fs)
		res := sdk.Scored(math.Max(0, 1-diff), string(text(make([]byte, 0, 64)).s("output sentiment ").f2(rs).s(" vs reference ").f2(fs).s(" (difference ").f2(diff).s(")")))
		res.Steps = []sdk.Step{numbersStep("preprocess", []string{"difference", "reference_sentiment", "response_sentiment"}, []float64{diff, fs, rs})}
		return res, nil
	}
	var stack [32]float64
	scores := stack[:0]
	buf := make([]byte, 0, min(len(out), 512))
	mean := 0.0
	for i, rest := 0, out; ; i++ {
		s, more := nextSentence(&rest)
		if !more {
			break
		}
		if i%256 == 255 && ctx.Err() != nil {
			return sdk.Result{}, ctx.Err()
		}
		v := t.comparative(s, &buf)
		scores = append(scores, v)
		mean += v
	}
	if len(scores) == 0 { // no terminator: the whole text is one sentence
		v := t.comparative(out, &buf)
		scores = append(scores, v)
		mean += v
	}
	mean /= float64(len(scores))
	variance := 0.0
	for _, s := range scores {
		variance += (s - mean) * (s - mean)
	}
	variance /= float64(len(scores))
	res := sdk.Scored(math.Max(0, 1-variance), string(text(make([]byte, 0, 64)).s("tone across ").d(len(scores)).s(" sentences: mean sentiment ").f2(mean).s(", variance ").f2(variance)))
	res.Steps = []sdk.Step{numbersStep("preprocess", []string{"avg_sentiment", "sentiment_variance"}, []float64{mean, variance})}
	return res, nil
}

// comparative is the sentiment package's comparative score: the sum of token valences
// (negated after a negator) over the number of tokens. buf is reused from call to call.
func (t *Tone) comparative(s string, buf *[]byte) float64 {
	*buf = sentimentText(s, (*buf)[:0])
	text := unsafe.String(unsafe.SliceData(*buf), len(*buf))
	// The tokens are text split on single spaces ("" is one empty token).
	sum, n, prev := 0.0, 0, ""
	for {
		tok, rest, more := strings.Cut(text, " ")
		if t.known(tok) {
			if v, ok := t.lexicon[tok]; ok {
				if n > 0 && negator(prev) {
					v = -v
				}
				sum += v
			}
		}
		n++
		prev = tok
		if !more {
			break
		}
		text = rest
	}
	return sum / float64(n)
}

// known reports whether tok may be in the lexicon, by its first byte and length.
func (t *Tone) known(tok string) bool {
	if t.lengths[0] != 0 {
		return true
	}
	return len(tok) > 0 && len(tok) < 64 && t.lengths[tok[0]]&(1<<len(tok)) != 0
}

func negator(w string) bool {
	switch w {
	case "cant", "can't", "dont", "don't", "doesnt", "doesn't", "not", "non", "wont", "won't", "isnt", "isn't":
		return true
	}
	return false
}

// sentimentTokens is the sentiment package's tokenizer: lower-case; newlines and the
// characters . , / # ! ? $ % ^ & * ; : { } = _ ` " ~ ( ) become spaces; runs of two or more
// white-space characters become one space; trim; split on single spaces.
func sentimentTokens(s string) []string {
	b := sentimentText(s, nil)
	return strings.Split(unsafe.String(unsafe.SliceData(b), len(b)), " ")
}

// sentimentText appends to b the text sentimentTokens splits: lower-cased, the punctuation
// mapped to spaces and runs of white space collapsed as they stream by, trimmed. A lone
// white-space character other than a space is kept, as the package's /\s{2,}/ leaves it.
func sentimentText(s string, b []byte) []byte {
	var pending rune // the white space seen since the last other character
	spaces := 0
	for i := 0; i < len(s); {
		var r rune
		if c := sentimentASCII[s[i]&0x7F]; s[i] < utf8.RuneSelf {
			i++
			if c&0x80 == 0 { // the common case: a character kept, lower-cased
				if spaces > 0 && len(b) > 0 {
					b = appendSpaceRun(b, pending, spaces)
				}
				spaces = 0
				b = append(b, c)
				continue
			}
			r = rune(c &^ 0x80) // white space, or punctuation that became a space
		} else {
			var size int
			r, size = utf8.DecodeRuneInString(s[i:])
			i += size
			r = unicode.ToLower(r)
			if !isJSSpace(r) {
				if spaces > 0 && len(b) > 0 {
					b = appendSpaceRun(b, pending, spaces)
				}
				spaces = 0
				b = utf8.AppendRune(b, r)
				continue
			}
		}
		if spaces == 0 {
			pending = r
		}
		spaces++
	}
	// Trailing white space is trimmed; so is leading (never appended above), so a lone
	// white-space character kept inside never ends up at either end.
	return b
}

// sentimentASCII maps each ASCII byte as sentimentText reads it: to itself lower-cased,
// or, with the high bit set, to the white space it counts as (the punctuation and the
// newline become a space; other white space stays itself).
var sentimentASCII = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		b := byte(c)
		if b-'A' < 26 {
			b += 'a' - 'A'
		}
		switch {
		case strings.IndexByte("\n.,/#!?$%^&*;:{}=_`\"~()", b) >= 0:
			b = ' ' | 0x80
		case b == ' ' || b-'\t' <= '\r'-'\t':
			b |= 0x80
		}
		t[c] = b
	}
	return t
}()

// appendSpaceRun appends a run of n white-space characters starting with first, collapsed
// the way sentimentTokens collapses it.
func appendSpaceRun(b []byte, first rune, n int) []byte {
	switch {
	case n == 1:
		return utf8.AppendRune(b, first)
	case n > 1:
		return append(b, ' ')
	}
	return b
}

// nextSentence cuts the next match of /[^.!?]+[.!?]+/ from *rest; more is false when none
// is left.
func nextSentence(rest *string) (sentence string, more bool) {
	s := *rest
	term := func(c byte) bool { return c == '.' || c == '!' || c == '?' }
	i := 0
	for i < len(s) && term(s[i]) {
		i++
	}
	j := i
	for j < len(s) && !term(s[j]) {
		j++
	}
	if j == len(s) {
		*rest = ""
		return "", false
	}
	k := j
	for k < len(s) && term(s[k]) {
		k++
	}
	*rest = s[k:]
	return s[i:k], true
}

// splitSentences returns the matches of /[^.!?]+[.!?]+/g in s (text after the last
// terminator is dropped, as there), or s itself when there is none.
func splitSentences(s string) []string {
	var out []string
	for rest := s; ; {
		sentence, more := nextSentence(&rest)
		if !more {
			break
		}
		out = append(out, sentence)
	}
	if len(out) == 0 {
		return []string{s}
	}
	return out
}
