package heuristic

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/scorekit/scorekit/sdk"
)

// ContentSimilarity compares the input and the output text with the Dice coefficient over
// character bigrams (the string-similarity algorithm Mastra's content similarity scorer
// uses): 2 x shared bigrams / (bigrams of the input + bigrams of the output), counting
// repeated bigrams as often as both sides have them. White space is removed before the
// bigrams are taken; by default case is ignored and runs of white space collapsed first.
// Identical texts (including two empty ones) score 1; a text shorter than 2 characters
// against a different one scores 0.
type ContentSimilarity struct {
	cfg similarityConfig
}

type similarityConfig struct {
	IgnoreCase       bool `json:"ignore_case"`
	IgnoreWhitespace bool `json:"ignore_whitespace"`
}

var (
	_ sdk.Scorer     = (*ContentSimilarity)(nil)
	_ sdk.Configurer = (*ContentSimilarity)(nil)
)

// NewContentSimilarity returns the content similarity scorer with its default config.
func NewContentSimilarity() sdk.Scorer {
	return &ContentSimilarity{cfg: similarityConfig{IgnoreCase: true, IgnoreWhitespace: true}}
}

const similaritySchema = `{"type": "object", "additionalProperties": false, "properties": {
	"ignore_case": {"type": "boolean", "description": "Compare lower-cased text. Optional. Default is true."},
	"ignore_whitespace": {"type": "boolean", "description": "Collapse runs of white space and trim before comparing. Optional. Default is true."}}}`

// Info describes the scorer.
func (*ContentSimilarity) Info() sdk.Info {
	return describe("content_similarity",
		"Dice coefficient over character bigrams of the input and the output; 1 for identical text. Mastra's content similarity scorer.",
		0.5, similaritySchema, `{"ignore_case": true, "ignore_whitespace": true}`)
}

// Configure applies the config.
func (s *ContentSimilarity) Configure(raw json.RawMessage) error {
	cfg := similarityConfig{}
	if err := decodeConfig("content_similarity", s.Info().Defaults, raw, &cfg); err != nil {
		return err
	}
	s.cfg = cfg
	return nil
}

// Score grades call.Run: bigram similarity of input and output.
func (s *ContentSimilarity) Score(_ context.Context, call sdk.Call) (sdk.Result, error) {
	a, b := call.Run.Input, call.Run.Output
	if s.cfg.IgnoreCase {
		a, b = strings.ToLower(a), strings.ToLower(b)
	}
	if s.cfg.IgnoreWhitespace {
		a, b = collapseSpace(a), collapseSpace(b)
	}
	score := diceBigrams(a, b)
	return sdk.Scored(score, fmt.Sprintf("character-bigram similarity of input and output is %.2f", score)), nil
}

// diceBigrams is string-similarity's compareTwoStrings, over runes.
func diceBigrams(a, b string) float64 {
	ra, rb := dropSpace(a), dropSpace(b)
	if slices.Equal(ra, rb) {
		return 1
	}
	if len(ra) < 2 || len(rb) < 2 {
		return 0
	}
	ba, bb := bigrams(ra), bigrams(rb)
	// The multiset intersection of two sorted lists: each bigram of b counts while a still
	// has a copy of it, as the reference's decrementing map does.
	shared, i, j := 0, 0, 0
	for i < len(ba) && j < len(bb) {
		switch {
		case ba[i] == bb[j]:
			shared++
			i++
			j++
		case ba[i] < bb[j]:
			i++
		default:
			j++
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

// bigrams returns the sorted bigrams of r, each packed into a uint64.
func bigrams(r []rune) []uint64 {
	out := make([]uint64, len(r)-1)
	for i := range out {
		out[i] = uint64(uint32(r[i]))<<32 | uint64(uint32(r[i+1]))
	}
	slices.Sort(out)
	return out
}
