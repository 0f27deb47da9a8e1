package heuristic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// numericDiffScorer is the scorer NewNumericDiff returns.
type numericDiffScorer struct {
	cfg numericConfig
}

type numericConfig struct {
	refConfig
}

var (
	_ sdk.Scorer     = (*numericDiffScorer)(nil)
	_ sdk.Configurer = (*numericDiffScorer)(nil)
)

// NewNumericDiff returns the numeric difference scorer with its default config.
// A turn whose only output is its tool calls is skipped: there is no text to compare.
//
// It scores how close the output's number is to the reference's, as autoevals'
// NumericDiff does: 1 - |expected - output| / (|expected| + |output|), and 1 when both are 0.
// Both texts must be plain numbers after trimming white space (strconv.ParseFloat syntax).
// A reference that is absent or not a number skips the run; an output that is not a number
// scores 0 with the not_a_number flag, since the answer itself is wrong.
func NewNumericDiff() sdk.Scorer {
	return &numericDiffScorer{cfg: numericConfig{refConfig: fromExpected}}
}

const numericSchema = `{"type": "object", "additionalProperties": false, "properties": {
	` + expectedFromSchema + `}}`

// Info describes the scorer.
func (*numericDiffScorer) Info() sdk.Info {
	return describe("numeric_diff",
		"1 - |expected - output| / (|expected| + |output|) for numeric output and expected answer. autoevals' NumericDiff.",
		0.5, numericSchema, `{"expected_from": "expected"}`)
}

// Configure applies the config.
func (n *numericDiffScorer) Configure(raw json.RawMessage) error {
	return configure("numeric_diff", n.Info().Defaults, raw, &n.cfg)
}

// Score grades call.Run: relative difference of output and reference.
func (n *numericDiffScorer) Score(_ context.Context, call sdk.Call) (sdk.Result, error) {
	ref, skip := reference("numeric_diff", n.cfg.ExpectedFrom, &call.Run)
	if skip != nil {
		return *skip, nil
	}
	want, err := parseNumber(ref)
	if err != nil {
		return sdk.Skipped(fmt.Sprintf("numeric_diff needs a numeric expected answer; %q is not a number", clip(ref, 40))), nil
	}
	got, err := parseNumber(call.Run.Output)
	if err != nil {
		res := sdk.Scored(0, fmt.Sprintf("the output %q is not a number", clip(call.Run.Output, 40)))
		res.Flags = []string{"not_a_number"}
		return res, nil
	}
	score := numericDiff(got, want)
	return sdk.Scored(score, fmt.Sprintf("output %v vs expected %v", got, want)), nil
}

// errNotNumber is parseNumber's error; the callers quote the text themselves, clipped.
var errNotNumber = errors.New("not a finite number")

func parseNumber(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errNotNumber
	}
	return v, nil
}

// numericDiff is autoevals' formula.
func numericDiff(got, want float64) float64 {
	if got == 0 && want == 0 {
		return 1
	}
	return 1 - math.Abs(want-got)/(math.Abs(want)+math.Abs(got))
}

// clip shortens s to at most n runes for messages, reading no further than it needs.
func clip(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return string([]rune(s[:k])) + "..." // invalid bytes become U+FFFD, as before
		}
		i++
	}
	return s
}
