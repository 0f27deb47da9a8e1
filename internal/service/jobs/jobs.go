// Package jobs runs evaluations on River (github.com/riverqueue/river), in the store's own
// database: SQLite through River's SQLite driver, PostgreSQL through its pgx driver, so
// that several `scorekit worker` processes on one PostgreSQL share the work with no queue
// of our own.
//
// An evaluation is split into jobs of [Options.ChunkSize] runs, inserted in the same
// transaction as the evaluation row ([Queue.Enqueue]): an evaluation never exists without
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
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
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
)

// FlagTextRepaired flags a result stored with U+FFFD in place of text no database stores
// (a NUL, invalid UTF-8, a lone surrogate), such as a judge's reasoning holding a NUL or
// a WASM guest's reason holding invalid UTF-8. The host flags what it repaired as it
// decoded a guest's result (host.DecodeResult); the service, what it repairs as it
// stores one.
const FlagTextRepaired = host.FlagTextRepaired

// PrescreenScorer is the scorer a tiered evaluation asks before any judge.
const PrescreenScorer = "prescreen"

// Options configure a Queue. Zero fields take their defaults.
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

// Queue enqueues evaluations and, with Workers > 0, works them.
type Queue struct {
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
func (e *Queue) Stored() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stored == nil {
		e.stored = make(chan struct{})
	}
	return e.stored
}

func (e *Queue) signalStored() {
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
func New(ctx context.Context, st *store.Store, sc *scorers.Cache, o Options) (*Queue, error) {
	o = o.withDefaults()
	e := &Queue{st: st, sc: sc, opts: o}
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
	err := st.WithHandle(store.Handles{
		SQLite: func(db *sql.DB) (err error) {
			e.q, err = newQueue(ctx, riversqlite.New(db), cfg, (*store.Tx).SQLTx, o.Workers > 0)
			return err
		},
		Postgres: func(pool *pgxpool.Pool) (err error) {
			e.q, err = newQueue(ctx, riverpgxv5.New(pool), cfg, (*store.Tx).PgxTx, o.Workers > 0)
			return err
		},
	})
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
func (e *Queue) Start(ctx context.Context) error { return e.q.start(ctx) }

// Stop stops taking jobs and waits for the running ones until ctx ends; a job cut off
// then is rescued and runs again (its stored results are not written twice).
func (e *Queue) Stop(ctx context.Context) error { return e.q.stop(ctx) }

// ChunkSize is how many runs a job scores.
func (e *Queue) ChunkSize() int { return e.opts.ChunkSize }

// Retry policies.
var _ river.ClientRetryPolicy = FixedRetry(0)

// FixedRetry retries a job after a fixed delay: for tests and benchmarks, where River's
// default backoff (seconds growing to hours) would dominate.
type FixedRetry time.Duration

// NextRetry returns now plus the delay.
func (f FixedRetry) NextRetry(*rivertype.JobRow) time.Time { return time.Now().Add(time.Duration(f)) }
