package wasm

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// BenchmarkPublish measures publishing the builtin artifact (14 scorers, the heaviest
// real guest) up to its first result: Vet (a child process: compile, probe, info), then
// an engine loading it and scoring one run. cold: an empty compilation cache, so the
// child compiles and the engine loads the child's code from the cache; warm: the code is
// in the cache already (a module published before, or a worker loading after the
// publish); unshared: the child and the engine do not share a cache, so both compile.
// x-warm is the ratio to warm's time in the same run.
func BenchmarkPublish(b *testing.B) {
	ctx := context.Background()
	path := goGuest(b, "builtin", builtinPkg)
	bin, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	m := manifestFor(b, path, host.Limits{})
	publish := func(b *testing.B, vetDir, engineDir string) {
		if _, err := Vet(ctx, bin, VetOptions{CacheDir: vetDir}); err != nil {
			b.Fatal(err)
		}
		e, err := NewEngine(ctx, Options{CacheDir: engineDir})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close(ctx)
		ps, err := e.Load(ctx, m)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range ps {
			if p.Info().Name != "prescreen" {
				continue
			}
			be, err := p.Open(ctx, host.Tenant{Name: "bench"}, p.Info().Defaults)
			if err != nil {
				b.Fatal(err)
			}
			run := benchRuns()["short"]
			if _, err := be.Score(ctx, &run, nil); err != nil {
				b.Fatal(err)
			}
			be.Close(ctx)
		}
	}
	warmDir := b.TempDir()
	publish(b, warmDir, warmDir)
	var warm float64
	for _, mode := range []string{"warm", "cold", "unshared"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				switch mode {
				case "warm":
					publish(b, warmDir, warmDir)
				case "cold":
					dir, err := os.MkdirTemp("", "scorekit-bench-cache-")
					if err != nil {
						b.Fatal(err)
					}
					publish(b, dir, dir)
					os.RemoveAll(dir)
				case "unshared":
					dir, err := os.MkdirTemp("", "scorekit-bench-cache-")
					if err != nil {
						b.Fatal(err)
					}
					publish(b, "-", dir)
					os.RemoveAll(dir)
				}
			}
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(per/1e6, "ms/publish")
			if mode == "warm" {
				warm = per
			} else if warm > 0 {
				b.ReportMetric(per/warm, "x-warm")
			}
		})
	}
}

// BenchmarkTenantsMemory measures the memory 100 tenants' instances hold, each tenant
// with its own module (1 MiB of linear memory per instance, and its call stack's bound)
// scoring twice in turn, with no budget and with a budget of ten instances: the memory
// held at the end and at its peak (the engine's count, checked against a walk of the
// pools). x-unbounded is the peak's ratio to the run without a budget.
func BenchmarkTenantsMemory(b *testing.B) {
	ctx := context.Background()
	const tenants = 100
	paths := tenantModules(b, tenants)
	perInstance := 1<<20 + stackHostBytes(DefaultStackKiB)
	var unbounded float64
	for _, c := range []struct {
		name   string
		budget int64
	}{{"no-budget", -1}, {"budget-10-instances", 10 * perInstance}} {
		b.Run(c.name, func(b *testing.B) {
			var st MemoryStats
			for b.Loop() {
				e, err := NewEngine(ctx, Options{MemoryBudgetBytes: c.budget})
				if err != nil {
					b.Fatal(err)
				}
				for i, p := range paths {
					be := open(b, e, p, host.Limits{MemoryMiB: 4}, "ok", fmt.Sprintf("tenant-%d", i))
					for range 2 {
						if _, err := be.Score(ctx, &sdk.Run{Output: "x"}, nil); err != nil {
							b.Fatal(err)
						}
					}
				}
				st = e.MemoryStats()
				if held, _ := idleMemory(e); held != st.HeldBytes {
					b.Fatalf("the engine counts %d bytes, its pools hold %d", st.HeldBytes, held)
				}
				e.Close(ctx)
			}
			b.ReportMetric(float64(st.HeldBytes)/(1<<20), "held-MiB")
			b.ReportMetric(float64(st.PeakHeldBytes)/(1<<20), "peak-held-MiB")
			b.ReportMetric(float64(st.Evicted), "evicted")
			if c.budget < 0 {
				unbounded = float64(st.PeakHeldBytes)
			} else if unbounded > 0 {
				b.ReportMetric(float64(st.PeakHeldBytes)/unbounded, "x-unbounded")
			}
		})
	}
}
