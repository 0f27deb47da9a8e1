package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/scorekit/scorekit/internal/service/store"
)

// Runs that arrive for an agent under a policy join its open arrival evaluation (the
// service decides which, store.Tx.AddArrivalRuns adds them); Arrived hands them to jobs in
// chunks. A chunk is cut as soon as ChunkSize runs wait; fewer wait for a flush job,
// enqueued when the first of them arrives, which hands over whatever waits
// ArrivalFlushAfter after that (or later, when workers are busy): a lone run is scored
// within about ArrivalFlushAfter, and a steady stream makes full chunks, not a job for
// every few runs.

// FlushArgs is the job that hands an arrival evaluation's waiting runs to chunk jobs.
type FlushArgs struct {
	TenantID     int64 `json:"tenant"`
	EvaluationPK int64 `json:"evaluation"`
}

// Kind names the job for River.
func (FlushArgs) Kind() string { return "scorekit_arrival_flush" }

// Arrived enqueues, in tx, the jobs of the runs that joined the arrival evaluation ev
// (ev with the runs counted, Open false if they closed it): a chunk job for
// each ChunkSize runs waiting (all of them once ev is closed), and a flush job for the
// rest unless one waits already. It stores ev's new state (store.Tx.UpdateArrival).
func (e *Queue) Arrived(ctx context.Context, tx *store.Tx, ev store.Evaluation) error {
	// Places, not runs: a run deleted from the evaluation keeps its place (store's
	// Evaluation.Positions), so the places handed to jobs never cover a later run.
	to := ev.Positions
	if ev.Open {
		to = ev.Queued + (ev.Positions-ev.Queued)/int64(e.opts.ChunkSize)*int64(e.opts.ChunkSize)
	}
	params := e.chunks(ev, ev.Queued, to)
	ev.Queued = to
	if ev.Queued < ev.Positions && !ev.Flushing {
		params = append(params, river.InsertManyParams{Args: FlushArgs{TenantID: ev.TenantID, EvaluationPK: ev.PK}})
		ev.Flushing = true
	}
	if len(params) > 0 {
		if err := e.q.insert(ctx, tx, params); err != nil {
			return fmt.Errorf("jobs: enqueue the arrived runs of evaluation %s: %w", ev.ID, err)
		}
	}
	return tx.UpdateArrival(ctx, ev)
}

// flushWorker is River's worker of FlushArgs.
type flushWorker struct {
	river.WorkerDefaults[FlushArgs]
	e *Queue
}

// Work waits until ArrivalFlushAfter after the flush was enqueued, for more runs to join,
// then hands every run waiting in the evaluation to chunk jobs and completes itself, in
// one transaction: a flush that runs again after a crash finds nothing left, or all.
func (w *flushWorker) Work(ctx context.Context, job *river.Job[FlushArgs]) error {
	e, a := w.e, job.Args
	if wait := time.Until(job.CreatedAt.Add(e.opts.ArrivalFlushAfter)); wait > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	// A transaction of its own, not shared with imports: imports joining the evaluation
	// store its counts once, before their shared commit (store.Tx.BeforeCommit), and a
	// flush inside their transaction would read the counts before theirs.
	err := e.st.InTx(ctx, func(tx *store.Tx) error {
		ev, err := tx.LockEvaluation(ctx, a.TenantID, a.EvaluationPK)
		if err != nil {
			return err
		}
		if params := e.chunks(ev, ev.Queued, ev.Positions); len(params) > 0 {
			if err := e.q.insert(ctx, tx, params); err != nil {
				return fmt.Errorf("jobs: enqueue the waiting runs of evaluation %s: %w", ev.ID, err)
			}
		}
		ev.Queued, ev.Flushing = ev.Positions, false
		if err := tx.UpdateArrival(ctx, ev); err != nil {
			return err
		}
		return e.q.completeFlush(ctx, tx, job)
	})
	if err != nil {
		// An evaluation deleted meanwhile (with its agent's runs, or its tenant) leaves
		// nothing to hand over: the job is cancelled, not retried.
		return deletedMeanwhile(fmt.Errorf("jobs: flush evaluation %d: %w", a.EvaluationPK, err))
	}
	return nil
}
