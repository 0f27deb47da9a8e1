package wasm

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/plugins/heuristic"
)

// abSide is one side of abCorpus: the engine's options and the builtin module (this
// tree's when empty).
type abSide struct {
	opts  Options
	guest string
}

// abCorpus scores 5,000 corpus runs with every non-LLM scorer on two loads of the builtin
// module, base and variant, in one process so that the machine's load weighs on both
// alike: slices of 250 runs, each a host batch (ScoreBatch), the two sides in turn, the
// side that goes first alternating. cpu-us/run is the variant's CPU per run, x-base its
// ratio to the base's (below 1: the variant is cheaper).
func abCorpus(b *testing.B, base, variant abSide) {
	ctx := context.Background()
	runs := corpusRuns(b, 5000)
	const slice = 250
	load := func(side abSide) map[string]host.Plugin {
		guest := side.guest
		if guest == "" {
			guest = goGuest(b, "builtin", builtinPkg)
		}
		ps, err := newEngineWith(b, side.opts).Load(ctx, manifestFor(b, guest, host.Limits{}))
		if err != nil {
			b.Fatal(err)
		}
		out := map[string]host.Plugin{}
		for _, p := range ps {
			out[p.Info().Name] = p
		}
		return out
	}
	sides := []map[string]host.Plugin{load(base), load(variant)}
	items := make([]host.BatchItem, len(runs))
	var total [2]float64
	for _, f := range heuristic.Factories() {
		name := f().Info().Name
		var backends [2]*backend
		for i, ps := range sides {
			be, err := ps[name].Open(ctx, host.Tenant{Name: "bench"}, ps[name].Info().Defaults)
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close(ctx)
			backends[i] = be.(*backend)
		}
		b.Run(name, func(b *testing.B) {
			var cpu [2]float64
			for b.Loop() {
				for start := 0; start < len(runs); start += slice {
					for k := range 2 {
						side := (start/slice + k) % 2
						batch := items[start:min(start+slice, len(runs))]
						for i := range batch {
							batch[i] = host.BatchItem{Run: &runs[start+i]}
						}
						c0 := testkit.CPUTime()
						backends[side].ScoreBatch(ctx, batch, 0)
						cpu[side] += float64((testkit.CPUTime() - c0).Nanoseconds())
						for _, it := range batch {
							if it.Err != nil {
								b.Fatal(fmt.Errorf("run %s: %w", it.Run.ID, it.Err))
							}
						}
					}
				}
			}
			b.ReportMetric(cpu[1]/1e3/float64(b.N*len(runs)), "cpu-us/run")
			b.ReportMetric(cpu[1]/cpu[0], "x-base")
			total[0] += cpu[0] / float64(b.N)
			total[1] += cpu[1] / float64(b.N)
		})
	}
	b.Run("all", func(b *testing.B) {
		for b.Loop() {
		}
		b.ReportMetric(total[1]/total[0], "x-base")
	})
}

// BenchmarkGuestGC measures a Go guest's collector settings against Go's default GOGC of
// 100 (set in the guest's environment): sdk/serve's own (GOGC 400, the guest's when its
// environment sets none) and 1000.
func BenchmarkGuestGC(b *testing.B) {
	base := abSide{opts: Options{guestEnv: [][2]string{{"GOGC", "100"}}}}
	b.Run("serve", func(b *testing.B) { abCorpus(b, base, abSide{}) })
	b.Run("GOGC=1000", func(b *testing.B) { abCorpus(b, base, abSide{opts: Options{guestEnv: [][2]string{{"GOGC", "1000"}}}}) })
}

// BenchmarkGuestBeforeAfter measures this tree's builtin module, batches and all, against
// a builtin module built from another tree (SCOREKIT_BASE_GUEST, its path: e.g. `git
// archive REV | tar -x -C DIR`, then in DIR `GOOS=wasip1 GOARCH=wasm go build
// -buildmode=c-shared -o base.wasm ./plugins/builtin/plugin`), in one process. Without
// it, the base is this tree's module called as ABI v1 at GOGC 100: what batches and the
// guest's collector setting buy.
func BenchmarkGuestBeforeAfter(b *testing.B) {
	base := abSide{opts: Options{abiV1: true, guestEnv: [][2]string{{"GOGC", "100"}}}}
	if p := os.Getenv("SCOREKIT_BASE_GUEST"); p != "" {
		base = abSide{guest: p}
	}
	abCorpus(b, base, abSide{})
}
