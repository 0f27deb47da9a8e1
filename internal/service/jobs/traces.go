package jobs

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// TracesArgs is one sweep of the OTLP traces that are complete (Options.CompleteTraces):
// the runs that need a whole trace are made when it is, decided here and not by a
// request, so that spans arriving in several requests, at several servers, make them
// once. River runs it every Options.TraceInterval on the leading client of the
// processes that work jobs.
type TracesArgs struct{}

// Kind names the job for River.
func (TracesArgs) Kind() string { return "scorekit_traces" }

// InsertOpts makes the sweep unique while it waits or runs; it is tried once: the next
// sweep comes within seconds.
func (TracesArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: insightStates}}
}

// sweepsKept bounds the completed sweeps one sweep deletes: those of the sweeps before it,
// and after a restart those the last process left.
const sweepsKept = 1000

type tracesWorker struct {
	river.WorkerDefaults[TracesArgs]
	e *Queue
}

// Work sweeps the traces, then deletes the completed sweeps before it. River keeps a
// completed job's row for CompletedJobRetentionPeriod (a day by default), which is set
// for every kind alike and has no setting per kind; at a sweep every 2 seconds that left
// 43,000 rows a day of a job whose record nobody reads. A periodic job's constructor,
// which could skip the sweep when no trace is open, must not block, so it cannot ask the
// database, and on PostgreSQL the spans come to every server while one leads. So the
// sweep runs as before, and its own kind's completed rows (not its own: it is running)
// are deleted each time: one or two stay.
func (w *tracesWorker) Work(ctx context.Context, _ *river.Job[TracesArgs]) error {
	if w.e.opts.CompleteTraces == nil {
		return nil
	}
	err := w.e.opts.CompleteTraces(ctx, time.Now())
	if derr := w.e.q.deleteCompleted(ctx, TracesArgs{}.Kind(), sweepsKept); derr != nil {
		// The rows wait for the next sweep, or River's retention: not a failed sweep.
		w.e.opts.Logger.WarnContext(ctx, "jobs: delete completed trace sweeps", "error", derr)
	}
	return err
}
