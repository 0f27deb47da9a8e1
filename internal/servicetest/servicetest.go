// Package servicetest assembles a real evaluation service for tests: a store on a SQLite
// file or a PostgreSQL database (internal/pgtest), River workers, the scorer cache and the
// built-in scorers, some of them under another version, as after a scorer fix.
package servicetest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/pgtest"
	"github.com/scorekit/scorekit/internal/seed"
	"github.com/scorekit/scorekit/plugins/builtin"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/service"
	"github.com/scorekit/scorekit/service/jobs"
	"github.com/scorekit/scorekit/service/scorers"
	"github.com/scorekit/scorekit/service/store"
)

// versioned is a scorer that reports another version: the same code after a "fix".
type versioned struct {
	sdk.Scorer
	version string
}

func (v versioned) Info() sdk.Info {
	i := v.Scorer.Info()
	i.Version = v.version
	return i
}

// Configure passes the config on when the scorer takes one.
func (v versioned) Configure(c json.RawMessage) error {
	if cf, ok := v.Scorer.(sdk.Configurer); ok {
		return cf.Configure(c)
	}
	return nil
}

// Registry returns the built-in scorers, running natively; versions maps a scorer name to
// the version it reports instead of its own.
func Registry(tb testing.TB, versions map[string]string) *host.Registry {
	tb.Helper()
	reg := host.NewRegistry()
	for _, f := range builtin.Factories() {
		name := f().Info().Name
		factory := host.Factory(f)
		if v, ok := versions[name]; ok {
			factory = func() sdk.Scorer { return versioned{Scorer: f(), version: v} }
		}
		if err := reg.Register(host.Native(factory), false); err != nil {
			tb.Fatal(err)
		}
	}
	return reg
}

// Env is a running service.
type Env struct {
	Store   *store.Store
	Engine  *jobs.Engine
	Cache   *scorers.Cache
	Service *service.Service
}

// Options say how to assemble an Env.
type Options struct {
	// Host runs the scorers. Optional. Default is the built-ins of Registry(tb, nil).
	Host *host.Host
	// Judge receives tenants' judge limits. Optional.
	Judge scorers.JudgeLimiter
	// Jobs configure the engine. Zero fields take test defaults: 4 workers, fast polling
	// and retries, rescue after 5 s.
	Jobs jobs.Options
	// Service configures the facade.
	Service service.Options
	// NoWorkers makes an engine that only enqueues.
	NoWorkers bool
}

// New opens a store at dsn and starts a service on it; everything is stopped when tb ends.
func New(tb testing.TB, dsn string, o Options) *Env {
	tb.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(st.Close)
	h := o.Host
	if h == nil {
		h = host.New(Registry(tb, nil))
	}
	cache := scorers.New(h, o.Judge, 0)
	tb.Cleanup(func() { _ = cache.Close(context.Background()) })
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
	eng, err := jobs.New(ctx, st, cache, jo)
	if err != nil {
		tb.Fatal(err)
	}
	if err := eng.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := eng.Stop(sctx); err != nil {
			tb.Errorf("stop workers: %v", err)
		}
	})
	return &Env{Store: st, Engine: eng, Cache: cache, Service: service.New(st, eng, cache, o.Service)}
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
