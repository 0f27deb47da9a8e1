package jobs

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/service/telemetry"
	"github.com/scorekit/scorekit/sdk"
)

// score runs the evaluation's scorers on runs, leaving out the results stored already.
// Unless last, a transient failure is left out too and reported in the returned error.
//
// Each scorer scores the chunk's runs that need it before the next scorer starts. One
// that does not use the judge gets them in JobConcurrency batches at once
// (host.Scorer.ScoreBatch: one guest call per batch for a WASM scorer of ABI v2, where a
// call cost as much as a cheap scorer's work); one that uses the judge gets JobConcurrency
// runs at once, one call each, since its time is the judge's and a batch is scored in
// order.
func (e *Queue) score(ctx context.Context, t store.Tenant, ev store.Evaluation, runs []store.Run, stored map[store.ResultKey]bool, last bool) ([]store.Result, error) {
	var (
		mu        sync.Mutex
		out       []store.Result
		transient []string
		scorers   = &chunkScorers{e: e, t: t, ev: ev}
		now       = time.Now()
	)
	defer scorers.release()
	keep := func(r *store.Run, ref store.ScorerRef, version string, res sdk.Result) {
		if res.Status == sdk.StatusFailed && res.Error != nil && transientCode(res.Error.Code) && !last {
			mu.Lock()
			transient = append(transient, fmt.Sprintf("run %s, %s: %v", r.ID, ref.Name, res.Error))
			mu.Unlock()
			return
		}
		sr := e.resultRow(scorers, r, ref, version, res, now)
		mu.Lock()
		out = append(out, sr)
		mu.Unlock()
	}
	// The runs were decoded by host.DecodeRun when they were imported; the same one-read
	// decoder gives the same runs back, a fraction of encoding/json's cost. Each is checked
	// here once (a row may be older than the rules, or written by hand), and every scorer
	// of the chunk then takes it as checked (host.CheckedRun).
	decoded := make([]host.CheckedRun, len(runs))
	ok := make([]bool, len(runs))
	for i := range runs {
		r := &runs[i]
		run, err := host.DecodeCheckedRun(r.Body)
		if err != nil {
			for _, ref := range ev.Spec.Scorers {
				if !stored[store.ResultKey{RunPK: r.PK, Scorer: ref.ResultName()}] {
					keep(r, ref, ref.Version, sdk.Failed(sdk.CodeInvalidRun, "stored run does not decode: "+err.Error()))
				}
			}
			continue
		}
		decoded[i], ok[i] = run, true
	}
	// A tiered evaluation asks the pre-screen first, once per run: its result screens the
	// scorers that need the judge, and is the prescreen result when the evaluation
	// selects it.
	var screens []screenResult
	if ev.Spec.Tiered {
		screens = make([]screenResult, len(runs))
		var idx []int
		for i := range runs {
			if ok[i] {
				idx = append(idx, i)
			}
		}
		e.scoreEach(ctx, scorers, e.prescreenRef(ev), runs, decoded, idx, func(i int, version string, res sdk.Result) {
			screens[i] = screenResult{res: res, version: version}
		})
	}
	for _, ref := range ev.Spec.Scorers {
		var idx []int
		for i := range runs {
			r := &runs[i]
			if !ok[i] || stored[store.ResultKey{RunPK: r.PK, Scorer: ref.ResultName()}] {
				continue
			}
			if screens != nil && ref.Name == PrescreenScorer {
				keep(r, ref, cmp.Or(screens[i].version, ref.Version), screens[i].res)
				continue
			}
			if screens != nil && ref.Judge {
				if res, closed := screens[i].closed(); closed {
					keep(r, ref, ref.Version, res)
					continue
				}
			}
			idx = append(idx, i)
		}
		e.scoreEach(ctx, scorers, ref, runs, decoded, idx, func(i int, version string, res sdk.Result) {
			keep(&runs[i], ref, cmp.Or(version, ref.Version), res)
		})
	}
	if len(transient) > 0 {
		return out, fmt.Errorf("%w: %d result(s), first: %s", errTransient, len(transient), transient[0])
	}
	return out, nil
}

// scoreEach scores the runs at idx with ref's scorer, JobConcurrency calls at once, and
// hands each result to done with the scorer's version (empty when it could not open).
func (e *Queue) scoreEach(ctx context.Context, scorers *chunkScorers, ref store.ScorerRef, runs []store.Run, decoded []host.CheckedRun, idx []int, done func(i int, version string, res sdk.Result)) {
	if len(idx) == 0 || ctx.Err() != nil {
		return
	}
	sc, err := scorers.get(ctx, ref)
	if err != nil {
		res := sdk.Failed(sdk.CodeUnavailable, fmt.Sprintf("open scorer %s: %v", ref.Name, err))
		for _, i := range idx {
			done(i, "", res)
		}
		return
	}
	version := sc.Info().Version
	if ref.Published > 0 {
		version = ref.Version
	}
	info := sc.Info()
	per := 1
	if !info.Has(sdk.CapJudge) && !info.Has(sdk.CapEmbed) {
		per = (len(idx) + e.opts.JobConcurrency - 1) / e.opts.JobConcurrency
	}
	sem := make(chan struct{}, e.opts.JobConcurrency)
	var wg sync.WaitGroup
	for start := 0; start < len(idx); start += per {
		if ctx.Err() != nil {
			break
		}
		group := idx[start:min(start+per, len(idx))]
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			e.scoreGroup(ctx, scorers, ref, sc, version, runs, decoded, group, done)
		})
	}
	wg.Wait()
}

// scoreGroup scores the runs at group with sc in one host.Scorer.ScoreCheckedBatch, each in a
// span of its own (telemetry.T.ScorerCall).
func (e *Queue) scoreGroup(ctx context.Context, scorers *chunkScorers, ref store.ScorerRef, sc *host.Scorer, version string,
	runs []store.Run, decoded []host.CheckedRun, group []int, done func(i int, version string, res sdk.Result)) {
	tsc := telemetry.Scorer{Tenant: telemetry.Tenant{ID: scorers.t.ID, Created: scorers.t.CreatedAt, Name: scorers.t.Name},
		Name: ref.Name, Published: ref.Published > 0}
	if len(group) == 1 {
		i := group[0]
		cctx, end := e.opts.Telemetry.ScorerCall(ctx, tsc, runs[i].ID)
		res := sc.ScoreChecked(cctx, decoded[i])
		end(&res, version)
		done(i, version, res)
		return
	}
	batch := make([]host.CheckedRun, len(group))
	ends := make([]func(*sdk.Result, string), len(group))
	for k, i := range group {
		batch[k] = decoded[i]
		_, ends[k] = e.opts.Telemetry.ScorerCall(ctx, tsc, runs[i].ID)
	}
	for k, res := range sc.ScoreCheckedBatch(ctx, batch) {
		ends[k](&res, version)
		done(group[k], version, res)
	}
}

// resultRow is res as the store keeps it, for run r and scorer ref.
func (e *Queue) resultRow(scorers *chunkScorers, r *store.Run, ref store.ScorerRef, version string, res sdk.Result, now time.Time) store.Result {
	ev := scorers.ev
	body, err := resultBody(&res)
	if err != nil {
		body, _ = json.Marshal(sdk.Failed(sdk.CodeInvalidResult, "the result cannot be stored as JSON: "+err.Error()))
		res = sdk.Failed(sdk.CodeInvalidResult, err.Error())
	}
	sr := store.Result{
		TenantID: scorers.t.ID, EvaluationPK: ev.PK, RunPK: r.PK, Scorer: ref.ResultName(), ScorerVersion: version,
		Status: string(res.Status), Body: body, CreatedAt: now,
	}
	switch {
	case ref.JudgeModel != "":
		sr.JudgeModel = ref.JudgeModel
	case ref.Judge:
		sr.JudgeModel = e.opts.JudgeModel
		if j := ev.Spec.Judge; j != nil && j.Model != "" {
			sr.JudgeModel = j.Model
		}
	}
	sr.ScorerDigest = ref.Digest
	if res.Status == sdk.StatusScored {
		sr.Score, sr.Passed = res.Score, res.Passed
	}
	return sr
}

// screenResult is the pre-screen's result on a run of a tiered evaluation.
type screenResult struct {
	res     sdk.Result
	version string
}

// closed returns what a judge scorer's result is when the pre-screen keeps the judge
// from the run: skipped when it did not pass the run, failed with its error (and its
// code, so a transient failure is retried) when it could not say. Never "did not pass"
// for a pre-screen that did not run.
func (g *screenResult) closed() (sdk.Result, bool) {
	switch g.res.Status {
	case sdk.StatusScored:
		if g.res.Passed != nil && *g.res.Passed {
			return sdk.Result{}, false
		}
		return sdk.Skipped("tiered evaluation: the pre-screen did not pass this run, so the judge was not asked"), true
	case sdk.StatusSkipped:
		return sdk.Skipped("tiered evaluation: the pre-screen skipped this run (" + g.res.Reason + "), so the judge was not asked"), true
	}
	code, msg := sdk.CodeScorerError, "no error given"
	if g.res.Error != nil {
		code, msg = g.res.Error.Code, g.res.Error.Message
	}
	return sdk.Failed(code, "tiered evaluation: the pre-screen could not score this run, so the judge was not asked: "+msg), true
}

// prescreenRef is the pre-screen a tiered evaluation asks first: the evaluation's own
// when it selects it (with the version it resolved), else the host's.
func (e *Queue) prescreenRef(ev store.Evaluation) store.ScorerRef {
	for _, ref := range ev.Spec.Scorers {
		if ref.Name == PrescreenScorer {
			return ref
		}
	}
	return store.ScorerRef{Name: PrescreenScorer}
}

// resolveScorer is where a chunk turns a scorer's name into the scorer it runs, when it
// scores (not when its evaluation was created): the one place that decides which
// version of the scorer a run scored from now on gets.
//
// A tenant's published version is opened by its number, read from the store on first use
// in this process and kept (a version never changes): a version published or promoted
// through another process needs no restart here.
func (e *Queue) resolveScorer(ctx context.Context, t store.Tenant, ev store.Evaluation, ref store.ScorerRef) (*host.Scorer, func(), error) {
	if ref.Published > 0 {
		return e.sc.GetVersion(ctx, t, ref.Name, ref.Published)
	}
	return e.sc.Get(ctx, t, ref.Name, ev.Spec.Config[ref.Name])
}

// chunkScorers are the scorers one chunk runs, each resolved (resolveScorer) the first
// time a run of the chunk needs it and kept until the chunk is scored: a promotion
// applies to the chunks scored after it, and a chunk of 200 runs opens its scorer once,
// not 200 times.
type chunkScorers struct {
	e  *Queue
	t  store.Tenant
	ev store.Evaluation

	mu sync.Mutex
	m  map[store.ScorerRef]*chunkScorer
}

// chunkScorer is one scorer of a chunk, resolved once (ready closes when it is).
type chunkScorer struct {
	ready   chan struct{}
	sc      *host.Scorer
	release func()
	err     error
}

// get returns ref's scorer, resolving it on first use.
func (c *chunkScorers) get(ctx context.Context, ref store.ScorerRef) (*host.Scorer, error) {
	c.mu.Lock()
	if c.m == nil {
		c.m = map[store.ScorerRef]*chunkScorer{}
	}
	s, ok := c.m[ref]
	if !ok {
		s = &chunkScorer{ready: make(chan struct{})}
		c.m[ref] = s
	}
	c.mu.Unlock()
	if !ok {
		s.sc, s.release, s.err = c.e.resolveScorer(ctx, c.t, c.ev, ref)
		close(s.ready)
	}
	select {
	case <-s.ready:
		return s.sc, s.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// release gives back every scorer the chunk resolved; call it once its runs are scored.
func (c *chunkScorers) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.m {
		<-s.ready
		if s.err == nil {
			s.release()
		}
	}
	c.m = nil
}

// resultBody is res as stored: text no database stores (a judge's reasoning holding a
// NUL, a guest's reason holding invalid UTF-8) is replaced with U+FFFD and the result
// flagged FlagTextRepaired, the same on both backends (store.CleanJSON). Invalid UTF-8 in
// a string encoding/json replaces itself, writing the escape \ufffd: only then are the
// strings looked at, to tell that from a scorer's own escape.
func resultBody(res *sdk.Result) ([]byte, error) {
	body, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	_, repaired := store.CleanJSON(body)
	if !repaired && bytes.Contains(body, []byte(`\ufffd`)) {
		repaired = store.InvalidUTF8(res)
	}
	if !repaired {
		return body, nil
	}
	if res.HasFlag(FlagTextRepaired) {
		body, _ = store.CleanJSON(body)
		return body, nil
	}
	res.Flags = append(slices.Clone(res.Flags), FlagTextRepaired)
	if body, err = json.Marshal(res); err != nil {
		return nil, err
	}
	body, _ = store.CleanJSON(body)
	return body, nil
}
