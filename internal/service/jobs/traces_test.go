package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// TestTraceSweepsLeaveNoRows: the trace sweep runs every few seconds, and River keeps a
// completed job's row for a day whatever its kind (CompletedJobRetentionPeriod), so each
// sweep used to leave one: 43,000 a day at the 2 s interval. Each sweep now deletes the
// completed sweeps before it, and the rows of the kind stay at one or two however many
// sweeps ran, on both backends.
func TestTraceSweepsLeaveNoRows(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		f := newFixture(t, dsn, servicetest.Options{Jobs: jobs.Options{Workers: 1, TraceInterval: 20 * time.Millisecond, PollInterval: 10 * time.Millisecond}})
		seen := map[int64]bool{}
		for deadline := time.Now().Add(time.Minute); len(seen) < 12; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d sweeps in a minute; want 12", len(seen))
			}
			for _, id := range sweepIDs(t, f.st, "") {
				seen[id] = true
			}
		}
		if done := sweepIDs(t, f.st, "completed"); len(done) > 2 {
			t.Fatalf("%d sweeps ran, %d completed rows of them kept: %v; want at most 2", len(seen), len(done), done)
		}
	})
}

// sweepIDs returns the ids of the trace sweeps' job rows in state ("" for any).
func sweepIDs(t *testing.T, st *store.Store, state string) []int64 {
	t.Helper()
	q := `SELECT id FROM river_job WHERE kind = 'scorekit_traces' AND (state::text = $1::text OR $1::text = '')`
	var ids []int64
	if p := st.Pool(); p != nil {
		rs, err := p.Query(context.Background(), q, state)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		for rs.Next() {
			var id int64
			if err := rs.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		return ids
	}
	rs, err := st.SQLDB().Query(`SELECT id FROM river_job WHERE kind = 'scorekit_traces' AND (state = ?1 OR ?1 = '')`, state)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}
