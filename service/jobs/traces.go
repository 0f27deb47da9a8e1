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

// InsertOpts makes the sweep unique while it waits or runs, and keeps no record of it
// once done: it runs every few seconds.
func (TracesArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: insightStates}}
}

type tracesWorker struct {
	river.WorkerDefaults[TracesArgs]
	e *Engine
}

func (w *tracesWorker) Work(ctx context.Context, _ *river.Job[TracesArgs]) error {
	if w.e.opts.CompleteTraces == nil {
		return nil
	}
	return w.e.opts.CompleteTraces(ctx, time.Now())
}
