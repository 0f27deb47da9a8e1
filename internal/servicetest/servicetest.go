// Package servicetest assembles a real evaluation service for tests with service.Open, the
// constructor the command line uses: a store on a SQLite file or a PostgreSQL database
// (internal/pgtest), River workers, the scorer cache and the built-in scorers, some of them
// under another version, as after a scorer fix.
package servicetest

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/pgtest"
	"github.com/scorekit/scorekit/internal/seed"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/scorers"
	"github.com/scorekit/scorekit/internal/service/secrets"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/plugins/builtin"
	"github.com/scorekit/scorekit/sdk"
)

// Registry returns the built-in scorers, running natively; versions maps a scorer name to
// the version it reports instead of its own.
func Registry(tb testing.TB, versions map[string]string) *host.Registry {
	tb.Helper()
	reg := host.NewRegistry()
	for _, f := range builtin.Factories() {
		name := f().Info().Name
		factory := host.Factory(f)
		if v, ok := versions[name]; ok {
			factory = func() sdk.Scorer { return &Wrapped{Scorer: f(), Version: v} }
		}
		if err := reg.Register(host.Native(factory), false); err != nil {
			tb.Fatal(err)
		}
	}
	return reg
}

// CountCalls replaces the scorer name in reg with itself, its calls counted in the
// returned counter.
func CountCalls(tb testing.TB, reg *host.Registry, name string) *atomic.Int64 {
	tb.Helper()
	for _, f := range builtin.Factories() {
		if f().Info().Name != name {
			continue
		}
		var n atomic.Int64
		if err := reg.Register(host.Native(func() sdk.Scorer { return &Wrapped{Scorer: f(), Calls: &n} }), true); err != nil {
			tb.Fatal(err)
		}
		return &n
	}
	tb.Fatalf("CountCalls: no built-in scorer %q", name)
	return nil
}

// Wrapped is a scorer as a test sees it: under another version (the same code after a
// "fix"), or with its calls counted. It keeps what the scorer implements beside
// sdk.Scorer, each interface forwarded, so the host treats it as the scorer itself.
type Wrapped struct {
	sdk.Scorer
	// Version, when set, is reported instead of the scorer's.
	Version string
	// Calls, when set, counts Score calls.
	Calls *atomic.Int64
}

var (
	_ sdk.Configurer       = (*Wrapped)(nil)
	_ host.ContextObserver = (*Wrapped)(nil)
	_ io.Closer            = (*Wrapped)(nil)
)

// Info is the scorer's, under Version when set.
func (w *Wrapped) Info() sdk.Info {
	i := w.Scorer.Info()
	if w.Version != "" {
		i.Version = w.Version
	}
	return i
}

// Score counts the call and scores.
func (w *Wrapped) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	if w.Calls != nil {
		w.Calls.Add(1)
	}
	return w.Scorer.Score(ctx, call)
}

// Configure passes the config on when the scorer takes one.
func (w *Wrapped) Configure(c json.RawMessage) error {
	if cf, ok := w.Scorer.(sdk.Configurer); ok {
		return cf.Configure(c)
	}
	return nil
}

// ObservesContext is the scorer's answer (host.ContextObserver): without it a wrapped
// built-in would run on a watchdog goroutine the scorer itself never needs.
func (w *Wrapped) ObservesContext() bool {
	o, ok := w.Scorer.(host.ContextObserver)
	return ok && o.ObservesContext()
}

// Close closes the scorer when it holds something.
func (w *Wrapped) Close() error {
	if c, ok := w.Scorer.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Env is a running service: the Service, and its parts for tests that reach past it.
type Env struct {
	Store   *store.Store
	Queue   *jobs.Queue
	Cache   *scorers.Cache
	Service *service.Service
}

// Options say how to assemble an Env. Each becomes a part of the service.Config that
// service.Open receives, as the command line's flags do.
type Options struct {
	// Host runs the scorers. Optional. Default is the built-ins of Registry(tb, nil), with
	// Judge as their judge.
	Host *host.Host
	// Judge is the judge broker (service.Config.Judge). Optional.
	Judge *broker.Broker
	// Jobs configure the engine. Zero fields take test defaults: 4 workers, fast polling
	// and retries, rescue after 5 s.
	Jobs jobs.Options
	// NoWorkers makes an engine that only enqueues.
	NoWorkers bool
	// Publish configures tenants' published scorers. Zero fields take the service's
	// defaults, except CacheDir: a folder of the test's.
	Publish service.PublishConfig
	// ArrivalMaxRuns and ArrivalMaxAge close arrival evaluations (service.Config's).
	// Optional. Defaults are the service's.
	ArrivalMaxRuns int
	ArrivalMaxAge  time.Duration
	// Secrets seals tenants' judge keys (service.Config.Secrets). Optional.
	Secrets *secrets.Keyring
}

// New opens a service on the store at dsn with service.Open; it is closed when tb ends.
func New(tb testing.TB, dsn string, o Options) *Env {
	tb.Helper()
	ctx := context.Background()
	h := o.Host
	if h == nil {
		var opts []host.Option
		if o.Judge != nil {
			opts = append(opts, host.WithJudge(o.Judge))
		}
		h = host.New(Registry(tb, nil), opts...)
	}
	jo := o.Jobs
	if jo.Workers == 0 && !o.NoWorkers {
		jo.Workers = 4
	}
	if jo.PollInterval == 0 {
		jo.PollInterval = 50 * time.Millisecond
	}
	if jo.RetryPolicy == nil {
		jo.RetryPolicy = jobs.FixedRetry(50 * time.Millisecond)
	}
	if jo.RescueAfter == 0 {
		jo.RescueAfter = 5 * time.Second
	}
	if o.Publish.CacheDir == "" {
		o.Publish.CacheDir = tb.TempDir()
	}
	svc, err := service.Open(ctx, service.Config{DB: dsn, Host: h, Judge: o.Judge, Jobs: jo, Secrets: o.Secrets,
		ArrivalMaxRuns: o.ArrivalMaxRuns, ArrivalMaxAge: o.ArrivalMaxAge, Publish: o.Publish})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := svc.Close(sctx); err != nil {
			tb.Errorf("close the service: %v", err)
		}
	})
	return &Env{Store: svc.Store(), Queue: svc.Queue(), Cache: svc.Scorers(), Service: svc}
}

// Backends runs f on a fresh SQLite file and on a fresh database of the package's shared
// PostgreSQL cluster (pgtest.Shared; the package's TestMain calls pgtest.Main).
func Backends(t *testing.T, f func(t *testing.T, dsn string)) {
	t.Run(store.SQLite, func(t *testing.T) { f(t, filepath.Join(t.TempDir(), "scorekit.db")) })
	t.Run(store.Postgres, func(t *testing.T) { f(t, pgtest.Shared(t).Database(t)) })
}

// Seed returns the seed platform's runs (internal/seed) from the shared data.
func Seed(tb testing.TB) seed.Set {
	tb.Helper()
	dir, err := corpus.Dir()
	if err != nil {
		tb.Fatal(err)
	}
	s, err := seed.Load(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
