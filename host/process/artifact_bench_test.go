package process

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// BenchmarkAllScorers scores the corpus with every scorer of the heuristic plugin (the 11
// non-LLM scorers) opened for one tenant, on GOMAXPROCS workers that each take a run
// through every scorer in turn, as `scorekit score` does. It reports calls per second and,
// after the last call, the processes the host started (plugins and any sandbox helpers)
// and their resident memory, read from /proc. Plugins run confined (bubblewrap) and with
// limits only, to tell the sandbox's cost from the pool's.
func BenchmarkAllScorers(b *testing.B) {
	for _, mode := range []Confinement{ConfineRequired, ConfineLimitsOnly} {
		name := map[Confinement]string{ConfineRequired: "confined", ConfineLimitsOnly: "limits-only"}[mode]
		b.Run(name, func(b *testing.B) {
			opts := quietOptions()
			opts.Confine = mode
			allScorers(b, opts)
		})
	}
}

func allScorers(b *testing.B, opts Options) {
	ctx := context.Background()
	m := heuristicManifest(b)
	runs := corpusRuns(b)
	loaded, err := Load(ctx, m, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		for _, p := range loaded {
			p.Close(ctx)
		}
	}()
	backends := make([]host.Backend, len(loaded))
	for i, p := range loaded {
		be, err := p.Open(ctx, host.Tenant{Name: "bench"}, p.Info().Defaults)
		if err != nil {
			b.Fatal(err)
		}
		defer be.Close(ctx)
		backends[i] = be
	}
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			run := runs[int(next.Add(1))%len(runs)]
			for _, be := range backends {
				r := run
				if _, err := be.Score(ctx, &r, nil); err != nil {
					b.Error(err)
					return
				}
			}
		}
	})
	b.StopTimer()
	calls := float64(b.N * len(backends))
	b.ReportMetric(calls/b.Elapsed().Seconds(), "calls/s")
	b.ReportMetric(0, "ns/op")

	exe, _ := filepath.EvalSymlinks(m.ArtifactPath())
	procs, plugins, rss := 0, 0, 0
	for _, pid := range descendants(os.Getpid()) {
		procs++
		if exeOf(pid) == exe {
			plugins++
		}
		rss += rssKiB(pid)
	}
	b.ReportMetric(float64(len(backends)), "scorers")
	b.ReportMetric(float64(plugins), "plugin-procs")
	b.ReportMetric(float64(procs), "procs")
	b.ReportMetric(float64(rss)/1024, "RSS-MiB")
}

func corpusRuns(b *testing.B) []sdk.Run {
	cases := loadCorpus(b)
	runs := make([]sdk.Run, len(cases))
	for i, c := range cases {
		runs[i] = c.Run
	}
	return runs
}
