package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/riverqueue/river"

	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/service/telemetry"
	"github.com/scorekit/scorekit/sdk"
)

// EvaluateArgs is one job: a chunk of an evaluation's runs, those at positions
// [From, To) of the evaluation (read in one query: store.ChunkRuns).
type EvaluateArgs struct {
	TenantID     int64 `json:"tenant"`
	EvaluationPK int64 `json:"evaluation"`
	From         int64 `json:"from,omitempty"`
	To           int64 `json:"to,omitempty"`
	// RunPKs names the chunk's runs instead, in jobs enqueued before chunks were ranges.
	RunPKs []int64 `json:"runs,omitempty"`
}

// Kind names the job for River.
func (EvaluateArgs) Kind() string { return "scorekit_evaluate" }

// Enqueue inserts the jobs of ev over runPKs in tx, the transaction that created ev.
func (e *Queue) Enqueue(ctx context.Context, tx *store.Tx, ev store.Evaluation, runPKs []int64) error {
	params := e.chunks(ev, 0, int64(len(runPKs)))
	if len(params) == 0 {
		return nil
	}
	scorers := make([]string, len(ev.Spec.Scorers))
	for i, s := range ev.Spec.Scorers {
		scorers[i] = s.Name
	}
	ctx, span := e.opts.Telemetry.StartEvaluation(ctx, telemetry.EvaluationInfo{
		ID: ev.ID, Agent: ev.Agent, Trigger: ev.Trigger, Runs: len(runPKs), Jobs: len(params), Scorers: scorers})
	defer span.End()
	if err := e.q.insert(ctx, tx, params); err != nil {
		return fmt.Errorf("jobs: enqueue evaluation %s: %w", ev.ID, err)
	}
	return nil
}

// chunks are the jobs of ev's runs at positions [from, to), ChunkSize runs each.
func (e *Queue) chunks(ev store.Evaluation, from, to int64) []river.InsertManyParams {
	var params []river.InsertManyParams
	for start := from; start < to; start += int64(e.opts.ChunkSize) {
		params = append(params, river.InsertManyParams{Args: EvaluateArgs{TenantID: ev.TenantID, EvaluationPK: ev.PK,
			From: start, To: min(start+int64(e.opts.ChunkSize), to)}})
	}
	return params
}

// worker is River's worker of EvaluateArgs.
type worker struct {
	river.WorkerDefaults[EvaluateArgs]
	e *Queue
}

// deletedMeanwhile cancels a job whose tenant or evaluation was deleted after it was
// queued (an evaluation goes with its last run): there is nothing to score, and retrying
// would not bring it back.
func deletedMeanwhile(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	return err
}

// errTransient is wrapped by a job's error when some results failed for a reason that
// may pass; River retries the job.
var errTransient = errors.New("transient failures")

func (w *worker) Work(ctx context.Context, job *river.Job[EvaluateArgs]) error {
	e, a := w.e, job.Args
	t, err := e.st.TenantByID(ctx, a.TenantID)
	if err != nil {
		return deletedMeanwhile(err)
	}
	ev, err := e.st.EvaluationByPK(ctx, a.TenantID, a.EvaluationPK)
	if err != nil {
		return deletedMeanwhile(err)
	}
	runs, stored, err := e.chunkRuns(ctx, a)
	if err != nil {
		return err
	}
	if e.opts.PrepareJudge != nil {
		if err := e.opts.PrepareJudge(ctx, t); err != nil {
			return err
		}
	}
	if ev.Spec.Judge != nil {
		// Every judge call of the job's scorers goes where the evaluation says, in every
		// runtime: the host meters each call with this context.
		ctx = broker.WithRoute(ctx, *ev.Spec.Judge)
	}
	last := job.Attempt >= job.MaxAttempts
	results, transient := e.score(ctx, t, ev, runs, stored, last)
	if err := ctx.Err(); err != nil {
		// Stopping or out of time: the job runs again and scores what is missing, so keep
		// what this attempt finished (a chunk longer than one job's time then still ends,
		// instead of starting over on every attempt). Calls the deadline cut off are
		// transient and not kept, unless this was the last attempt and its time ran out:
		// then they are the job's outcome, failed with the reason.
		e.keepFinished(ctx, ev, results, last && errors.Is(err, context.DeadlineExceeded))
		return err
	}
	if transient != nil {
		if len(results) > 0 {
			if err := e.storeResults(ctx, ev, results); err != nil {
				return err
			}
			e.signalStored()
		}
		return transient
	}
	// On SQLite the commit is shared with the imports storing runs meanwhile
	// (store.Store.InSharedTx): one WAL write for both, not one each.
	err = e.st.InSharedTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if _, err := tx.InsertResults(ctx, results); err != nil {
			return err
		}
		if err := e.touchInsights(ctx, tx, ev, results); err != nil {
			return err
		}
		return e.q.complete(ctx, tx, job)
	})
	if err != nil && last && ctx.Err() == nil {
		// The last attempt: a job discarded now would leave its runs pending forever.
		if err := e.storeEach(ctx, ev, results, err); err != nil {
			return err
		}
		err = e.st.InTx(ctx, func(tx *store.Tx) error { return e.q.complete(ctx, tx, job) })
	}
	if err != nil {
		return err
	}
	e.signalStored()
	return nil
}

// storeResults stores results and touches their insight series in one transaction.
func (e *Queue) storeResults(ctx context.Context, ev store.Evaluation, results []store.Result) error {
	return e.st.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.InsertResults(ctx, results); err != nil {
			return err
		}
		return e.touchInsights(ctx, tx, ev, results)
	})
}

// keepTimeout bounds storing an attempt's finished results after its own time ran out.
const keepTimeout = 5 * time.Second

// keepFinished stores the results an attempt finished before its context ended, on a
// context of their own; a failure only costs the next attempt the work again. Unless
// final, a result failed for a reason that may pass (a call cut off by the end) is left
// for the next attempt.
func (e *Queue) keepFinished(ctx context.Context, ev store.Evaluation, results []store.Result, final bool) {
	if !final {
		results = slices.DeleteFunc(slices.Clone(results), func(r store.Result) bool {
			if r.Status != string(sdk.StatusFailed) {
				return false
			}
			var res sdk.Result
			return json.Unmarshal(r.Body, &res) != nil || res.Error == nil || transientCode(res.Error.Code)
		})
	}
	if len(results) == 0 {
		return
	}
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), keepTimeout)
	defer cancel()
	if err := e.storeResults(kctx, ev, results); err != nil {
		e.opts.Logger.Warn("a job out of time could not keep its finished results; the next attempt scores them again", "evaluation", ev.ID, "results", len(results), "err", err)
		return
	}
	e.signalStored()
}

// chunkRuns reads the runs of a job's chunk and which of their results are stored.
func (e *Queue) chunkRuns(ctx context.Context, a EvaluateArgs) ([]store.Run, map[store.ResultKey]bool, error) {
	if len(a.RunPKs) == 0 {
		return e.st.ChunkRuns(ctx, a.TenantID, a.EvaluationPK, a.From, a.To)
	}
	runs, err := e.st.RunsByPK(ctx, a.TenantID, a.RunPKs)
	if err != nil {
		return nil, nil, err
	}
	stored, err := e.st.StoredResults(ctx, a.EvaluationPK, a.RunPKs)
	return runs, stored, err
}

// Timeout is the engine's JobTimeout.
func (w *worker) Timeout(*river.Job[EvaluateArgs]) time.Duration { return w.e.opts.JobTimeout }

// transientCode reports whether a failure may pass on a later attempt.
func transientCode(code string) bool {
	switch code {
	case sdk.CodeJudgeError, sdk.CodeTimeout, sdk.CodeUnavailable, sdk.CodeCanceled:
		return true
	}
	return false
}

// storeEach stores results one at a time, each in a transaction of its own, on a job's
// last attempt after storing them together failed: a result the database refuses is
// stored as failed with the reason instead, so the evaluation ends rather than waiting
// for results that will never come; the others are kept.
func (e *Queue) storeEach(ctx context.Context, ev store.Evaluation, results []store.Result, cause error) error {
	for _, r := range results {
		err := e.storeResults(ctx, ev, []store.Result{r})
		if err == nil {
			continue
		}
		e.opts.Logger.Error("a result could not be stored; storing it as failed", "evaluation", ev.ID, "run_pk", r.RunPK, "scorer", r.Scorer, "err", err)
		f := sdk.Failed(sdk.CodeUnavailable, fmt.Sprintf("the result could not be stored (%v); score the run again once the store takes it", err))
		r.Status, r.Score, r.Passed = string(f.Status), nil, nil
		if r.Body, err = json.Marshal(f); err != nil {
			return err
		}
		if err := e.storeResults(ctx, ev, []store.Result{r}); err != nil {
			return fmt.Errorf("store a failed result after %v: %w", cause, err)
		}
	}
	return nil
}
