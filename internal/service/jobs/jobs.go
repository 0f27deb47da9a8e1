// Package jobs runs evaluations on River (github.com/riverqueue/river), in the store's own
// database: SQLite through River's SQLite driver, PostgreSQL through its pgx driver, so
// that several `scorekit worker` processes on one PostgreSQL share the work with no queue
// of our own.
//
// An evaluation is split into jobs of [Options.ChunkSize] runs, inserted in the same
// transaction as the evaluation row ([Engine.Enqueue]): an evaluation never exists without
// its jobs, nor jobs without it. A job scores its runs with every scorer of the evaluation
// and, in one transaction, stores the results (insert ... on conflict do nothing on
// (evaluation, run, scorer)) and marks itself complete (river.JobCompleteTx): a job that
// runs again after a crash writes each result once.
//
// A result that failed for a reason that may pass (judge error, timeout, unavailable) is
// not stored while attempts remain: the job stores the rest and returns an error, and
// River retries it with its backoff. On the last attempt the failure is stored as it is,
// with its error: never a score of 0. A worker killed mid-job loses nothing: River's
// rescuer makes its running jobs available again after [Options.RescueAfter].
package jobs

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/service/scorers"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/service/telemetry"
	"github.com/scorekit/scorekit/sdk"
)

// FlagTextRepaired flags a result stored with U+FFFD in place of text no database stores
// (a NUL, invalid UTF-8, a lone surrogate), such as a judge's reasoning holding a NUL or
// a WASM guest's reason holding invalid UTF-8. The host flags what it repaired as it
// decoded a guest's result (host.DecodeResult); the service, what it repairs as it
// stores one.
const FlagTextRepaired = host.FlagTextRepaired

// PrescreenScorer is the scorer a tiered evaluation asks before any judge.
const PrescreenScorer = "prescreen"

// Options configure an Engine. Zero fields take their defaults.
type Options struct {
	// Workers is how many jobs this process runs at once. Optional. Default is 0: the
	// engine only enqueues (an API process whose workers run elsewhere, or a command).
	Workers int
	// JobConcurrency is how many (run, scorer) calls one job makes at once. Optional.
	// Default is 8.
	JobConcurrency int
	// ChunkSize is how many runs one job scores. Optional. Default is 200: enough that
	// the queue's cost per job (a handful of queries and a transaction) is small beside
	// cheap scorers (BENCHMARKS.md), few enough that a retry redoes little.
	ChunkSize int
	// ArrivalFlushAfter is how long runs that joined an arrival evaluation wait for
	// others to fill a chunk before a partial chunk is cut: the bound on an arrival's wait
	// to be scored, and what makes chunks of cheap scorers large enough that the queue's
	// cost per job stays small (RATIONALE.md, "Arrivals coalesced"). Optional. Default
	// is 250 ms.
	ArrivalFlushAfter time.Duration
	// MaxAttempts is how many times a job runs before its transient failures are stored.
	// Optional. Default is 5.
	MaxAttempts int
	// RescueAfter is how long a job may stay running before River gives it to another
	// worker (its worker died). Optional. Default is 10 minutes; must exceed JobTimeout.
	RescueAfter time.Duration
	// JobTimeout bounds one job. Optional. Default is RescueAfter * 2/3.
	JobTimeout time.Duration
	// RetryPolicy says when a failed job runs again. Optional. Default is River's
	// (attempt^4 seconds, with jitter).
	RetryPolicy river.ClientRetryPolicy
	// PollInterval is how often workers look for jobs when not notified. Optional.
	// Default is River's (1s).
	PollInterval time.Duration
	// JudgeModel is recorded on the results of scorers that use the judge, unless the
	// evaluation names its own judge (Spec.Judge). Optional. service.Open sets it to its
	// judge's model.
	JudgeModel string
	// PrepareJudge is called once per job, before its runs are scored, with the job's
	// tenant: the service gives the judge broker the tenant's current own keys there.
	// An error fails the job (River retries it). Optional.
	PrepareJudge func(ctx context.Context, t store.Tenant) error
	// Logger. Optional. Default logs warnings to slog.Default's handler.
	Logger *slog.Logger
	// ID names this client among River's clients. Optional.
	ID string
	// Telemetry receives metrics and traces of evaluations, jobs and scorer calls.
	// Optional. Default is none.
	Telemetry *telemetry.T
	// HTTPClient delivers webhooks. Optional. Default is a client with a 10s timeout.
	HTTPClient *http.Client
	// RetentionInterval is how often the retention sweep runs (RetentionArgs), on the
	// leading process of those that work jobs, and once when it starts. Optional.
	// Default is an hour.
	RetentionInterval time.Duration
	// CompleteTraces makes the runs of the OTLP traces that are complete (the service's
	// CompleteTraces); a River job (TracesArgs) calls it every TraceInterval on the leading
	// process of those that work jobs. Optional: without it there is no such job.
	CompleteTraces func(ctx context.Context, now time.Time) error
	// TraceInterval is how often CompleteTraces runs. Optional. Default is 2 seconds.
	TraceInterval time.Duration
}

func (o Options) withDefaults() Options {
	if o.JobConcurrency <= 0 {
		o.JobConcurrency = 8
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = 200
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.ArrivalFlushAfter <= 0 {
		o.ArrivalFlushAfter = 250 * time.Millisecond
	}
	if o.RescueAfter <= 0 {
		o.RescueAfter = 10 * time.Minute
	}
	if o.JobTimeout <= 0 || o.JobTimeout >= o.RescueAfter {
		o.JobTimeout = o.RescueAfter * 2 / 3
	}
	if o.Logger == nil {
		o.Logger = slog.New(warnOnly{slog.Default().Handler()})
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: webhookTimeout}
	}
	if o.RetentionInterval <= 0 {
		o.RetentionInterval = time.Hour
	}
	if o.TraceInterval <= 0 {
		o.TraceInterval = 2 * time.Second
	}
	return o
}

// warnOnly passes on warnings and errors: River reports every start and stop at info.
type warnOnly struct{ slog.Handler }

func (w warnOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}

// Engine enqueues evaluations and, with Workers > 0, works them.
type Engine struct {
	st   *store.Store
	sc   *scorers.Cache
	opts Options
	q    queue

	mu     sync.Mutex
	stored chan struct{} // closed when a job of this process commits results; nil until asked for
}

// Stored returns a channel closed the next time a job run by this process commits
// results, so a waiter in the same process reads them at once instead of at its next
// poll. Jobs run by other processes do not close it: waiters still poll.
func (e *Engine) Stored() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stored == nil {
		e.stored = make(chan struct{})
	}
	return e.stored
}

func (e *Engine) signalStored() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stored != nil {
		close(e.stored)
		e.stored = nil
	}
}

// queue is River's client for one backend.
type queue interface {
	start(ctx context.Context) error
	stop(ctx context.Context) error
	insert(ctx context.Context, tx *store.Tx, params []river.InsertManyParams) error
	complete(ctx context.Context, tx *store.Tx, job *river.Job[EvaluateArgs]) error
	completeInsights(ctx context.Context, tx *store.Tx, job *river.Job[InsightsArgs]) error
	completeFlush(ctx context.Context, tx *store.Tx, job *river.Job[FlushArgs]) error
	// deleteCompleted deletes up to limit completed jobs of kind (a running one is not).
	deleteCompleted(ctx context.Context, kind string, limit int) error
}

type riverQueue[TDriver riverdriver.Driver[TTx], TTx any] struct {
	client  *river.Client[TTx]
	tx      func(*store.Tx) TTx
	working bool
}

func (q *riverQueue[TDriver, TTx]) start(ctx context.Context) error {
	if !q.working {
		return nil
	}
	return q.client.Start(ctx)
}

func (q *riverQueue[TDriver, TTx]) stop(ctx context.Context) error {
	if !q.working {
		return nil
	}
	return q.client.Stop(ctx)
}

func (q *riverQueue[TDriver, TTx]) insert(ctx context.Context, tx *store.Tx, params []river.InsertManyParams) error {
	_, err := q.client.InsertManyTx(ctx, q.tx(tx), params)
	return err
}

func (q *riverQueue[TDriver, TTx]) complete(ctx context.Context, tx *store.Tx, job *river.Job[EvaluateArgs]) error {
	_, err := river.JobCompleteTx[TDriver](ctx, q.tx(tx), job)
	return err
}

func (q *riverQueue[TDriver, TTx]) completeInsights(ctx context.Context, tx *store.Tx, job *river.Job[InsightsArgs]) error {
	_, err := river.JobCompleteTx[TDriver](ctx, q.tx(tx), job)
	return err
}

func (q *riverQueue[TDriver, TTx]) deleteCompleted(ctx context.Context, kind string, limit int) error {
	_, err := q.client.JobDeleteMany(ctx, river.NewJobDeleteManyParams().Kinds(kind).States(rivertype.JobStateCompleted).First(limit))
	return err
}

func (q *riverQueue[TDriver, TTx]) completeFlush(ctx context.Context, tx *store.Tx, job *river.Job[FlushArgs]) error {
	_, err := river.JobCompleteTx[TDriver](ctx, q.tx(tx), job)
	return err
}

// New migrates River's tables in st's database (rivermigrate) and returns an engine.
// Call Start to work jobs and Stop when done.
func New(ctx context.Context, st *store.Store, sc *scorers.Cache, o Options) (*Engine, error) {
	o = o.withDefaults()
	e := &Engine{st: st, sc: sc, opts: o}
	cfg := &river.Config{
		ID:                   o.ID,
		Logger:               o.Logger,
		MaxAttempts:          o.MaxAttempts,
		RescueStuckJobsAfter: o.RescueAfter,
		JobTimeout:           o.JobTimeout,
		RetryPolicy:          o.RetryPolicy,
		FetchPollInterval:    o.PollInterval,
		// A worker that finishes a job asks for the next at most this often. River's
		// default (100 ms) leaves workers idle between chunks of cheap scorers; a fetch is
		// one query.
		FetchCooldown: 5 * time.Millisecond,
	}
	if o.Telemetry != nil {
		cfg.Middleware = []rivertype.Middleware{o.Telemetry.Middleware()}
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &worker{e: e})
	river.AddWorker(workers, &insightsWorker{e: e})
	river.AddWorker(workers, &webhookWorker{e: e})
	river.AddWorker(workers, &retentionWorker{e: e})
	river.AddWorker(workers, &flushWorker{e: e})
	river.AddWorker(workers, &tracesWorker{e: e})
	cfg.Workers = workers
	if o.Workers > 0 {
		cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: o.Workers}}
		cfg.PeriodicJobs = []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(o.RetentionInterval),
			func() (river.JobArgs, *river.InsertOpts) { return RetentionArgs{}, nil }, &river.PeriodicJobOpts{RunOnStart: true})}
		if o.CompleteTraces != nil {
			cfg.PeriodicJobs = append(cfg.PeriodicJobs, river.NewPeriodicJob(river.PeriodicInterval(o.TraceInterval),
				func() (river.JobArgs, *river.InsertOpts) { return TracesArgs{}, nil }, &river.PeriodicJobOpts{RunOnStart: true}))
		}
	}
	var err error
	switch {
	case st.Pool() != nil:
		e.q, err = newQueue(ctx, riverpgxv5.New(st.Pool()), cfg, (*store.Tx).PgxTx, o.Workers > 0)
	default:
		e.q, err = newQueue(ctx, riversqlite.New(st.SQLDB()), cfg, (*store.Tx).SQLTx, o.Workers > 0)
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

func newQueue[TDriver riverdriver.Driver[TTx], TTx any](ctx context.Context, d TDriver, cfg *river.Config, tx func(*store.Tx) TTx, working bool) (queue, error) {
	m, err := rivermigrate.New(d, &rivermigrate.Config{Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return nil, fmt.Errorf("jobs: migrate River's tables: %w", err)
	}
	c, err := river.NewClient(d, cfg)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	return &riverQueue[TDriver, TTx]{client: c, tx: tx, working: working}, nil
}

// Start works jobs until Stop (a no-op without Workers).
func (e *Engine) Start(ctx context.Context) error { return e.q.start(ctx) }

// Stop stops taking jobs and waits for the running ones until ctx ends; a job cut off
// then is rescued and runs again (its stored results are not written twice).
func (e *Engine) Stop(ctx context.Context) error { return e.q.stop(ctx) }

// ChunkSize is how many runs a job scores.
func (e *Engine) ChunkSize() int { return e.opts.ChunkSize }

// score runs the evaluation's scorers on runs, leaving out the results stored already.
// Unless last, a transient failure is left out too and reported in the returned error.
//
// Each scorer scores the chunk's runs that need it before the next scorer starts. One
// that does not use the judge gets them in JobConcurrency batches at once
// (host.Scorer.ScoreBatch: one guest call per batch for a WASM scorer of ABI v2, where a
// call cost as much as a cheap scorer's work); one that uses the judge gets JobConcurrency
// runs at once, one call each, since its time is the judge's and a batch is scored in
// order.
func (e *Engine) score(ctx context.Context, t store.Tenant, ev store.Evaluation, runs []store.Run, stored map[store.ResultKey]bool, last bool) ([]store.Result, error) {
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
	// decoder gives the same runs back, a fraction of encoding/json's cost.
	decoded := make([]sdk.Run, len(runs))
	ok := make([]bool, len(runs))
	for i := range runs {
		r := &runs[i]
		run, err := host.DecodeRun(r.Body)
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
	// A tiered evaluation asks the pre-screen first, once per run: its result gates the
	// scorers that need the judge, and is the prescreen result when the evaluation
	// selects it.
	var gates []gateResult
	if ev.Spec.Tiered {
		gates = make([]gateResult, len(runs))
		var idx []int
		for i := range runs {
			if ok[i] {
				idx = append(idx, i)
			}
		}
		e.scoreEach(ctx, scorers, e.prescreenRef(ev), runs, decoded, idx, func(i int, version string, res sdk.Result) {
			gates[i] = gateResult{res: res, version: version}
		})
	}
	for _, ref := range ev.Spec.Scorers {
		var idx []int
		for i := range runs {
			r := &runs[i]
			if !ok[i] || stored[store.ResultKey{RunPK: r.PK, Scorer: ref.ResultName()}] {
				continue
			}
			if gates != nil && ref.Name == PrescreenScorer {
				keep(r, ref, cmp.Or(gates[i].version, ref.Version), gates[i].res)
				continue
			}
			if gates != nil && ref.Judge {
				if res, closed := gates[i].closed(); closed {
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
func (e *Engine) scoreEach(ctx context.Context, scorers *chunkScorers, ref store.ScorerRef, runs []store.Run, decoded []sdk.Run, idx []int, done func(i int, version string, res sdk.Result)) {
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

// scoreGroup scores the runs at group with sc in one host.Scorer.ScoreBatch, each in a
// span of its own (telemetry.T.ScorerCall).
func (e *Engine) scoreGroup(ctx context.Context, scorers *chunkScorers, ref store.ScorerRef, sc *host.Scorer, version string,
	runs []store.Run, decoded []sdk.Run, group []int, done func(i int, version string, res sdk.Result)) {
	tsc := telemetry.Scorer{Tenant: telemetry.Tenant{ID: scorers.t.ID, Created: scorers.t.CreatedAt, Name: scorers.t.Name},
		Name: ref.Name, Published: ref.Published > 0}
	if len(group) == 1 {
		i := group[0]
		cctx, end := e.opts.Telemetry.ScorerCall(ctx, tsc, runs[i].ID)
		res := sc.Score(cctx, decoded[i])
		end(&res, version)
		done(i, version, res)
		return
	}
	batch := make([]sdk.Run, len(group))
	ends := make([]func(*sdk.Result, string), len(group))
	for k, i := range group {
		batch[k] = decoded[i]
		_, ends[k] = e.opts.Telemetry.ScorerCall(ctx, tsc, runs[i].ID)
	}
	for k, res := range sc.ScoreBatch(ctx, batch) {
		ends[k](&res, version)
		done(group[k], version, res)
	}
}

// resultRow is res as the store keeps it, for run r and scorer ref.
func (e *Engine) resultRow(scorers *chunkScorers, r *store.Run, ref store.ScorerRef, version string, res sdk.Result, now time.Time) store.Result {
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

// gateResult is the pre-screen's result on a run of a tiered evaluation.
type gateResult struct {
	res     sdk.Result
	version string
}

// closed returns what a judge scorer's result is when the pre-screen keeps the judge
// from the run: skipped when it did not pass the run, failed with its error (and its
// code, so a transient failure is retried) when it could not say. Never "did not pass"
// for a pre-screen that did not run.
func (g *gateResult) closed() (sdk.Result, bool) {
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
func (e *Engine) prescreenRef(ev store.Evaluation) store.ScorerRef {
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
func (e *Engine) resolveScorer(ctx context.Context, t store.Tenant, ev store.Evaluation, ref store.ScorerRef) (*host.Scorer, func(), error) {
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
	e  *Engine
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

// Retry policies.
var _ river.ClientRetryPolicy = FixedRetry(0)

// FixedRetry retries a job after a fixed delay: for tests and benchmarks, where River's
// default backoff (seconds growing to hours) would dominate.
type FixedRetry time.Duration

// NextRetry returns now plus the delay.
func (f FixedRetry) NextRetry(*rivertype.JobRow) time.Time { return time.Now().Add(time.Duration(f)) }
