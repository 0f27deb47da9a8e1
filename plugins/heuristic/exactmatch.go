package heuristic

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// exactMatchScorer is the scorer NewExactMatch returns.
type exactMatchScorer struct {
	cfg exactConfig
}

type exactConfig struct {
	IgnoreCase bool `json:"ignore_case"`
	Trim       bool `json:"trim"`
	refConfig
}

var (
	_ sdk.Scorer     = (*exactMatchScorer)(nil)
	_ sdk.Configurer = (*exactMatchScorer)(nil)
)

// NewExactMatch returns the exact match scorer with its default config.
// A turn whose only output is its tool calls is skipped: there is no text to compare.
//
// It scores 1 when the output equals the reference and 0 otherwise, as autoevals'
// ExactMatch does for strings. The reference is run.expected unless expected_from says
// otherwise; a run without one is skipped. ignore_case and trim relax the comparison; both
// are off by default, which is autoevals' behaviour.
func NewExactMatch() sdk.Scorer { return &exactMatchScorer{cfg: exactConfig{refConfig: fromExpected}} }

const exactSchema = `{"type": "object", "additionalProperties": false, "properties": {
	"ignore_case": {"type": "boolean", "description": "Compare case-insensitively. Optional. Default is false."},
	"trim": {"type": "boolean", "description": "Ignore leading and trailing white space. Optional. Default is false."},
	` + expectedFromSchema + `}}`

// Info describes the scorer.
func (*exactMatchScorer) Info() sdk.Info {
	return describe("exact_match",
		"1 when the output equals the expected answer, else 0. autoevals' ExactMatch.",
		1, exactSchema, `{"ignore_case": false, "trim": false, "expected_from": "expected"}`)
}

// Configure applies the config.
func (e *exactMatchScorer) Configure(raw json.RawMessage) error {
	return configure("exact_match", e.Info().Defaults, raw, &e.cfg)
}

// Score grades call.Run: output == reference.
func (e *exactMatchScorer) Score(_ context.Context, call sdk.Call) (sdk.Result, error) {
	want, skip := reference("exact_match", e.cfg.ExpectedFrom, &call.Run)
	if skip != nil {
		return *skip, nil
	}
	got := call.Run.Output
	if e.cfg.Trim {
		got, want = strings.TrimSpace(got), strings.TrimSpace(want)
	}
	equal := got == want
	if e.cfg.IgnoreCase {
		equal = strings.EqualFold(got, want)
	}
	if equal {
		return sdk.Scored(1, "the output equals the expected answer"), nil
	}
	return sdk.Scored(0, "the output differs from the expected answer"), nil
}
