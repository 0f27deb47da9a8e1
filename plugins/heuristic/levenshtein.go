package heuristic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// Levenshtein scores 1 - edit distance / length of the longer text, comparing the output
// with the reference character by character, as autoevals' Levenshtein does; two empty texts
// score 1. The reference is run.expected unless expected_from says otherwise; a run without
// one is skipped.
type Levenshtein struct {
	cfg levenshteinConfig
}

type levenshteinConfig struct {
	IgnoreCase   bool   `json:"ignore_case"`
	ExpectedFrom string `json:"expected_from"`
}

var (
	_ sdk.Scorer     = (*Levenshtein)(nil)
	_ sdk.Configurer = (*Levenshtein)(nil)
)

// NewLevenshtein returns the Levenshtein scorer with its default config.
func NewLevenshtein() sdk.Scorer {
	return &Levenshtein{cfg: levenshteinConfig{ExpectedFrom: "expected"}}
}

const levenshteinSchema = `{"type": "object", "additionalProperties": false, "properties": {
	"ignore_case": {"type": "boolean", "description": "Compare lower-cased text. Optional. Default is false."},
	` + expectedFromSchema + `}}`

// Info describes the scorer.
func (*Levenshtein) Info() sdk.Info {
	return describe("levenshtein",
		"1 - Levenshtein edit distance / length of the longer of output and expected answer. autoevals' Levenshtein.",
		0.5, levenshteinSchema, `{"ignore_case": false, "expected_from": "expected"}`)
}

// Configure applies the config.
func (l *Levenshtein) Configure(raw json.RawMessage) error {
	cfg := levenshteinConfig{}
	if err := decodeConfig("levenshtein", l.Info().Defaults, raw, &cfg); err != nil {
		return err
	}
	if err := checkExpectedFrom("levenshtein", cfg.ExpectedFrom); err != nil {
		return err
	}
	l.cfg = cfg
	return nil
}

// Score grades call.Run: normalized edit similarity of output and reference.
func (l *Levenshtein) Score(_ context.Context, call sdk.Call) (sdk.Result, error) {
	want, skip := reference("levenshtein", l.cfg.ExpectedFrom, &call.Run)
	if skip != nil {
		return *skip, nil
	}
	got := call.Run.Output
	if l.cfg.IgnoreCase {
		got, want = strings.ToLower(got), strings.ToLower(want)
	}
	d, n := editDistance([]rune(got), []rune(want))
	score := levenshteinScore(d, n)
	return sdk.Scored(score, fmt.Sprintf("edit distance %d over %d characters", d, n)), nil
}

// levenshteinScore is 1 - d / n, and 1 when n is 0.
func levenshteinScore(d, n int) float64 {
	if n == 0 {
		return 1
	}
	return 1 - float64(d)/float64(n)
}

// editDistance returns the Levenshtein distance of a and b and the length of the longer.
func editDistance(a, b []rune) (dist, longer int) {
	longer = max(len(a), len(b))
	if len(a) < len(b) {
		a, b = b, a
	}
	if len(b) == 0 {
		return len(a), longer
	}
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		diag := row[0]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			up := row[j]
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			row[j] = min(row[j]+1, row[j-1]+1, diag+cost)
			diag = up
		}
	}
	return row[len(b)], longer
}
