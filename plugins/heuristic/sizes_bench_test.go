package heuristic_test

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/scorekit/scorekit/internal/sizematrix"
	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// matrixScorers are the scorers and configurations the size matrix drives: every non-LLM
// built-in, json_valid with a schema that checks every item, and the reference scorers
// against run.expected.
var matrixScorers = []struct {
	f      func() sdk.Scorer
	config string
}{
	{heuristic.NewPrescreen, ""},
	{heuristic.NewCompleteness, ""},
	{heuristic.NewContentSimilarity, ""},
	{heuristic.NewKeywordCoverage, ""},
	{heuristic.NewTextualDifference, ""},
	{heuristic.NewTone, ""},
	{heuristic.NewExactMatch, ""},
	{heuristic.NewLevenshtein, ""},
	{heuristic.NewNumericDiff, ""},
	{heuristic.NewJSONValid, `{"schema": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]"}, "uniqueItems": true}}`},
	{heuristic.NewListContains, ""},
}

// BenchmarkSizes scores every case of the size matrix with every non-LLM scorer, called
// directly (no host pipeline), and reports the process CPU time and the bytes each call
// allocates:
//
//	go test -run '^$' -bench 'Sizes/.*/100KiB' -benchtime 1x ./plugins/heuristic
func BenchmarkSizes(b *testing.B) {
	ctx := context.Background()
	for _, ms := range matrixScorers {
		s := ms.f()
		if c, ok := s.(sdk.Configurer); ok {
			if err := c.Configure(json.RawMessage(ms.config)); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(s.Info().Name, func(b *testing.B) {
			for _, size := range sizematrix.Sizes {
				for _, c := range sizematrix.Runs(size) {
					b.Run(c.Kind+"/"+sizematrix.SizeName(size), func(b *testing.B) {
						var before, after runtime.MemStats
						runtime.ReadMemStats(&before)
						cpu := testkit.CPUTime()
						for b.Loop() {
							if _, err := s.Score(ctx, sdk.Call{Run: c.Run}); err != nil {
								b.Fatal(err)
							}
						}
						cpu = testkit.CPUTime() - cpu
						runtime.ReadMemStats(&after)
						b.ReportMetric(cpu.Seconds()*1e3/float64(b.N), "cpu-ms/op")
						b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "MiB/op")
					})
				}
			}
		})
	}
}
