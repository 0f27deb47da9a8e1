package jobs_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

// A tiered evaluation that also selects the pre-screen asks it once per run: its result
// is both the stored prescreen result and the gate of the judge scorers.
func TestTieredScoresThePrescreenOnce(t *testing.T) {
	for _, tt := range []struct {
		name            string
		scorers         []store.ScorerRef
		prescreenStored int
	}{
		{"prescreen selected", []store.ScorerRef{{Name: "prescreen"}, {Name: "relevancy", Judge: true}}, 10},
		{"prescreen only the gate", []store.ScorerRef{{Name: "relevancy", Judge: true}}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			backends(t, func(t *testing.T, dsn string) {
				srv := judgetest.New(judgetest.Rule{Reply: `{"reasoning": "it answers the question", "score": 1}`})
				defer srv.Close()
				b := newJudge(t, srv)
				reg := servicetest.Registry(t, nil)
				calls := servicetest.CountCalls(t, reg, jobs.PrescreenScorer)
				f := newFixture(t, dsn, servicetest.Options{Host: host.New(reg, host.WithJudge(b)), Judge: b, Jobs: jobs.Options{Workers: 2}})
				pks := f.putRuns(t, "a", 10)
				ev := f.evaluate(t, "a", pks, store.Spec{Tiered: true, Scorers: tt.scorers})
				rs := f.wait(t, ev)
				if n := calls.Load(); n != 10 {
					t.Fatalf("the pre-screen was asked %d times for 10 runs; want once per run", n)
				}
				var prescreen, skipped int
				for _, r := range rs {
					switch {
					case r.Scorer == "prescreen":
						prescreen++
					case r.Status == "skipped":
						skipped++
					}
				}
				if prescreen != tt.prescreenStored || skipped != 5 || srv.Calls() != 5 {
					t.Fatalf("%d prescreen results, %d judge scorers skipped, %d judge calls; want %d, 5 and 5",
						prescreen, skipped, srv.Calls(), tt.prescreenStored)
				}
			})
		})
	}
}

// When the pre-screen cannot gate a run (here the tenant's policy no longer allows it:
// the evaluation was enqueued before the policy changed), a judge scorer is failed with
// the reason, never skipped as if the pre-screen had said no.
func TestTieredWithoutThePrescreenFailsTheJudgeScorers(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		srv := judgetest.New(judgetest.Rule{Reply: `{"reasoning": "it answers the question", "score": 1}`})
		defer srv.Close()
		f := newFixture(t, dsn, servicetest.Options{Judge: newJudge(t, srv), Jobs: jobs.Options{Workers: 2, MaxAttempts: 1}})
		if err := f.st.SetTenantPolicy(context.Background(), f.tenant.ID, store.Policy{Scorers: []string{"relevancy"}}); err != nil {
			t.Fatal(err)
		}
		pks := f.putRuns(t, "a", 4, true)
		ev := f.evaluate(t, "a", pks, store.Spec{Tiered: true, Scorers: []store.ScorerRef{{Name: "relevancy", Judge: true}}})
		for _, r := range f.wait(t, ev) {
			var res sdk.Result
			if err := json.Unmarshal(r.Body, &res); err != nil {
				t.Fatal(err)
			}
			if r.Status != "failed" || res.Error == nil || !strings.Contains(res.Error.Message, "pre-screen") || !strings.Contains(res.Error.Message, "not allowed") {
				t.Fatalf("run %s: %s; want failed, saying the pre-screen could not run because the policy does not allow it", r.RunID, r.Body)
			}
		}
		if srv.Calls() != 0 {
			t.Fatalf("%d judge calls; the judge must not be asked without the pre-screen's pass", srv.Calls())
		}
	})
}
