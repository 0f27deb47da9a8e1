package host

import (
	"context"
	"slices"
	"testing"

	"github.com/scorekit/scorekit/sdk"
)

// hallucinationFree declares the hallucination_free scorer's dimensions: the grounded
// share (the score) and the peer's hallucinated share at weight 0.
func hallucinationFree() sdk.Info {
	inf := info("hallucination_free")
	inf.Dimensions = []sdk.Dimension{
		{Name: "hallucination_free", Weight: 1},
		{Name: "hallucinated_share", Weight: 0},
	}
	return inf
}

// TestGroundingClamp: the citation audit clamps hallucination_free as it clamps
// faithfulness, one run at a time and in a batch, computed from the output's citations
// when the run carries no audit: the scorer sees the audit, the clamp is recorded against
// hallucination_free, the overall score follows it, and the weight-0 hallucinated share is
// left as the scorer computed it. A dimension of another name is not clamped.
func TestGroundingClamp(t *testing.T) {
	passages := []sdk.Passage{{Text: "Paris is the capital of France."}}
	in := sdk.Run{Input: "capital?", Output: "Paris is the capital of France [1]. It has 90 million people [7].", Context: passages}
	for _, tc := range []struct {
		name  string
		info  sdk.Info
		dims  map[string]float64
		want  map[string]float64
		score float64
		rules []string
	}{
		{"hallucination_free is clamped", hallucinationFree(),
			map[string]float64{"hallucination_free": 0.9, "hallucinated_share": 0.1},
			map[string]float64{"hallucination_free": 0.4, "hallucinated_share": 0.1}, 0.4,
			[]string{"clamp_hallucination:hallucination_free", "clamp_invalid_citations:hallucination_free"}},
		{"another name is not", func() sdk.Info {
			inf := info("grounded_share")
			inf.Dimensions = []sdk.Dimension{{Name: "grounded_share", Weight: 1}}
			return inf
		}(), map[string]float64{"grounded_share": 0.9}, map[string]float64{"grounded_share": 0.9}, 0.9, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen []*sdk.CitationAudit
			r := newRig(t, tc.info, func(_ context.Context, call sdk.Call) (sdk.Result, error) {
				seen = append(seen, call.Run.CitationAudit)
				return withDims(0.9, tc.dims), nil
			})
			s := r.open(t, OpenOptions{})
			results := append([]sdk.Result{s.Score(context.Background(), in)}, s.ScoreBatch(context.Background(), []sdk.Run{in, in})...)
			for i, res := range results {
				if res.Status != sdk.StatusScored || *res.Score != tc.score {
					t.Fatalf("result %d: %s %v (%v), want %v", i, res.Status, res.Value(), res.Error, tc.score)
				}
				for k, v := range tc.want {
					if res.Dimensions[k] != v {
						t.Errorf("result %d: %s %v, want %v", i, k, res.Dimensions[k], v)
					}
				}
				var rules []string
				for _, a := range res.Adjustments {
					if a.Rule != RuleOverallWeighted && a.Rule != RuleNormalizeRange {
						rules = append(rules, a.Rule+":"+a.Target)
					}
				}
				if !slices.Equal(rules, tc.rules) {
					t.Errorf("result %d: clamps %v, want %v", i, rules, tc.rules)
				}
				if clamped := tc.rules != nil; (res.CitationAudit != nil) != clamped || (seen[i] != nil) != clamped {
					t.Errorf("result %d: audit %v, the scorer saw %v; want one exactly when the scorer has a grounding dimension", i, res.CitationAudit, seen[i])
				}
			}
		})
	}
}
