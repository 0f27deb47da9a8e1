package heuristic

import (
	"bufio"
	"context"
	_ "embed" // the lexicon
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/scorekit/scorekit/sdk"
)

// toneScorer is the scorer NewTone returns.
type toneScorer struct {
	cfg     toneConfig
	lexicon map[string]float64
	words   toneWords // the lexicon and the negators, for the tokenizer's lookups
}

type toneConfig struct {
	ReferenceTone string `json:"reference_tone"`
	CompareInput  bool   `json:"compare_input"`
}

// check refuses a config that sets both references.
func (c toneConfig) check(name string) error {
	if c.ReferenceTone != "" && c.CompareInput {
		return fmt.Errorf("configure %s: reference_tone and compare_input are both set; keep one", name)
	}
	return nil
}

var (
	_ sdk.Scorer     = (*toneScorer)(nil)
	_ sdk.Configurer = (*toneScorer)(nil)
)

//go:embed tone_lexicon.txt
var toneLexicon string

// NewTone returns the tone scorer with its default config (stability of the output's tone).
// A turn whose only output is its tool calls is skipped: there is no text to compare.
//
// It measures sentiment consistency, as Mastra's tone scorer does with the sentiment
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
	return &toneScorer{lexicon: lex, words: newToneWords(lex, toneNegators)}
}

const toneSchema = `{"type": "object", "additionalProperties": false, "properties": {
	"reference_tone": {"type": "string", "description": "A text whose sentiment the output should match. Optional. Default is none: score the stability of the output's tone across its sentences."},
	"compare_input": {"type": "boolean", "description": "Use the run's input as the reference tone. Optional. Default is false."}}}`

// Info describes the scorer.
func (*toneScorer) Info() sdk.Info {
	return describe("tone",
		"Sentiment consistency: closeness of the output's sentiment to a reference tone (reference_tone, or the input "+
			"with compare_input), else stability of the tone across the output's sentences. Mastra's tone scorer.",
		0.5, toneSchema, `{"reference_tone": "", "compare_input": false}`)
}

// Configure applies the config.
func (t *toneScorer) Configure(raw json.RawMessage) error {
	return configure("tone", t.Info().Defaults, raw, &t.cfg)
}

// Score grades call.Run: tone consistency of the output.
func (t *toneScorer) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	if r, ok := skipToolOnly("tone", &call.Run); ok {
		return r, nil
	}
	out := call.Run.Output
	ref, hasRef := t.cfg.ReferenceTone, t.cfg.ReferenceTone != ""
	if t.cfg.CompareInput {
		ref, hasRef = call.Run.Input, true
	}
	if hasRef {
		rs, fs := t.comparative(out), t.comparative(ref)
		diff := math.Abs(rs - fs)
		b := text(make([]byte, 0, 256)).s("output sentiment ").f2(rs).s(" vs reference ").f2(fs).s(" (difference ").f2(diff).s(")")
		res := sdk.Scored(math.Max(0, 1-diff), unsafe.String(unsafe.SliceData(b), len(b)))
		res.Steps = []sdk.Step{appendNumbersStep(b[len(b):len(b)], "preprocess", []string{"difference", "reference_sentiment", "response_sentiment"}, []float64{diff, fs, rs})}
		return res, nil
	}
	var stack [32]float64
	scores, err := t.scan(ctx, out, true, stack[:0])
	if err != nil {
		return sdk.Result{}, err
	}
	mean := 0.0
	for _, v := range scores {
		mean += v
	}
	mean /= float64(len(scores))
	variance := 0.0
	for _, s := range scores {
		variance += (s - mean) * (s - mean)
	}
	variance /= float64(len(scores))
	// The reason and the step's output share one allocation: the output is appended after
	// the reason's bytes, which are never written again.
	b := text(make([]byte, 0, 192)).s("tone across ").d(len(scores)).s(" sentences: mean sentiment ").f2(mean).s(", variance ").f2(variance)
	res := sdk.Scored(math.Max(0, 1-variance), unsafe.String(unsafe.SliceData(b), len(b)))
	res.Steps = []sdk.Step{appendNumbersStep(b[len(b):len(b)], "preprocess", []string{"avg_sentiment", "sentiment_variance"}, []float64{mean, variance})}
	return res, nil
}

// comparative is the sentiment package's comparative score of s: the sum of its token
// valences (negated after a negator) over its number of tokens.
func (t *toneScorer) comparative(s string) float64 {
	var one [1]float64
	scores, _ := t.scan(context.Background(), s, false, one[:0])
	return scores[0]
}

// scan appends to scores the comparative score of s or, with split, of each of s's
// sentences: the matches of /[^.!?]+[.!?]+/g, or s itself when there is none (text after
// the last terminator is dropped). It reads s once, tokenizing as sentimentText and a split
// on single spaces do (the references in the tests), and looks each token up as it ends.
// A token of kept ASCII characters is read in place in s; any other is copied, lower-cased,
// into a small array: a token longer than any listed word cannot be one, so past the array
// only its length is counted. A sentence's terminators become spaces at its end, which the
// tokenizer trims, so a sentence scores as the text before its first terminator; leading
// terminators are white space before the first sentence.
func (t *toneScorer) scan(ctx context.Context, s string, split bool, scores []float64) ([]float64, error) {
	var tok [toneMaxWord]byte
	sum, n := 0.0, 0
	prevNeg := false // the previous token is a negator
	tl := 0          // the current token's length in bytes; past len(tok) only counted
	raw := 0         // with tl > 0: where the token starts in s if it is s's bytes lower-cased, else -1 (it is in tok)
	started := false // a character other than white space was seen: white space now counts
	inSentence := false
	var pending rune // the white space seen since the last other character
	spaces := 0
	for i := 0; i < len(s); {
		var r rune
		var m byte
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			if m = sentimentASCII[c]; m&0x80 != 0 { // white space, or punctuation that became a space
				term := c == '.' || c == '!' || c == '?'
				if split && term && inSentence { // the sentence ends
					if v, _, ok := t.words.lookup(s, raw, &tok, tl); ok {
						if prevNeg {
							v = -v
						}
						sum += v
					}
					scores = append(scores, sum/float64(n+1))
					if len(scores)%256 == 0 && ctx.Err() != nil {
						return nil, ctx.Err()
					}
					sum, n, prevNeg, tl, started, inSentence, spaces = 0, 0, false, 0, false, false, 0
					continue
				}
				inSentence = inSentence || !term
				if spaces == 0 {
					pending = rune(m &^ 0x80)
				}
				spaces++
				continue
			}
		} else {
			var size int
			r, size = utf8.DecodeRuneInString(s[i:])
			i += size
			r = unicode.ToLower(r)
			inSentence = true
			if isJSSpace(r) {
				if spaces == 0 {
					pending = r
				}
				spaces++
				continue
			}
		}
		// A character kept: m lower-cased if ASCII, else r.
		inSentence = true
		if spaces > 0 && started {
			if spaces == 1 && pending != ' ' { // a lone white-space character stays in the token
				raw = toTok(&tok, s, raw, tl)
				tl = appendTokenRune(&tok, tl, pending)
			} else { // the token ends
				v, neg, ok := t.words.lookup(s, raw, &tok, tl)
				if ok {
					if prevNeg {
						v = -v
					}
					sum += v
				}
				prevNeg = neg
				n++
				tl = 0
			}
		}
		spaces, started = 0, true
		if c >= utf8.RuneSelf {
			raw = toTok(&tok, s, raw, tl)
			tl = appendTokenRune(&tok, tl, r)
			continue
		}
		if tl == 0 { // a token starts: while it stays s's bytes, only its end is tracked
			raw = i - 1
			for i < len(s) && sentimentKept[s[i]]&0x80 == 0 {
				i++
			}
			tl = i - raw
			continue
		}
		raw = toTok(&tok, s, raw, tl)
		tok[tl%toneMaxWord] = m
		tl++
		// The rest of a run of kept ASCII characters, in a tighter loop. A byte past the
		// array wraps around: such a token is too long to be looked up.
		for i < len(s) {
			m = sentimentKept[s[i]]
			if m&0x80 != 0 {
				break
			}
			tok[tl%toneMaxWord] = m
			tl++
			i++
		}
	}
	if split && len(scores) > 0 {
		return scores, nil // the text after the last terminator is dropped
	}
	// The last token (trailing white space is trimmed; an empty text is one empty token).
	if v, _, ok := t.words.lookup(s, raw, &tok, tl); ok {
		if prevNeg {
			v = -v
		}
		sum += v
	}
	return append(scores, sum/float64(n+1)), nil
}

// toTok moves the token of tl bytes starting at s[raw] into tok, lower-cased, unless it is
// there already (raw < 0), and returns -1: the token is now in tok. A token longer than tok
// is never looked up; its bytes are not copied.
func toTok(tok *[toneMaxWord]byte, s string, raw, tl int) int {
	if raw >= 0 && tl > 0 && tl <= toneMaxWord {
		for j := range tl {
			tok[j] = sentimentKept[s[raw+j]]
		}
	}
	return -1
}

// appendTokenRune writes r's UTF-8 bytes to tok at tl and returns the token's new length.
// Bytes past the array wrap around: a token that long is never looked up.
func appendTokenRune(tok *[toneMaxWord]byte, tl int, r rune) int {
	var enc [utf8.UTFMax]byte
	k := utf8.EncodeRune(enc[:], r)
	for _, b := range enc[:k] {
		tok[tl%toneMaxWord] = b
		tl++
	}
	return tl
}

// toneNegators are the words that flip the sign of the next word's valence.
var toneNegators = []string{"cant", "can't", "dont", "don't", "doesnt", "doesn't", "not", "non", "wont", "won't", "isnt", "isn't"}

func negator(w string) bool { return slices.Contains(toneNegators, w) }

// toneMaxWord is the longest word toneWords holds, in bytes.
const toneMaxWord = 32

// toneWords is an open-addressing hash set of the lexicon's words and the negators, hashed
// by length and first, second and last byte. A slot holds a tag from the hash beside the
// entry's index, so most tokens end on an empty slot or a tag that differs, without a
// comparison: cheaper than a map lookup per token.
type toneWords struct {
	slots   [2048]uint32 // tag<<16 | index+1 into entries; 0 is empty
	entries []toneWord
}

type toneWord struct {
	word    string
	val     float64
	lexicon bool // val is the word's valence (a negator may be unlisted)
	negator bool
}

// toneHash returns the first slot and the tag of an n-byte word (n > 0) from its first,
// second (the first again for one byte) and last byte.
func toneHash(first, second, last byte, n int) (slot, tag uint32) {
	h := (uint32(first) | uint32(second)<<8 | uint32(last)<<16 | uint32(n)<<24) * 0x9E3779B1
	return h >> 21, h & 0xFFFF0000
}

func newToneWords(lex map[string]float64, negators []string) toneWords {
	var w toneWords
	add := func(word string) *toneWord {
		if word == "" || len(word) > toneMaxWord {
			panic(fmt.Sprintf("tone: word %q: lexicon words and negators must be 1 to %d bytes", word, toneMaxWord))
		}
		i, tag := toneHash(word[0], word[min(1, len(word)-1)], word[len(word)-1], len(word))
		for ; ; i = (i + 1) % uint32(len(w.slots)) {
			switch e := w.slots[i]; {
			case e == 0:
				w.entries = append(w.entries, toneWord{word: word})
				w.slots[i] = tag | uint32(len(w.entries))
				return &w.entries[len(w.entries)-1]
			case w.entries[e&0xFFFF-1].word == word:
				return &w.entries[e&0xFFFF-1]
			}
		}
	}
	if len(lex)+len(negators) > len(w.slots)/4 {
		panic("tone: the lexicon outgrew its table; enlarge toneWords.slots")
	}
	for word, v := range lex {
		e := add(word)
		e.val, e.lexicon = v, true
	}
	for _, word := range negators {
		add(word).negator = true
	}
	return w
}

// lookup looks up the token of tl bytes: s[raw:raw+tl] lower-cased when raw >= 0 (kept
// ASCII characters only), else the first bytes of the token in tok.
func (w *toneWords) lookup(s string, raw int, tok *[toneMaxWord]byte, tl int) (val float64, negator, listed bool) {
	if raw < 0 {
		return w.find(tok[:min(tl, len(tok))], tl)
	}
	if tl == 0 || tl > toneMaxWord {
		return 0, false, false
	}
	word := s[raw : raw+tl]
	i, tag := toneHash(sentimentKept[word[0]], sentimentKept[word[min(1, tl-1)]], sentimentKept[word[tl-1]], tl)
	for ; ; i = (i + 1) % uint32(len(w.slots)) {
		e := w.slots[i]
		if e == 0 {
			return 0, false, false
		}
		if e&0xFFFF0000 != tag {
			continue
		}
		if en := &w.entries[e&0xFFFF-1]; len(en.word) == tl && equalLower(en.word, word) {
			return en.val, en.negator, en.lexicon
		}
	}
}

// equalLower reports whether word equals s lower-cased by sentimentKept (same lengths).
func equalLower(word, s string) bool {
	for j := range len(word) {
		if word[j] != sentimentKept[s[j]] {
			return false
		}
	}
	return true
}

// find looks up the token tok of n bytes (tok holds its first bytes): its valence if the
// lexicon lists it, and whether it is a negator.
func (w *toneWords) find(tok []byte, n int) (val float64, negator, listed bool) {
	if n == 0 || n > toneMaxWord {
		return 0, false, false
	}
	i, tag := toneHash(tok[0], tok[min(1, n-1)], tok[n-1], n)
	for ; ; i = (i + 1) % uint32(len(w.slots)) {
		e := w.slots[i]
		if e == 0 {
			return 0, false, false
		}
		if e&0xFFFF0000 == tag {
			if en := &w.entries[e&0xFFFF-1]; en.word == string(tok) {
				return en.val, en.negator, en.lexicon
			}
		}
	}
}

// sentimentASCII maps each ASCII byte as the tokenizer (Tone.scan) reads it: to itself lower-cased,
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

// sentimentKept is sentimentASCII over every byte, a non-ASCII one marked like white space
// (high bit set): the high bit clear means an ASCII character kept, lower-cased.
var sentimentKept = func() (t [256]byte) {
	for c := range t {
		t[c] = 0xFF
		if c < utf8.RuneSelf {
			t[c] = sentimentASCII[c]
		}
	}
	return t
}()
