package cli

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/grounding/groundingtest"
	"github.com/scorekit/scorekit/internal/judgetest"
)

// TestAgreementMastraGrounding runs `scorekit agreement --dataset mastra-grounding` end to
// end for the claim-based grounding scorers, against the test judge answering each of
// Mastra's cases with the verdicts Mastra's judge recorded (context recall: with verdicts
// built from the scores its tests mock). Every case Mastra scores and scorekit scores
// agrees with the test's assertion within the assertion's tolerance (no disagreement, the
// mean absolute error is the one the recordings give), and the cases scorekit skips by
// design (an empty output, an empty context, no ground truth) are the ones not scored.
func TestAgreementMastraGrounding(t *testing.T) {
	dir, err := corpus.Dir()
	if err != nil {
		t.Fatal(err)
	}
	scorers := []string{"faithfulness", "hallucination_free", "context_recall"}
	rep, srv := mastraGroundingAgreement(t, dir, scorers)
	// Runs scored, and runs skipped by design, per scorer.
	want := map[string]struct {
		scored  int
		skipped []string
	}{
		"faithfulness":       {10, []string{"faithfulness-04", "faithfulness-05"}},
		"hallucination_free": {15, []string{"hallucination-04", "hallucination-06"}},
		"context_recall":     {4, []string{"context_recall-07", "context_recall-08"}},
	}
	var got []string
	for _, tb := range rep.Tables {
		got = append(got, tb.Set+"/"+tb.Scorer)
		w := want[tb.Scorer]
		t.Run(tb.Scorer, func(t *testing.T) {
			if tb.Scores == nil {
				t.Fatalf("no score figures: %s", tb.Error)
			}
			if tb.Scores.Runs != w.scored || tb.NotScored["skipped"] != len(w.skipped) || len(tb.NotScored) != 1 {
				t.Errorf("%d scored, not scored %v (%v); want %d scored and %d skipped", tb.Scores.Runs, tb.NotScored, tb.NotScoredReasons, w.scored, len(w.skipped))
			}
			if len(tb.Disagreements) != 0 {
				t.Errorf("disagreements %+v, want none", tb.Disagreements)
			}
			// The MAE the recordings give: |recorded - asserted| over the scored cases (for
			// context recall, whose answers are built from the labels, 0).
			var sum float64
			if tb.Scorer != "context_recall" {
				cases, err := corpus.LoadMastraGrounding(dir, groundingtest.Files[tb.Scorer])
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range cases {
					rec, _ := c.Claims()
					if c.Mastra.Expected.Kind != "scorer" || slices.Contains(w.skipped, c.ID) {
						continue
					}
					d := math.Abs(*rec.Score - *c.Mastra.Expected.Score)
					if d > c.Mastra.Expected.AbsTolerance+1e-9 {
						t.Errorf("%s: recorded %v, asserted %s", c.ID, *rec.Score, c.Mastra.Expected.Assert)
					}
					sum += d
				}
			}
			if mae := sum / float64(w.scored); math.Abs(tb.Scores.MAE.Value-mae) > 1e-9 {
				t.Errorf("mae %v, want %v", tb.Scores.MAE.Value, mae)
			}
		})
	}
	if w := []string{"mastra-grounding/faithfulness", "mastra-grounding/hallucination_free", "mastra-grounding/context_recall"}; !slices.Equal(got, w) {
		t.Errorf("tables %v, want %v", got, w)
	}
	completions := 0
	for _, q := range srv.Requests() {
		if strings.HasSuffix(q.Path, "/chat/completions") && strings.Contains(q.LastUser(), "<passage id=") {
			completions++
		}
	}
	if completions != 10+15+4 {
		t.Errorf("the judge got %d scoring requests, want one per scored run (29): the skipped runs cost none", completions)
	}
}

// mastraGroundingAgreement runs `scorekit agreement --dataset mastra-grounding --scorers
// scorers --json` against the test judge answering each of Mastra's cases with what
// groundingtest builds from Mastra's recordings, and returns the report and the judge (its
// requests).
func mastraGroundingAgreement(t *testing.T, dir string, scorers []string) (agreementReport, *judgetest.Server) {
	t.Helper()
	var rules []judgetest.Rule
	for _, s := range scorers {
		rs, _, err := groundingtest.Rules(dir, s)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, rs...)
	}
	srv := judgetest.New(rules...)
	t.Cleanup(srv.Close)
	srv.ListModels("m")
	t.Setenv("SCOREKIT_TEST_KEY", "k")
	judge := []string{"--judge-url", srv.URL(), "--judge-model", "m", "--judge-key-env", "SCOREKIT_TEST_KEY"}
	r := runCLIWith(t, builtinRegistry, "", append([]string{"agreement", "--dataset", "mastra-grounding",
		"--scorers", strings.Join(scorers, ","), "--json"}, judge...)...)
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep agreementReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	return rep, srv
}
