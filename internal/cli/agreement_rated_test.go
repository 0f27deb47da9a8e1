package cli

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/corpus"
)

// TestAgreementMastraGroundingRated runs `scorekit agreement --dataset mastra-grounding` end
// to end for answer_similarity and context_relevance, against the test judge answering
// each of Mastra's cases with what Mastra's judge recorded (groundingtest). Answer
// similarity's scored runs agree with the scores Mastra's tests assert within their
// tolerance (no disagreement; the mean absolute error is the one the recordings give), the
// runs without a reference are skipped by design, and one judge call is made per scored run.
// Context relevance's two labels are the scores Mastra computed from the same verdicts:
// reproduced exactly. noise_robustness has no labels (Mastra's tests mock it), so the set
// does not measure it.
func TestAgreementMastraGroundingRated(t *testing.T) {
	dir, err := corpus.Dir()
	if err != nil {
		t.Fatal(err)
	}
	scorers := []string{"context_relevance", "answer_similarity"}
	rep, srv := mastraGroundingAgreement(t, dir, scorers)
	var got []string
	for _, tb := range rep.Tables {
		got = append(got, tb.Set+"/"+tb.Scorer)
	}
	if w := []string{"mastra-grounding/context_relevance", "mastra-grounding/answer_similarity"}; !slices.Equal(got, w) {
		t.Fatalf("tables %v, want %v", got, w)
	}

	relevance := rep.Tables[0]
	if relevance.Scores == nil || relevance.Scores.Runs != 2 || len(relevance.NotScored) != 0 || relevance.Scores.MAE.Value != 0 {
		t.Errorf("context_relevance: %+v (not scored %v: %v)", relevance.Scores, relevance.NotScored, relevance.NotScoredReasons)
	}

	similarity := rep.Tables[1]
	skipped := []string{"answer_similarity-12", "answer_similarity-15"} // no and a blank ground truth
	if similarity.Scores == nil {
		t.Fatalf("answer_similarity: no score figures: %s", similarity.Error)
	}
	if similarity.Scores.Runs != 10 || similarity.NotScored["skipped"] != len(skipped) || len(similarity.NotScored) != 1 {
		t.Errorf("answer_similarity: %d scored, not scored %v (%v); want 10 scored and 2 skipped",
			similarity.Scores.Runs, similarity.NotScored, similarity.NotScoredReasons)
	}
	if len(similarity.Disagreements) != 0 {
		t.Errorf("answer_similarity: disagreements %+v, want none", similarity.Disagreements)
	}
	// The MAE the recordings give: |recorded - asserted| over the scored cases, each within
	// its test's tolerance.
	cases, err := corpus.LoadMastraGrounding(dir, "answer_similarity")
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, c := range cases {
		e := c.Mastra.Expected
		if e.Kind != "scorer" || e.Score == nil || slices.Contains(skipped, c.ID) {
			continue
		}
		var rec struct{ Score float64 }
		if err := json.Unmarshal(c.Recorded, &rec); err != nil {
			t.Fatal(err)
		}
		d := math.Abs(rec.Score - *e.Score)
		if d > e.AbsTolerance+1e-9 {
			t.Errorf("%s: recorded %v, asserted %s", c.ID, rec.Score, e.Assert)
		}
		sum += d
	}
	if mae := sum / 10; math.Abs(similarity.Scores.MAE.Value-mae) > 1e-9 {
		t.Errorf("answer_similarity: mae %v, want %v", similarity.Scores.MAE.Value, mae)
	}

	completions := 0
	for _, q := range srv.Requests() {
		if strings.HasSuffix(q.Path, "/chat/completions") {
			completions++
		}
	}
	if completions != 2+10 {
		t.Errorf("the judge got %d requests, want one per scored run (12): the skipped runs cost none", completions)
	}
}
