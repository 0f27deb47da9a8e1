package jobs_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

// slowScorer takes 100 ms a run, returning early when its context ends, and counts the
// runs it finished.
type slowScorer struct{ done *atomic.Int64 }

func (s *slowScorer) Info() sdk.Info {
	return sdk.Info{Name: "slow", Version: "1.0.0", ABIVersion: sdk.ABIVersion, Description: "100 ms a run", Threshold: 0.5}
}

func (s *slowScorer) ObservesContext() bool { return true }

func (s *slowScorer) Score(ctx context.Context, _ sdk.Call) (sdk.Result, error) {
	select {
	case <-ctx.Done():
		return sdk.Result{}, ctx.Err()
	case <-time.After(100 * time.Millisecond):
	}
	s.done.Add(1)
	return sdk.Scored(1, "done"), nil
}

// TestJobOutOfTimeKeepsItsResults: a chunk that cannot be scored within one job's timeout
// (10 runs of 100 ms, one at a time, against 350 ms) still ends, because each attempt
// stores the results it finished before its time ran out and the next one scores only
// what is missing. Before, an attempt out of time threw its results away, every attempt
// started over, and the evaluation never ended. Each run is scored about once: the count
// of finished runs is at most the runs plus one cut-off per attempt.
func TestJobOutOfTimeKeepsItsResults(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		var done atomic.Int64
		reg := servicetest.Registry(t, nil)
		if err := reg.Register(host.Native(func() sdk.Scorer { return &slowScorer{done: &done} }), false); err != nil {
			t.Fatal(err)
		}
		h := host.New(reg, host.WithLogger(slog.New(slog.DiscardHandler)))
		const runs, attempts = 10, 25
		f := newFixture(t, dsn, servicetest.Options{Host: h, Jobs: jobs.Options{
			Workers: 1, ChunkSize: runs, JobConcurrency: 1, JobTimeout: 350 * time.Millisecond, MaxAttempts: attempts,
		}})
		pks := f.putRuns(t, "a", runs, true)
		ev := f.evaluate(t, "a", pks, store.Spec{Scorers: []store.ScorerRef{{Name: "slow"}}})
		rs := f.wait(t, ev)
		for _, r := range rs {
			if r.Status != "scored" {
				t.Fatalf("run %s: %s %s", r.RunID, r.Status, r.Body)
			}
		}
		if n := done.Load(); n > runs+attempts {
			t.Fatalf("%d runs scored for %d results: attempts start over", n, runs)
		}
	})
}
