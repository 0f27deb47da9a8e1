package noise

import (
	"math"
	"testing"
)

var mastraScoring = scoring{weights: mastraWeights(), perIssue: 0.1, maxIssues: 0.3, thresh: 0.2}

func impacts(levels ...string) []impact {
	out := make([]impact, len(levels))
	for i, l := range levels {
		out[i] = impact{Aspect: aspects[i%len(aspects)], Impact: l}
	}
	return out
}

// TestMastraFormula holds mastraScore to Mastra's generateScore on specified answers.
func TestMastraFormula(t *testing.T) {
	tests := []struct {
		name string
		a    analysis
		s    scoring
		want float64
	}{
		{"untouched", analysis{Impacts: impacts("none", "none", "none", "none", "none"), Robustness: 1}, mastraScoring, 1},
		{"broken", analysis{Impacts: impacts("severe", "severe", "severe", "severe", "severe"), Robustness: 0}, mastraScoring, 0},
		{"the judge's robustness when the ratings agree", analysis{Impacts: impacts("minimal", "minimal", "none", "moderate", "none"), Robustness: 0.9}, mastraScoring, 0.9},
		// mean (0.6*3 + 0.3*2)/5 = 0.48, 0.22 below the judge's 0.7: the lower counts.
		{"ratings lower by more than the threshold", analysis{Impacts: impacts("moderate", "moderate", "significant", "significant", "moderate"), Robustness: 0.7}, mastraScoring, 0.48},
		// mean 1.0, 0.5 above the judge's 0.5: the lower (the judge's) counts.
		{"the judge lower by more than the threshold", analysis{Impacts: impacts("none", "none", "none", "none", "none"), Robustness: 0.5}, mastraScoring, 0.5},
		{"one major issue", analysis{Impacts: impacts("none", "none", "none", "none", "none"), Robustness: 1, MajorIssues: []string{"a"}}, mastraScoring, 0.9},
		{"major issues capped at 0.3", analysis{Impacts: impacts("none", "none", "none", "none", "none"), Robustness: 1, MajorIssues: make([]string, 6)}, mastraScoring, 0.7},
		{"clamped at 0", analysis{Impacts: impacts("severe", "severe", "severe", "severe", "severe"), Robustness: 0.2, MajorIssues: make([]string, 3)}, mastraScoring, 0},
		{"a robustness above 1 is clamped", analysis{Impacts: impacts("none", "none", "none", "none", "none"), Robustness: 1.3}, mastraScoring, 1},
		// Mastra's noise-sensitivity-11: a threshold of 0.3 keeps the judge's 0.7.
		{"discrepancy threshold 0.3", analysis{Impacts: impacts("moderate", "moderate", "significant", "significant", "moderate"), Robustness: 0.7},
			scoring{weights: mastraWeights(), perIssue: 0.1, maxIssues: 0.3, thresh: 0.3}, 0.7},
		// Mastra's noise-sensitivity-10: 0.05 a major issue, at most 0.2.
		{"custom penalties", analysis{Impacts: impacts("none", "none", "minimal", "minimal", "none"), Robustness: 0.95, MajorIssues: []string{"a", "b"}},
			scoring{weights: mastraWeights(), perIssue: 0.05, maxIssues: 0.2, thresh: 0.2}, 0.85},
		// Mastra's noise-sensitivity-09: severe weighs 0, minimal 0.9, moderate 0.7.
		{"custom impact weights", analysis{Impacts: impacts("minimal", "minimal", "minimal", "minimal", "severe"), Robustness: 0.9, MajorIssues: []string{"a"}},
			scoring{weights: map[string]float64{"none": 1, "minimal": 0.9, "moderate": 0.7, "significant": 0.3, "severe": 0}, perIssue: 0.1, maxIssues: 0.3, thresh: 0.2}, 0.8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mastraScore(tt.a, tt.s).Score; math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("score %v (%+v), want %v", got, mastraScore(tt.a, tt.s), tt.want)
			}
		})
	}
}

// TestRagasFormula holds sensitivity to Ragas' _compute_score on specified statements.
func TestRagasFormula(t *testing.T) {
	st := func(in bool, ids ...string) statement {
		return statement{Statement: "s", Passages: ids, InReference: in}
	}
	ref := []statement{{Statement: "r1", Passages: []string{"1"}}, {Statement: "r2", Passages: []string{"1", "2"}}}
	tests := []struct {
		name   string
		out    []statement
		mode   string
		want   float64
		counts int
	}{
		{"every statement right", []statement{st(true, "1"), st(true, "3")}, ModeRelevant, 0, 0},
		{"wrong, backed by a relevant passage", []statement{st(false, "2"), st(true, "1")}, ModeRelevant, 0.5, 1},
		{"wrong, backed by nothing", []statement{st(false), st(true, "1")}, ModeRelevant, 0, 0},
		{"wrong, backed only by an irrelevant passage: not counted in relevant mode", []statement{st(false, "3"), st(true, "1")}, ModeRelevant, 0, 0},
		{"... and counted in irrelevant mode", []statement{st(false, "3"), st(true, "1")}, ModeIrrelevant, 0.5, 1},
		{"backed by both: relevant, not irrelevant", []statement{st(false, "1", "3")}, ModeIrrelevant, 0, 0},
		{"backed by both, relevant mode", []statement{st(false, "1", "3")}, ModeRelevant, 1, 1},
		{"all wrong and relevant", []statement{st(false, "1"), st(false, "2"), st(false, "2")}, ModeRelevant, 1, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := sensitivity(tt.out, ref, tt.mode)
			if math.Abs(got-tt.want) > 1e-9 || n != tt.counts {
				t.Fatalf("sensitivity %v (%d counted), want %v (%d)", got, n, tt.want, tt.counts)
			}
		})
	}
}
