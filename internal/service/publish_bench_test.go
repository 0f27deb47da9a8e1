package service_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/buildtest"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/scorers"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// builtinModule is the WASM build of the built-in scorers (make wasm-plugins).
func builtinModule(b *testing.B) []byte {
	bin, err := os.ReadFile(filepath.Join(buildtest.ModuleRoot(b), "build", "wasm", "builtin.wasm"))
	if err != nil {
		b.Fatalf("%v: build it with make wasm-plugins (make test-artifacts builds it)", err)
	}
	return bin
}

// BenchmarkPublished measures a tenant's published WASM scorer: prescreen from the WASM
// build of the built-ins, published by a tenant, against the built-in prescreen itself.
//
//   - first-result: publish, then an evaluation of one run: cold, a new tenant on a fresh
//     store and cache folder (the check compiles the module, the worker loads what it
//     compiled); warm, the same tenant publishing the module again under another name in a
//     service restarted on the same store and cache folder (the module was compiled for
//     the tenant on this machine before). ms per publish-to-first-result; the warm/cold
//     ratio is the cache's saving.
//   - queue: 400 runs through the queue, runs/s, the published WASM prescreen beside the
//     built-in (native) in the same run.
func BenchmarkPublished(b *testing.B) {
	module := builtinModule(b)
	set := servicetest.Seed(b)
	ctx := context.Background()
	publishAndScore := func(b *testing.B, db, cache string, i int) {
		env := servicetest.New(b, db, servicetest.Options{
			Jobs: jobs.Options{Workers: 2, PollInterval: pollInterval}, Publish: service.PublishConfig{CacheDir: cache}})
		t, err := env.Service.Tenant(ctx, "bench")
		if errors.Is(err, service.ErrNotFound) {
			t, err = env.Service.CreateTenant(ctx, "bench", store.Policy{})
		}
		if err != nil {
			b.Fatal(err)
		}
		if _, err := env.Service.ImportRuns(ctx, t, benchRuns(b, set, "a", fmt.Sprint("f", i), 1), service.ImportOptions{}); err != nil {
			b.Fatal(err)
		}
		name := fmt.Sprintf("mine%d", i+1)
		if _, err := env.Service.Publish(ctx, t, service.PublishRequest{Name: name, Module: module, Manifest: &scorers.Manifest{Scorer: "prescreen"}}); err != nil {
			b.Fatal(err)
		}
		evaluateAll(b, env.Service, t, "a", 1, []string{name})
		if err := env.Service.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
	var cold, warm float64
	b.Run("first-result/cold", func(b *testing.B) {
		for i := range b.N {
			publishAndScore(b, filepath.Join(b.TempDir(), "scorekit.db"), b.TempDir(), i)
		}
		cold = float64(b.Elapsed().Milliseconds()) / float64(b.N)
		b.ReportMetric(cold, "ms/first-result")
	})
	b.Run("first-result/warm", func(b *testing.B) {
		db, cache := filepath.Join(b.TempDir(), "scorekit.db"), b.TempDir()
		publishAndScore(b, db, cache, -1) // leaves the compiled module in the cache
		b.ResetTimer()
		for i := range b.N {
			publishAndScore(b, db, cache, i)
		}
		warm = float64(b.Elapsed().Milliseconds()) / float64(b.N)
		b.ReportMetric(warm, "ms/first-result")
		if cold > 0 {
			b.ReportMetric(warm/cold, "warm/cold")
		}
	})

	const n = 400
	var native float64
	for _, tc := range []struct{ name, scorer string }{{"queue/builtin", "prescreen"}, {"queue/published-wasm", "mine"}} {
		b.Run(tc.name, func(b *testing.B) {
			env := servicetest.New(b, filepath.Join(b.TempDir(), "scorekit.db"), servicetest.Options{Jobs: jobs.Options{Workers: 4, PollInterval: pollInterval}})
			t, err := env.Service.CreateTenant(ctx, "bench", store.Policy{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := env.Service.ImportRuns(ctx, t, benchRuns(b, set, "a", "q", n), service.ImportOptions{}); err != nil {
				b.Fatal(err)
			}
			if _, err := env.Service.Publish(ctx, t, service.PublishRequest{Name: "mine", Module: module, Manifest: &scorers.Manifest{Scorer: "prescreen"}}); err != nil {
				b.Fatal(err)
			}
			evaluateAll(b, env.Service, t, "a", 1, []string{tc.scorer}) // opens (and compiles) it once
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				evaluateAll(b, env.Service, t, "a", n, []string{tc.scorer})
			}
			rate := float64(n*b.N) / time.Since(start).Seconds()
			b.ReportMetric(rate, "runs/s")
			if tc.scorer == "prescreen" {
				native = rate
			} else if native > 0 {
				b.ReportMetric(rate/native, "x-builtin")
			}
		})
	}
}
