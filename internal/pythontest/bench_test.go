package pythontest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/process"
	"github.com/scorekit/scorekit/sdk"
)

// nodeManifest describes examples/node-scorer/scorer.js, failing with the command that sets
// it up when its dependencies are missing.
func nodeManifest(b testing.TB) host.Manifest {
	b.Helper()
	dir := filepath.Join(repoRoot(b), "examples", "node-scorer")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@grpc", "grpc-js")); err != nil {
		b.Fatal("examples/node-scorer has no node_modules: run `make node-scorer` at the repository root")
	}
	sum, err := fileSum(filepath.Join(dir, "scorer.js"))
	if err != nil {
		b.Fatal(err)
	}
	return host.Manifest{Name: "node-scorer", Runtime: host.RuntimeProcess, Artifact: "scorer.js", SHA256: sum,
		Read: []string{"../../proto"}, Dir: dir}
}

// BenchmarkPluginCall is one call of a process plugin in each language the examples are
// written in, on the same corpus runs, through the host's process runtime under its
// sandbox (the default confinement: bubblewrap where it works): word_budget in Go
// (examples/first-scorer) and in Python (examples/python-scorer), node_keyword_recall in
// Node.js (examples/node-scorer). The scorers' own work is a split into words; what the
// figures compare is the cost of a call to a plugin in each language: the transport (the
// Session stream for Go and Python, unary gRPC calls for Node), decoding the run and
// encoding the result in that language, and its runtime.
func BenchmarkPluginCall(b *testing.B) {
	runs := corpusRuns(b)
	ctx := context.Background()
	opts := process.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, tc := range []struct {
		name   string
		m      host.Manifest
		config string
	}{
		{"go", goWordBudgetManifest(b), `{"max_words": 20}`},
		{"python", pythonManifest(b, "python-scorer", "word_budget.py"), `{"max_words": 20}`},
		{"node", nodeManifest(b), `{"min_length": 3}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ps, err := process.Load(ctx, tc.m, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer ps[0].Close(ctx)
			be, err := ps[0].Open(ctx, host.Tenant{Name: "bench"}, json.RawMessage(tc.config))
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close(ctx)
			i := 0
			for b.Loop() {
				run := runs[i%len(runs)]
				i++
				if res, err := be.Score(ctx, &run, nil); err != nil || res.Status == sdk.StatusFailed {
					b.Fatal(err, res.Reason)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "us/call")
		})
	}
}
