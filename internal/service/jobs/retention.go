package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/scorekit/scorekit/internal/service/store"
)

// RetentionArgs is one retention sweep: every tenant's runs older than its policy's
// retention_days are deleted with their results, and tombstones older than
// store.TombstoneTTL are dropped. River runs it every Options.RetentionInterval on the
// leading client of the processes that work jobs.
type RetentionArgs struct{}

// Kind names the job for River.
func (RetentionArgs) Kind() string { return "scorekit_retention" }

// InsertOpts makes the sweep unique while it waits or runs: a slow sweep is not joined
// by the next one.
func (RetentionArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: insightStates}}
}

// RetentionLimit caps the runs one sweep deletes per tenant: a tenant that turns on
// retention over years of runs is brought down over several sweeps, and the other
// tenants are swept meanwhile.
const RetentionLimit = 100_000

// ActorRetention is the retention sweep in the audit log.
const ActorRetention = "retention"

type retentionWorker struct {
	river.WorkerDefaults[RetentionArgs]
	e *Queue
}

func (w *retentionWorker) Work(ctx context.Context, _ *river.Job[RetentionArgs]) error {
	_, err := w.e.SweepRetention(ctx, time.Now())
	return err
}

// SweepRetention deletes, for every tenant with a retention, its runs older than now
// less the retention (at most RetentionLimit each), recording each tenant's deletion in
// its audit log, then drops expired tombstones. It returns what it deleted by tenant id.
func (e *Queue) SweepRetention(ctx context.Context, now time.Time) (map[int64]store.Deleted, error) {
	ts, err := e.st.Tenants(ctx)
	if err != nil {
		return nil, err
	}
	out := map[int64]store.Deleted{}
	var errs []error
	for _, t := range ts {
		keep := t.Policy.Retention()
		if keep <= 0 {
			continue
		}
		cutoff := now.Add(-keep)
		d, err := e.st.ExpireRuns(ctx, t.ID, cutoff, RetentionLimit)
		if d.Runs > 0 {
			out[t.ID] = d
			subject := "runs before " + cutoff.UTC().Format(time.RFC3339)
			if aerr := e.st.AddAudit(ctx, t, store.AuditEntry{Actor: ActorRetention, Action: store.AuditRetention, Subject: subject}, d); aerr != nil {
				errs = append(errs, aerr)
			}
			// The results deleted may have been in an agent's window: assess it again.
			if rerr := e.st.InTx(ctx, func(tx *store.Tx) error { return e.RefreshAgents(ctx, tx, t.ID, "") }); rerr != nil {
				errs = append(errs, rerr)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("jobs: retention of tenant %s: %w", t.Name, err))
		}
	}
	if _, err := e.st.ExpireTombstones(ctx, now); err != nil {
		errs = append(errs, fmt.Errorf("jobs: expire tombstones: %w", err))
	}
	return out, errors.Join(errs...)
}
