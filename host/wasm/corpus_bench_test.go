package wasm

import (
	"context"
	"fmt"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// corpusRuns returns the public corpus's runs (testdata/), n of them, cycling.
func corpusRuns(b testing.TB, n int) []sdk.Run {
	dir, err := corpus.Dir()
	if err != nil {
		b.Fatal(err)
	}
	cases, err := corpus.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]sdk.Run, n)
	for i := range out {
		out[i] = cases[i%len(cases)].Run
	}
	return out
}

// BenchmarkCorpus runs every non-LLM scorer (plugins/heuristic) natively and as WASM on
// 5,000 runs of the public corpus, one instance per scorer, and reports the CPU ratio
// and the instance's linear memory after configure and after the runs (in use). The WASM
// pass scores batches of corpusBatch runs (host.BatchBackend, ABI v2), as the host does
// where it has several runs for a scorer; wasm-1 scores one run per call, as for a
// single request.
// corpusBatch is the batch BenchmarkCorpus scores in, the most lines the command line's
// pipeline puts in one batch.
const corpusBatch = 256

func BenchmarkCorpus(b *testing.B) {
	ctx := context.Background()
	runs := corpusRuns(b, 5000)
	e := newEngine(b, nil)
	ps, err := e.Load(ctx, manifestFor(b, goGuest(b, "builtin", builtinPkg), host.Limits{}))
	if err != nil {
		b.Fatal(err)
	}
	wasm := map[string]host.Plugin{}
	for _, p := range ps {
		wasm[p.Info().Name] = p
	}
	for _, f := range heuristic.Factories() {
		native := host.Native(f)
		name := native.Info().Name
		nb, err := native.Open(ctx, host.Tenant{Name: "bench"}, native.Info().Defaults)
		if err != nil {
			b.Fatal(err)
		}
		wb, err := wasm[name].Open(ctx, host.Tenant{Name: "bench"}, native.Info().Defaults)
		if err != nil {
			b.Fatal(err)
		}
		// One run per call goes to a pool of its own (another tenant), so neither pass
		// pays for the other's instance being replaced after limits.max_calls.
		wb1, err := wasm[name].Open(ctx, host.Tenant{Name: "bench-1"}, native.Info().Defaults)
		if err != nil {
			b.Fatal(err)
		}
		be := wb.(*backend)
		start := float64(be.Stats().MemoryBytes) / (1 << 20)
		pass := func(bk host.Backend) func() error {
			return func() error {
				for i := range runs {
					r := runs[i]
					if _, err := bk.Score(ctx, &r, nil); err != nil {
						return fmt.Errorf("run %s: %w", r.ID, err)
					}
				}
				return nil
			}
		}
		items := make([]host.BatchItem, len(runs))
		for i := range runs {
			items[i].Run = &runs[i]
		}
		batches := func() error {
			for i := 0; i < len(items); i += corpusBatch {
				batch := items[i:min(i+corpusBatch, len(items))]
				be.ScoreBatch(ctx, batch, 0)
				for _, it := range batch {
					if it.Err != nil {
						return fmt.Errorf("run %s: %w", it.Run.ID, it.Err)
					}
				}
			}
			return nil
		}
		var nativeCPU float64
		b.Run(name+"/native", func(b *testing.B) { nativeCPU = cpuPerCall(b, pass(nb)) })
		b.Run(name+"/wasm-1", func(b *testing.B) {
			cpu := cpuPerCall(b, pass(wb1))
			b.ReportMetric(cpu/nativeCPU, "x-native-cpu")
		})
		b.Run(name+"/wasm", func(b *testing.B) {
			cpu := cpuPerCall(b, batches)
			b.ReportMetric(cpu/nativeCPU, "x-native-cpu")
			b.ReportMetric(start, "MiB-configured")
			b.ReportMetric(float64(be.Stats().PeakInstanceBytes)/(1<<20), "MiB-in-use")
		})
		wb.Close(ctx)
		wb1.Close(ctx)
	}
}
