package heuristic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// levenshteinScorer is the scorer NewLevenshtein returns.
type levenshteinScorer struct {
	cfg levenshteinConfig
}

type levenshteinConfig struct {
	IgnoreCase bool `json:"ignore_case"`
	refConfig
}

var (
	_ sdk.Scorer     = (*levenshteinScorer)(nil)
	_ sdk.Configurer = (*levenshteinScorer)(nil)
)

// NewLevenshtein returns the Levenshtein scorer with its default config.
// A turn whose only output is its tool calls is skipped: there is no text to compare.
//
// It scores 1 - edit distance / length of the longer text, comparing the output
// with the reference character by character, as autoevals' Levenshtein does; two empty texts
// score 1.
//
// The distance is computed with Myers' bit-parallel algorithm (64 characters per machine
// word). Beyond alignBudget word steps (both texts longer than about 32,000 characters) it is
// computed within a band around the diagonal: exact when the texts differ by fewer edits than
// the band is wide, otherwise an upper bound (so the score is a lower bound), and the result
// is flagged approximated. The reference is run.expected unless expected_from says otherwise; a run without
// one is skipped.
func NewLevenshtein() sdk.Scorer {
	return &levenshteinScorer{cfg: levenshteinConfig{refConfig: fromExpected}}
}

const levenshteinSchema = `{"type": "object", "additionalProperties": false, "properties": {
	"ignore_case": {"type": "boolean", "description": "Compare lower-cased text. Optional. Default is false."},
	` + expectedFromSchema + `}}`

// Info describes the scorer.
func (*levenshteinScorer) Info() sdk.Info {
	return describe("levenshtein",
		"1 - Levenshtein edit distance / length of the longer of output and expected answer. autoevals' Levenshtein.",
		0.5, levenshteinSchema, `{"ignore_case": false, "expected_from": "expected"}`)
}

// Configure applies the config.
func (l *levenshteinScorer) Configure(raw json.RawMessage) error {
	return configure("levenshtein", l.Info().Defaults, raw, &l.cfg)
}

// Score grades call.Run: normalized edit similarity of output and reference.
func (l *levenshteinScorer) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	want, skip := reference("levenshtein", l.cfg.ExpectedFrom, &call.Run)
	if skip != nil {
		return *skip, nil
	}
	got := call.Run.Output
	if l.cfg.IgnoreCase {
		got, want = strings.ToLower(got), strings.ToLower(want)
	}
	a, b := []rune(got), []rune(want)
	d, exact, err := editDistance(ctx, a, b, alignBudget)
	if err != nil {
		return sdk.Result{}, err
	}
	n := max(len(a), len(b))
	score := levenshteinScore(d, n)
	if !exact {
		res := sdk.Scored(score, fmt.Sprintf("edit distance at most %d over %d characters (approximated: both texts are too long for an exact distance within the cost limit)", d, n))
		res.Flags = []string{FlagApproximated}
		return res, nil
	}
	return sdk.Scored(score, fmt.Sprintf("edit distance %d over %d characters", d, n)), nil
}

// levenshteinScore is 1 - d / n, and 1 when n is 0.
func levenshteinScore(d, n int) float64 {
	if n == 0 {
		return 1
	}
	return 1 - float64(d)/float64(n)
}
