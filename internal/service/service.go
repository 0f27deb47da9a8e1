// Package service is scorekit's evaluation service: it keeps the runs of every agent of
// every tenant, evaluates them on request (an agent's last N runs) or as they arrive (by
// a per-agent policy), and answers with results, summaries and each result's history.
//
// It is what the HTTP API (internal/service/api), the dashboard (internal/service/web)
// and the command line (scorekit tenants, keys, runs import, eval) share, over three
// rooms each testable alone: internal/service/store (the data, SQLite or PostgreSQL),
// internal/service/jobs (evaluation work on River) and internal/service/scorers (scorers
// opened once per tenant, scorer and config). It is internal: a Go program that embeds
// the service uses the public package service, a small facade over this one.
//
// Every method that reads or writes tenant data takes the tenant: another tenant's run,
// agent or evaluation is [ErrNotFound], never data.
package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/host/wasm"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/redact"
	"github.com/scorekit/scorekit/internal/service/scorers"
	"github.com/scorekit/scorekit/internal/service/secrets"
	"github.com/scorekit/scorekit/internal/service/store"
)

// Errors callers branch on; the HTTP API maps each to a status and a stable code.
var (
	// ErrNotFound: no such run, agent, evaluation or policy for this tenant.
	ErrNotFound = store.ErrNotFound
	// ErrExists: the tenant exists already.
	ErrExists = store.ErrExists
	// ErrUnauthorized: no key, or a key that is unknown or revoked.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrInvalid: the request is malformed or out of range; the message says what to fix.
	ErrInvalid = errors.New("invalid request")
	// ErrUnknownScorer: no scorer of that name.
	ErrUnknownScorer = host.ErrUnknownScorer
	// ErrNotAllowed: the tenant's policy does not allow the scorer.
	ErrNotAllowed = scorers.ErrNotAllowed
	// ErrInvalidConfig: a scorer config does not match the scorer's config schema.
	ErrInvalidConfig = host.ErrInvalidConfig
	// ErrInsufficientScope: the caller's key may not do this (a label key writing another
	// labeller's label); the message says which key would.
	ErrInsufficientScope = errors.New("insufficient scope")
	// ErrUnavailable: the service is not set up for the request (a tenant's key with no
	// operator secret key to seal it); the message says what the operator must do.
	ErrUnavailable = errors.New("unavailable")
)

// invalid returns an error wrapping ErrInvalid with a message that says what to fix.
func invalid(format string, args ...any) error {
	return &Error{kind: ErrInvalid, msg: fmt.Sprintf(format, args...)}
}

// notFound is the store's err as the service says it: store.ErrNotFound becomes an
// error wrapping ErrNotFound with a message that says what is missing; any other err
// (nil too) is returned as it is.
func notFound(err error, format string, args ...any) error {
	if errors.Is(err, store.ErrNotFound) {
		return &Error{kind: ErrNotFound, msg: fmt.Sprintf(format, args...)}
	}
	return err
}

// Error is an error whose message is meant for the caller as it is (no prefixes).
type Error struct {
	kind error
	msg  string
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.kind }

// Defaults of Config.
const (
	DefaultMaxRunsPerEvaluation = 10000
	DefaultTenantMaxRunBytes    = 1 << 20
	// An arrival evaluation takes an agent's arriving runs until it has
	// DefaultArrivalMaxRuns of them or is DefaultArrivalMaxAge old (RATIONALE.md,
	// "Arrivals coalesced").
	DefaultArrivalMaxRuns = 1000
	DefaultArrivalMaxAge  = time.Hour
	// DefaultTraceWindow is Config.TraceWindow's default.
	DefaultTraceWindow = time.Hour
	// DefaultMaxOpenSpanBytes is Config.MaxOpenSpanBytes's default.
	DefaultMaxOpenSpanBytes = 64 << 20
)

// Config is what [Open] assembles a service from: its parts, each given explicitly. The
// command line (serve, worker, eval, tenants, keys, runs) maps its flags to a Config, and
// the tests build theirs the same way, so the wiring tested is the wiring shipped.
type Config struct {
	// DB is the store: a SQLite file, or a postgres:// URL. Open migrates it. Required.
	DB string
	// Host runs the scorers; its registry is what tenants choose from. Required.
	Host *host.Host
	// Judge is the judge broker behind Host's judge (given to it with host.WithJudge,
	// directly or wrapped, as telemetry's tracing does). The service gives it each
	// tenant's judge limits and records its model on the results of the scorers that use
	// it. Optional. Default is none: scorers that need a judge are skipped with a reason.
	Judge *broker.Broker
	// Jobs configures the evaluation jobs; with Jobs.Workers > 0 this process works them.
	// Leave Jobs.JudgeModel empty: it is Judge's model. Optional. Zero fields take the
	// jobs package's defaults.
	Jobs jobs.Options
	// ScorerCacheSize caps the scorers kept open, one per tenant, scorer and config.
	// Optional. Default is scorers.DefaultSize.
	ScorerCacheSize int
	// MaxRunsPerEvaluation caps an evaluation's limit unless the tenant's policy sets
	// its own. Optional. Default is DefaultMaxRunsPerEvaluation.
	MaxRunsPerEvaluation int
	// MaxRunBytes caps one run's JSON at import unless the tenant's policy sets its own
	// (the host's run limits, host.DefaultMaxRunBytes, still apply beneath it). Optional.
	// Default is DefaultTenantMaxRunBytes.
	MaxRunBytes int
	// DefaultScorers are evaluated when a request names none and the agent has no
	// policy. Optional. Default is prescreen.
	DefaultScorers []string
	// Publish says what tenants may publish as their own scorers. Optional. Zero fields
	// take PublishConfig's defaults.
	Publish PublishConfig
	// ArrivalMaxRuns and ArrivalMaxAge close an agent's open arrival evaluation: runs
	// arriving after it holds ArrivalMaxRuns runs or is ArrivalMaxAge old open the next.
	// Optional. Defaults are DefaultArrivalMaxRuns and DefaultArrivalMaxAge.
	ArrivalMaxRuns int
	ArrivalMaxAge  time.Duration
	// TraceWindow is how long the spans of an open trace that came in over OTLP are kept
	// after the trace's last span arrived, waiting for their agent span (IngestTraces).
	// Optional. Default is DefaultTraceWindow.
	TraceWindow time.Duration
	// MaxOpenSpanBytes caps the spans and log records of open traces one tenant keeps;
	// those beyond it are rejected (IngestTraces, IngestLogs). Optional. Default is
	// DefaultMaxOpenSpanBytes.
	MaxOpenSpanBytes int64
	// TraceQuiet is how long a trace whose root span came must go without a span or log
	// record before it is complete and the runs that need the whole trace are made
	// (CompleteTraces). Optional. Default is DefaultTraceQuiet.
	TraceQuiet time.Duration
	// Secrets seals the API keys tenants store for judge endpoints (internal/service/secrets),
	// with the operator's secret key. Optional. Default is none: a tenant cannot store a
	// key, and a key stored earlier is not used (that tenant's calls there fail with the
	// reason; they never go out with the operator's key instead).
	Secrets *secrets.Keyring
}

// Service is the evaluation service. It is safe for concurrent use.
type Service struct {
	st   *store.Store
	eng  *jobs.Queue
	sc   *scorers.Cache
	wasm *wasm.Engine // runs tenants' published modules
	opts Config
	// checks bounds the checks of published modules running at once; files keeps the
	// modules and their compiled code on disk.
	checks *checkSlots
	files  *moduleFiles

	closeOnce sync.Once
	closeErr  error

	// redactors are the tenants' redaction rules compiled, by their JSON.
	redactorsMu sync.Mutex
	redactors   map[string]*redact.Redactor

	// tallies are the OTLP counts of this process not yet in the store, by tenant id
	// (flushTallies); stopTallies ends the goroutine that flushes them, tallyDone closes
	// when it has.
	talliesMu   sync.Mutex
	tallies     map[int64]*ingestTally
	stopTallies chan struct{}
	tallyDone   chan struct{}

	// afterGate, when set (by tests), runs in Promote between the agreement gate's
	// measure and the transaction that records the promotion.
	afterGate func()
}

// Open opens the store at c.DB (migrating it), the scorer cache over c.Host and c.Judge,
// and the job engine, and starts the engine: its workers when c.Jobs.Workers > 0. Close
// releases what Open opened; the host and the judge stay the caller's.
func Open(ctx context.Context, c Config) (*Service, error) {
	switch {
	case c.DB == "":
		return nil, errors.New("service: Config.DB is empty; give a SQLite file or a postgres:// URL")
	case c.Host == nil:
		return nil, errors.New("service: Config.Host is nil; give the host that runs the scorers")
	case c.Jobs.JudgeModel != "":
		return nil, fmt.Errorf("service: Config.Jobs.JudgeModel is %q: leave it empty, the model recorded is Config.Judge's", c.Jobs.JudgeModel)
	}
	if c.MaxRunsPerEvaluation <= 0 {
		c.MaxRunsPerEvaluation = DefaultMaxRunsPerEvaluation
	}
	if c.MaxRunBytes <= 0 {
		c.MaxRunBytes = DefaultTenantMaxRunBytes
	}
	if c.ArrivalMaxRuns <= 0 {
		c.ArrivalMaxRuns = DefaultArrivalMaxRuns
	}
	if c.ArrivalMaxAge <= 0 {
		c.ArrivalMaxAge = DefaultArrivalMaxAge
	}
	if c.TraceWindow <= 0 {
		c.TraceWindow = DefaultTraceWindow
	}
	if c.MaxOpenSpanBytes <= 0 {
		c.MaxOpenSpanBytes = DefaultMaxOpenSpanBytes
	}
	if c.TraceQuiet <= 0 {
		c.TraceQuiet = DefaultTraceQuiet
	}
	if len(c.DefaultScorers) == 0 {
		c.DefaultScorers = []string{jobs.PrescreenScorer}
	}
	st, err := store.Open(ctx, c.DB)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	// A nil *broker.Broker in the interface would look like a judge.
	var (
		lim scorers.JudgeLimiter
		svc *Service // set below, before any worker starts
	)
	jo := c.Jobs
	jo.CompleteTraces = func(ctx context.Context, now time.Time) error { _, err := svc.CompleteTraces(ctx, now); return err }
	if c.Judge != nil {
		lim, jo.JudgeModel = c.Judge, c.Judge.Config().Model
		jo.PrepareJudge = func(ctx context.Context, t store.Tenant) error { return svc.prepareJudge(ctx, t) }
	}
	pc, err := c.Publish.withDefaults()
	if err != nil {
		st.Close()
		return nil, err
	}
	c.Publish = pc
	// Tenants' modules run in an engine of the service's own, whose ceilings are the
	// publish ceilings, not those the operator's plugins were loaded under; each module
	// compiles into its own folder of its tenant's (moduleFiles), none into the engine's.
	files := &moduleFiles{root: pc.CacheDir, log: c.Jobs.Logger}
	if files.log == nil {
		files.log = slog.Default()
	}
	if err := files.sweep(ctx, st); err != nil {
		st.Close()
		return nil, fmt.Errorf("service: published scorers' folder %s: %w; set Config.Publish.CacheDir", pc.CacheDir, err)
	}
	we, err := wasm.NewEngine(ctx, wasm.Options{CacheDir: "-", Ceilings: pc.Ceilings, Logger: c.Jobs.Logger})
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("service: published scorers: %w", err)
	}
	sc := scorers.New(c.Host, lim, c.ScorerCacheSize, scorers.WithPublished(scorers.Published{Source: st, Engine: we, ModuleDir: files.tenants()}))
	eng, err := jobs.New(ctx, st, sc, jo)
	if err != nil {
		_ = sc.Close(ctx)
		_ = we.Close(ctx)
		st.Close()
		return nil, err
	}
	s := &Service{st: st, eng: eng, sc: sc, wasm: we, opts: c, checks: newCheckSlots(pc), files: files,
		stopTallies: make(chan struct{}), tallyDone: make(chan struct{})}
	svc = s
	go s.flushTalliesEvery(s.stopTallies, s.tallyDone)
	if err := eng.Start(ctx); err != nil {
		_ = s.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("start workers: %w", err)
	}
	return s, nil
}

// Close stops the workers, waiting for the jobs they run until ctx ends (a job cut off
// then is rescued and runs again), then closes the scorers the service opened and the
// store. Calls after the first return the first's error.
func (s *Service) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		var errs []error
		if err := s.eng.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop workers: %w", err))
		}
		close(s.stopTallies)
		<-s.tallyDone
		errs = append(errs, s.sc.Close(ctx), s.wasm.Close(ctx))
		s.st.Close()
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// Store is the service's store.
func (s *Service) Store() *store.Store { return s.st }

// Scorers is the service's scorer cache.
func (s *Service) Scorers() *scorers.Cache { return s.sc }

// Engine is the service's job engine.
func (s *Service) Queue() *jobs.Queue { return s.eng }

func (s *Service) maxRuns(t store.Tenant) int {
	if t.Policy.MaxRunsPerEvaluation > 0 {
		return t.Policy.MaxRunsPerEvaluation
	}
	return s.opts.MaxRunsPerEvaluation
}

func (s *Service) maxRunBytes(t store.Tenant) int {
	if t.Policy.MaxRunBytes > 0 {
		return t.Policy.MaxRunBytes
	}
	return s.opts.MaxRunBytes
}

func (pc PublishConfig) withDefaults() (PublishConfig, error) {
	if pc.CacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return pc, fmt.Errorf("service: no user cache dir (%w); set Config.Publish.CacheDir", err)
		}
		pc.CacheDir = filepath.Join(dir, "scorekit", "published")
	}
	if pc.MaxModuleBytes <= 0 {
		pc.MaxModuleBytes = DefaultMaxModuleBytes
	}
	if pc.CompileTimeout <= 0 {
		pc.CompileTimeout = DefaultCompileTimeout
	}
	if pc.CompileMemoryBytes <= 0 {
		pc.CompileMemoryBytes = DefaultCompileMemoryBytes
	}
	if pc.MaxChecks <= 0 {
		pc.MaxChecks = DefaultMaxChecks
	}
	if pc.MaxChecksPerTenant <= 0 {
		pc.MaxChecksPerTenant = DefaultMaxChecksPerTenant
	}
	pc.MaxChecksPerTenant = min(pc.MaxChecksPerTenant, pc.MaxChecks)
	if pc.CheckWait == 0 {
		pc.CheckWait = DefaultCheckWait
	}
	d := wasm.DefaultCeilings()
	for _, f := range []struct{ v, def *int }{
		{&pc.Ceilings.MemoryMiB, &d.MemoryMiB}, {&pc.Ceilings.TimeoutMS, &d.TimeoutMS}, {&pc.Ceilings.MaxResultBytes, &d.MaxResultBytes},
		{&pc.Ceilings.MaxOutputBytes, &d.MaxOutputBytes}, {&pc.Ceilings.PoolSize, &d.PoolSize}, {&pc.Ceilings.MaxCalls, &d.MaxCalls},
		{&pc.Ceilings.StackKiB, &d.StackKiB},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return pc, nil
}

// maxRedactors bounds the compiled rules kept: past it they are compiled again.
const maxRedactors = 1024

// redactor returns the tenant's redaction rules compiled (nil when it has none); rules
// are compiled once, whichever tenants share them.
func (s *Service) redactor(t store.Tenant) (*redact.Redactor, error) {
	c := t.Policy.Redact
	if c.IsZero() {
		return nil, nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	s.redactorsMu.Lock()
	defer s.redactorsMu.Unlock()
	if r, ok := s.redactors[string(b)]; ok {
		return r, nil
	}
	r, err := redact.Compile(c)
	if err != nil {
		// Policies are checked when saved; one stored otherwise must not let runs in
		// unredacted.
		return nil, invalid("tenant %q: its policy's redaction rules do not compile (%v): fix them with scorekit tenants set-policy", t.Name, err)
	}
	if s.redactors == nil || len(s.redactors) >= maxRedactors {
		s.redactors = map[string]*redact.Redactor{}
	}
	s.redactors[string(b)] = r
	return r, nil
}

// groupBy groups items by key, each group in the items' order, and returns the keys in
// the order they first come.
func groupBy[K comparable, V any](items []V, key func(V) K) (map[K][]V, []K) {
	groups := map[K][]V{}
	var order []K
	for _, it := range items {
		k := key(it)
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], it)
	}
	return groups, order
}
