package wasm

import (
	"context"
	"fmt"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/plugins/heuristic"
)

// BenchmarkStackBound measures what the stack bound (stack.go) costs the built-ins on the
// corpus, within one process so that the machine's load weighs on both sides alike: the
// builtin module is loaded twice, with the bound and without it (stackInstrumentation.off:
// the deadline checks only), and each non-LLM scorer scores 5,000 runs of the corpus in
// slices of 250, the two sides in turn, the side that goes first alternating. cpu-us/run
// is the CPU time a run takes with the bound; x-bound its ratio to the time without.
func BenchmarkStackBound(b *testing.B) {
	ctx := context.Background()
	runs := corpusRuns(b, 5000)
	const slice = 250
	guest := goGuest(b, "builtin", builtinPkg)
	load := func(o Options) map[string]host.Plugin {
		ps, err := newEngineWith(b, o).Load(ctx, manifestFor(b, guest, host.Limits{}))
		if err != nil {
			b.Fatal(err)
		}
		out := map[string]host.Plugin{}
		for _, p := range ps {
			out[p.Info().Name] = p
		}
		return out
	}
	sides := []map[string]host.Plugin{load(Options{}), load(Options{stack: stackInstrumentation{off: true}})}
	for _, f := range heuristic.Factories() {
		name := f().Info().Name
		var backends [2]host.Backend
		for i, ps := range sides {
			be, err := ps[name].Open(ctx, host.Tenant{Name: "bench"}, ps[name].Info().Defaults)
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close(ctx)
			backends[i] = be
		}
		b.Run(name, func(b *testing.B) {
			var cpu [2]float64
			for b.Loop() {
				for start := 0; start < len(runs); start += slice {
					for k := range 2 {
						side := (start/slice + k) % 2
						c0 := testkit.CPUTime()
						for i := start; i < min(start+slice, len(runs)); i++ {
							r := runs[i]
							if _, err := backends[side].Score(ctx, &r, nil); err != nil {
								b.Fatal(fmt.Errorf("run %s: %w", r.ID, err))
							}
						}
						cpu[side] += float64((testkit.CPUTime() - c0).Nanoseconds())
					}
				}
			}
			b.ReportMetric(cpu[0]/1e3/float64(b.N*len(runs)), "cpu-us/run")
			b.ReportMetric(cpu[0]/cpu[1], "x-bound")
		})
	}
}
