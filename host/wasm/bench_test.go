package wasm

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// benchRuns are the two runs BENCHMARKS.md reports: a short QA run and a 2 KB email.
func benchRuns() map[string]sdk.Run {
	email := "From: billing@example.com\nSubject: Invoice 4471 overdue\n\n" +
		strings.Repeat("Hello team, our records show invoice 4471 for the March subscription is now 30 days overdue. "+
			"Please arrange payment or reply with the remittance details if it was already paid. ", 12)
	return map[string]sdk.Run{
		"short": {Input: "What is the capital of France?", Output: "Paris"},
		"email": {Input: email[:2048], Output: "*Triage:* notify\n*From:* billing@example.com\n*Summary:* invoice 4471 is 30 days overdue; pay or send remittance details.",
			Metadata: map[string]any{"purpose": "triage incoming email into a Slack summary"}},
	}
}

func prescreenFactory(b *testing.B) func() sdk.Scorer {
	for _, f := range heuristic.Factories() {
		if f().Info().Name == "prescreen" {
			return f
		}
	}
	b.Fatal("plugins/heuristic has no prescreen")
	return nil
}

func openPrescreen(b *testing.B, e *Engine) host.Backend {
	ps, err := e.Load(context.Background(), manifestFor(b, goGuest(b, "builtin", builtinPkg), host.Limits{}))
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range ps {
		if p.Info().Name == "prescreen" {
			be, err := p.Open(context.Background(), host.Tenant{Name: "bench"}, p.Info().Defaults)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { be.Close(context.Background()) })
			return be
		}
	}
	b.Fatal("no prescreen in the builtin artifact")
	return nil
}

// BenchmarkPrescreen compares a prescreen call native and as WASM with every limit on
// (deadline per call, memory limit, result and output caps, close on context done).
func BenchmarkPrescreen(b *testing.B) {
	ctx := context.Background()
	e := newEngine(b, nil)
	wasm := openPrescreen(b, e)
	native, err := host.Native(prescreenFactory(b)).Open(ctx, host.Tenant{Name: "bench"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"short", "email"} {
		run := benchRuns()[name]
		var nativeCPU float64
		b.Run(name+"/native", func(b *testing.B) {
			nativeCPU = cpuPerCall(b, func() error {
				r := run
				_, err := native.Score(ctx, &r, nil)
				return err
			})
		})
		b.Run(name+"/wasm", func(b *testing.B) {
			cpu := cpuPerCall(b, func() error {
				r := run
				_, err := wasm.Score(ctx, &r, nil)
				return err
			})
			if nativeCPU > 0 {
				b.ReportMetric(cpu/nativeCPU, "x-native-cpu")
			}
		})
	}
}

// cpuPerCall runs call b.N times and reports the process CPU time per call next to the
// wall time: on a shared machine CPU time is the steadier figure.
func cpuPerCall(b *testing.B, call func() error) float64 {
	c0 := testkit.CPUTime()
	for b.Loop() {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	cpu := float64((testkit.CPUTime() - c0).Nanoseconds()) / float64(b.N) / 1000
	b.ReportMetric(cpu, "cpu-us/call")
	return cpu
}

// BenchmarkInstantiate measures a fresh instance of the builtin artifact: instantiate,
// _initialize, configure; and the memory it holds.
func BenchmarkInstantiate(b *testing.B) {
	ctx := context.Background()
	e := newEngine(b, nil)
	be := openPrescreen(b, e).(*backend)
	var mem int
	for b.Loop() {
		inst, err := be.newInstance(ctx)
		if err != nil {
			b.Fatal(err)
		}
		mem = inst.memoryBytes()
		inst.close(ctx)
	}
	b.ReportMetric(float64(mem)/(1<<20), "MiB/instance")
}

// BenchmarkPool2 measures the throughput of a pool of two instances fed by two workers.
func BenchmarkPool2(b *testing.B) {
	ctx := context.Background()
	e := newEngine(b, nil)
	ps, err := e.Load(ctx, manifestFor(b, goGuest(b, "builtin", builtinPkg), host.Limits{PoolSize: 2}))
	if err != nil {
		b.Fatal(err)
	}
	var be host.Backend
	for _, p := range ps {
		if p.Info().Name == "prescreen" {
			be, _ = p.Open(ctx, host.Tenant{Name: "bench"}, nil)
		}
	}
	run := benchRuns()["short"]
	start := time.Now()
	b.ResetTimer()
	var wg sync.WaitGroup
	jobs := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			for range jobs {
				r := run
				if _, err := be.Score(ctx, &r, nil); err != nil {
					b.Error(err)
				}
			}
		})
	}
	for range b.N {
		jobs <- struct{}{}
	}
	close(jobs)
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
}

// BenchmarkWarmLoad measures loading the artifact of every built-in scorer with a warm
// compilation cache.
func BenchmarkWarmLoad(b *testing.B) {
	ctx := context.Background()
	m := manifestFor(b, goGuest(b, "builtin", builtinPkg), host.Limits{})
	warm := newEngine(b, nil)
	if _, err := warm.Load(ctx, m); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		e := newEngine(b, nil)
		if _, err := e.Load(ctx, m); err != nil {
			b.Fatal(err)
		}
		e.Close(ctx)
	}
}

// BenchmarkSmallCall measures the cost of the call itself with every limit on: a trivial
// scorer on the short run, in a Go guest (binary codec) and in the C guest (JSON).
func BenchmarkSmallCall(b *testing.B) {
	ctx := context.Background()
	e := newEngine(b, nil)
	guests := []struct {
		name string
		be   *backend
	}{
		{"go", open(b, e, goGuest(b, "goguest", goGuestPkg), host.Limits{}, "tester", "bench")},
		{"c", open(b, e, cGuest(b), host.Limits{}, "c_contains", "bench")},
	}
	run := benchRuns()["short"]
	run.Expected = "Paris"
	for _, g := range guests {
		b.Run(g.name, func(b *testing.B) {
			cpuPerCall(b, func() error {
				r := run
				_, err := g.be.Score(ctx, &r, nil)
				return err
			})
		})
	}
}

// BenchmarkTermination measures what stopping a guest at its deadline costs a prescreen
// call, in the same run: the checks the host adds (the default), wazero's
// WithCloseOnContextDone, and nothing (unsafe: a spinning guest would never stop; here
// only to measure the others). x-unchecked is the CPU ratio to the unchecked call.
func BenchmarkTermination(b *testing.B) {
	ctx := context.Background()
	modes := []struct {
		name string
		t    termination
	}{{"none", terminateNone}, {"checks", terminateChecks}, {"wazero", terminateWazero}}
	backends := map[string]host.Backend{}
	for _, m := range modes {
		backends[m.name] = openPrescreen(b, newEngineWith(b, Options{termination: m.t}))
	}
	for _, name := range []string{"short", "email"} {
		run := benchRuns()[name]
		var unchecked float64
		for _, m := range modes {
			b.Run(name+"/"+m.name, func(b *testing.B) {
				be := backends[m.name]
				cpu := cpuPerCall(b, func() error {
					r := run
					_, err := be.Score(ctx, &r, nil)
					return err
				})
				if m.t == terminateNone {
					unchecked = cpu
				} else if unchecked > 0 {
					b.ReportMetric(cpu/unchecked, "x-unchecked")
				}
			})
		}
	}
}
