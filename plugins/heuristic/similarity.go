package heuristic

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/scorekit/scorekit/sdk"
)

// contentSimilarityScorer is the scorer NewContentSimilarity returns.
type contentSimilarityScorer struct {
	cfg similarityConfig
	// counts holds *simScratch: zeroed tables for diceRunes and fold buffers, so concurrent
	// calls each have their own.
	counts sync.Pool
}

type similarityConfig struct {
	IgnoreCase       bool `json:"ignore_case"`
	IgnoreWhitespace bool `json:"ignore_whitespace"`
}

var (
	_ sdk.Scorer     = (*contentSimilarityScorer)(nil)
	_ sdk.Configurer = (*contentSimilarityScorer)(nil)
)

// NewContentSimilarity returns the content similarity scorer with its default config.
// A turn whose only output is its tool calls is skipped: there is no text to compare.
//
// It compares the input and the output text with the Dice coefficient over
// character bigrams (the string-similarity algorithm Mastra's content similarity scorer
// uses): 2 x shared bigrams / (bigrams of the input + bigrams of the output), counting
// repeated bigrams as often as both sides have them. White space is removed before the
// bigrams are taken; by default case is ignored and runs of white space collapsed first.
// Identical texts (including two empty ones) score 1; a text shorter than 2 characters
// against a different one scores 0.
func NewContentSimilarity() sdk.Scorer {
	return &contentSimilarityScorer{cfg: similarityConfig{IgnoreCase: true, IgnoreWhitespace: true}}
}

const similaritySchema = `{"type": "object", "additionalProperties": false, "properties": {
	"ignore_case": {"type": "boolean", "description": "Compare lower-cased text. Optional. Default is true."},
	"ignore_whitespace": {"type": "boolean", "description": "Collapse runs of white space and trim before comparing. Optional. Default is true."}}}`

// Info describes the scorer.
func (*contentSimilarityScorer) Info() sdk.Info {
	return describe("content_similarity",
		"Dice coefficient over character bigrams of the input and the output; 1 for identical text. Mastra's content similarity scorer.",
		0.5, similaritySchema, `{"ignore_case": true, "ignore_whitespace": true}`)
}

// Configure applies the config.
func (s *contentSimilarityScorer) Configure(raw json.RawMessage) error {
	return configure("content_similarity", s.Info().Defaults, raw, &s.cfg)
}

// Score grades call.Run: bigram similarity of input and output.
func (s *contentSimilarityScorer) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	if r, ok := skipToolOnly("content_similarity", &call.Run); ok {
		return r, nil
	}
	// Collapsing white space (ignore_whitespace) cannot change the score: the bigrams are
	// taken after every white-space character is dropped. Lower-casing and dropping happen in
	// one pass per text.
	sc, _ := s.counts.Get().(*simScratch)
	if sc == nil {
		sc = new(simScratch)
	}
	var score float64
	if in, out := call.Run.Input, call.Run.Output; isASCII(in) && isASCII(out) {
		// ASCII text is its own runes: fold it into bytes, no rune slices.
		sc.a, sc.b = foldASCII(sc.a[:0], in, s.cfg.IgnoreCase), foldASCII(sc.b[:0], out, s.cfg.IgnoreCase)
		if err := ctx.Err(); err != nil { // each pass is linear; look between them
			s.counts.Put(sc)
			return sdk.Result{}, err
		}
		score = diceASCII(sc.a, sc.b, &sc.counts)
		if cap(sc.a) > 1<<16 || cap(sc.b) > 1<<16 {
			sc.a, sc.b = nil, nil // a long text's buffers are not kept
		}
	} else {
		ra := foldRunes(in, s.cfg.IgnoreCase)
		rb := foldRunes(out, s.cfg.IgnoreCase)
		if err := ctx.Err(); err != nil { // each pass is linear; look between them
			s.counts.Put(sc)
			return sdk.Result{}, err
		}
		score = diceRunes(ra, rb, &sc.counts)
	}
	s.counts.Put(sc)
	return sdk.Scored(score, string(text(make([]byte, 0, 64)).s("character-bigram similarity of input and output is ").f2(score))), nil
}

// foldRunes returns the runes of s without white space, lower-cased when lower is set: what
// dropSpace(strings.ToLower(s)) returns, in one pass.
func foldRunes(s string, lower bool) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch c {
			case '\t', '\n', '\v', '\f', '\r', ' ':
				continue
			}
			if lower && c-'A' < 26 {
				c += 'a' - 'A'
			}
			out = append(out, rune(c))
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if unicode.IsSpace(r) {
			continue
		}
		if lower {
			r = unicode.ToLower(r)
		}
		out = append(out, r)
	}
	return out
}

// simScratch is what one call of ContentSimilarity reuses from the last.
type simScratch struct {
	counts bigramCounts
	a, b   []byte
}

// foldASCII appends the ASCII text s to dst without white space, lower-cased when lower is
// set: foldRunes for ASCII.
func foldASCII(dst []byte, s string, lower bool) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\t', '\n', '\v', '\f', '\r', ' ':
			continue
		}
		if lower && c-'A' < 26 {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// diceASCII is diceRunes over ASCII texts folded by foldASCII.
func diceASCII(a, b []byte, counts *bigramCounts) float64 {
	if bytes.Equal(a, b) {
		return 1
	}
	if len(a) < 2 || len(b) < 2 {
		return 0
	}
	for i := 0; i+1 < len(a); i++ {
		counts[int(a[i])<<7|int(a[i+1])]++
	}
	shared := 0
	for i := 0; i+1 < len(b); i++ {
		if n := &counts[int(b[i])<<7|int(b[i+1])]; *n > 0 {
			shared++
			*n--
		}
	}
	for i := 0; i+1 < len(a); i++ {
		counts[int(a[i])<<7|int(a[i+1])] = 0
	}
	return 2 * float64(shared) / float64(len(a)+len(b)-2)
}

// diceBigrams is string-similarity's compareTwoStrings, over runes.
func diceBigrams(a, b string) float64 {
	return diceRunes(dropSpace(a), dropSpace(b), new(bigramCounts))
}

// bigramCounts counts bigrams of two ASCII characters, indexed by first<<7|second.
type bigramCounts [1 << 14]int32

// diceRunes is diceBigrams over texts already stripped of white space. counts must be zero;
// diceRunes leaves it zero.
func diceRunes(ra, rb []rune, counts *bigramCounts) float64 {
	if slices.Equal(ra, rb) {
		return 1
	}
	if len(ra) < 2 || len(rb) < 2 {
		return 0
	}
	// The multiset intersection of the two texts' bigrams: each bigram of b counts while a
	// still has a copy of it, as the reference's decrementing map does. Bigrams of two ASCII
	// characters are counted in a table; the rest are sorted and merged.
	var restA, restB []uint64
	for i := 0; i+1 < len(ra); i++ {
		x, y := ra[i], ra[i+1]
		if x|y < utf8.RuneSelf {
			counts[x<<7|y]++
		} else {
			restA = append(restA, uint64(uint32(x))<<32|uint64(uint32(y)))
		}
	}
	shared := 0
	for i := 0; i+1 < len(rb); i++ {
		x, y := rb[i], rb[i+1]
		if x|y < utf8.RuneSelf {
			if n := &counts[x<<7|y]; *n > 0 {
				shared++
				*n--
			}
		} else {
			restB = append(restB, uint64(uint32(x))<<32|uint64(uint32(y)))
		}
	}
	for i := 0; i+1 < len(ra); i++ {
		if x, y := ra[i], ra[i+1]; x|y < utf8.RuneSelf {
			counts[x<<7|y] = 0
		}
	}
	if len(restA) > 0 && len(restB) > 0 {
		slices.Sort(restA)
		slices.Sort(restB)
		i, j := 0, 0
		for i < len(restA) && j < len(restB) {
			switch {
			case restA[i] == restB[j]:
				shared++
				i++
				j++
			case restA[i] < restB[j]:
				i++
			default:
				j++
			}
		}
	}
	return 2 * float64(shared) / float64(len(ra)+len(rb)-2)
}

func dropSpace(s string) []rune {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if !unicode.IsSpace(r) {
			out = append(out, r)
		}
	}
	return out
}
