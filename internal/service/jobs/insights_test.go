package jobs_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service/insights"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// riverJobs counts River's jobs of kind (any state).
func riverJobs(t *testing.T, st *store.Store, kind string) int {
	t.Helper()
	var n int
	const q = `SELECT COUNT(*) FROM river_job WHERE kind = $1`
	var err error
	if p := st.Pool(); p != nil {
		err = p.QueryRow(context.Background(), q, kind).Scan(&n)
	} else {
		err = st.SQLDB().QueryRowContext(context.Background(), q, kind).Scan(&n)
	}
	if err != nil && err != sql.ErrNoRows {
		t.Fatal(err)
	}
	return n
}

// Forty chunks of one evaluation, worked by four workers at once, store their results
// while insight updates of the same series run: the updates coalesce (fewer than the
// chunks), none misses a result (the last one saw all 200 runs), and the insights match
// what one update over all the rows finds.
func TestInsightUpdatesFollowEveryChunk(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		f := newFixture(t, dsn, servicetest.Options{Jobs: jobs.Options{Workers: 4, ChunkSize: 5}})
		st := f.st
		pks := f.putRuns(t, "triage", 200) // odd runs are empty: half of them fail the pre-screen
		ev := f.evaluate(t, "triage", pks, store.Spec{Scorers: []store.ScorerRef{{Name: "prescreen"}}})
		f.wait(t, ev)
		ctx := context.Background()
		deadline := time.Now().Add(time.Minute)
		for {
			series, err := st.SeriesOf(ctx, f.tenant.ID, "triage")
			if err != nil {
				t.Fatal(err)
			}
			if len(series) == 1 && series[0].UpToDate() {
				if series[0].Changes != 40 {
					t.Errorf("the series counted %d changes; want one per chunk (40)", series[0].Changes)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the series is not up to date after a minute: %+v", series)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if n := riverJobs(t, st, jobs.InsightsArgs{}.Kind()); n < 1 || n >= 40 {
			t.Errorf("%d insight updates for 40 chunks; want them coalesced (1 to 39)", n)
		}
		open, err := st.OpenInsights(ctx, f.tenant.ID, "triage", "prescreen")
		if err != nil {
			t.Fatal(err)
		}
		rows, err := st.SeriesResults(ctx, f.tenant.ID, "triage", "prescreen", 200, true)
		if err != nil || len(rows) != 200 {
			t.Fatalf("%d rows, %v", len(rows), err)
		}
		want, err := insights.Assess(insights.Config{}, "triage", "prescreen", jobs.SeriesRows("prescreen", rows), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(open) != len(want) || len(open) == 0 {
			t.Fatalf("%d open insights; one update over every row wants %d", len(open), len(want))
		}
		for i := range want {
			if open[i].Kind != want[i].Kind || open[i].Severity != want[i].Severity || open[i].Evidence.Window.Runs != 100 {
				t.Errorf("open %s %s over %d runs; want %s %s over 100", open[i].Kind, open[i].Severity, open[i].Evidence.Window.Runs, want[i].Kind, want[i].Severity)
			}
		}
		// The queue's gauge reads River's table on this backend.
		if _, err := f.eng.QueueDepth(ctx); err != nil {
			t.Errorf("queue depth: %v", err)
		}
		// No insight is open twice: the store's unique index holds one per key.
		if _, err := st.ApplyInsights(ctx, f.tenant.ID, nil, insights.Changes{Opened: []insights.Insight{open[0].Insight}}); err == nil {
			t.Error("a second open insight of the same (agent, scorer, kind) was stored")
		}
	})
}
