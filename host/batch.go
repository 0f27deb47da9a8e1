package host

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/scorekit/scorekit/sdk"
)

// BatchBackend is a Backend that scores several runs of its scorer in one call into its
// runtime, which is cheaper where a call costs more than a cheap scorer's work (a WASM
// guest). Each run keeps its own deadline, limits, result and failure: a run that fails
// (a trap, its deadline) fails alone, and the backend scores the others as if they had
// been called one by one.
type BatchBackend interface {
	Backend
	// ScoreBatch scores items in order, filling each one's Result or Err and Elapsed.
	// timeout bounds each run from when it starts (0: only the backend's own limit);
	// a run stopped at it fails with an error wrapping ErrRunDeadline. ctx bounds the
	// whole batch: once it ends, the runs not yet scored fail with its error.
	ScoreBatch(ctx context.Context, items []BatchItem, timeout time.Duration)
}

// BatchItem is one run of a batch: the run and its judge in, what the backend made of it
// out.
type BatchItem struct {
	// Run is the run to score; the backend does not change it.
	Run *sdk.Run
	// Judge is the run's judge, nil when none is available to the scorer.
	Judge sdk.Judge
	// Result is the scorer's raw result when Err is nil.
	Result sdk.Result
	// Err says why the run has no result (as Backend.Score's error).
	Err error
	// Elapsed is the time the backend spent on the run.
	Elapsed time.Duration
}

// ScoreBatch runs the host pipeline on each of runs, as Score does one by one, and
// returns their results in order. A backend that scores batches (a WASM guest of ABI v2)
// gets them in one call; any other is called once per run. Either way each run keeps its
// own deadline (the host's timeout, from when the run starts), limits and result, and a
// run that fails fails alone. Callers that have several runs for one scorer (a file, a
// chunk of an evaluation) use it without knowing the runtime. A batch is scored in order:
// runs of a scorer whose time is the judge's go faster as concurrent Score calls (the
// service makes those for scorers that declare the judge).
func (s *Scorer) ScoreBatch(ctx context.Context, runs []sdk.Run) []sdk.Result {
	return s.scoreBatch(ctx, len(runs), func(i int) sdk.Run { return runs[i] }, false)
}

// ScoreCheckedBatch is [Scorer.ScoreBatch] on runs the host checked already: the pipeline
// does not check them again (see [CheckedRun]).
func (s *Scorer) ScoreCheckedBatch(ctx context.Context, runs []CheckedRun) []sdk.Result {
	return s.scoreBatch(ctx, len(runs), func(i int) sdk.Run { return runs[i].run }, true)
}

// scoreBatch scores the n runs run returns; checked says they were checked already.
func (s *Scorer) scoreBatch(ctx context.Context, n int, run func(int) sdk.Run, checked bool) []sdk.Result {
	out := make([]sdk.Result, n)
	bb, ok := s.backend.(BatchBackend)
	if !ok || n < 2 {
		for i := range n {
			out[i] = s.scoreOne(ctx, run(i), checked)
		}
		return out
	}
	type entry struct {
		run     sdk.Run
		finish  func(*sdk.Result)
		item    int // index in items, -1 when settled before the call
		elapsed time.Duration
	}
	entries := make([]entry, n)
	items := make([]BatchItem, 0, n)
	for i := range n {
		start := time.Now()
		e := &entries[i]
		e.run, e.finish, e.item = run(i), func(*sdk.Result) {}, -1
		judge := s.judge
		if m, ok := judge.(JudgeMeter); ok {
			judge, e.finish = m.MeterJudge(ctx, s.tenant, s.info.Name)
		}
		if res, ok := s.prepare(&e.run, checked); !ok {
			out[i] = res
		} else {
			e.item = len(items)
			items = append(items, BatchItem{Run: &e.run, Judge: judge})
		}
		e.elapsed = time.Since(start)
	}
	s.callBatch(ctx, bb, items)
	for i := range entries {
		e := &entries[i]
		start := time.Now()
		if e.item >= 0 {
			it := &items[e.item]
			if it.Err != nil {
				out[i] = failedFrom(s.batchErr(ctx, it.Err))
			} else {
				out[i] = s.finish(&e.run, it.Result)
			}
			e.elapsed += it.Elapsed
		}
		e.finish(&out[i])
		e.elapsed += time.Since(start)
		out[i].Telemetry.DurationMS = float64(e.elapsed.Nanoseconds()) / 1e6
		out[i].Telemetry.Runtime = s.runtime
		out[i].Telemetry.Replaced = s.replaced
	}
	return out
}

// callBatch calls the backend with items in one of the host's call slots (WithMaxCalls),
// on the caller's goroutine: a BatchBackend stops each run at its deadline itself.
func (s *Scorer) callBatch(ctx context.Context, bb BatchBackend, items []BatchItem) {
	if len(items) == 0 {
		return
	}
	if ctx.Err() != nil {
		err := s.deadlineErr(ctx)
		for i := range items {
			items[i].Err = err
		}
		return
	}
	if err := s.h.calls.acquire(ctx, false); err != nil {
		err := s.slotErr(ctx)
		for i := range items {
			items[i].Err = err
		}
		return
	}
	failed := false
	defer func() {
		if p := recover(); p != nil {
			s.h.log.Error("scorer panicked", "scorer", s.info.Name, "panic", p, "stack", string(debug.Stack()))
			err := &sdk.Error{Code: sdk.CodeScorerError, Message: fmt.Sprintf("scorer %s panicked: %v", s.info.Name, p)}
			for i := range items {
				if items[i].Err == nil && items[i].Result.Status == "" {
					items[i].Err = err
				}
			}
			failed = true
		}
		s.h.calls.releaseInline(ctx, failed)
	}()
	bb.ScoreBatch(ctx, items, s.h.timeout)
	for i := range items {
		failed = failed || items[i].Err != nil
	}
}

// batchErr is the error a batch's run failed with, as Score would report it: the host's
// own deadline and the caller's are named as such.
func (s *Scorer) batchErr(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, ErrRunDeadline):
		return s.hostTimeoutErr()
	case ctx.Err() != nil:
		return s.deadlineErr(ctx)
	}
	return err
}
