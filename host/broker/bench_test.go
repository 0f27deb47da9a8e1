package broker

import (
	"context"
	"testing"

	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/sdk"
)

// BenchmarkCacheHit measures a metered re-score answered from the memory cache: the
// broker's own cost per request (key, lookup, accounting), with no endpoint call.
func BenchmarkCacheHit(b *testing.B) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"score": 1, "reasoning": "it answers the question"}`})
	defer srv.Close()
	br, err := New(Config{BaseURL: srv.URL(), Model: "judge-model"})
	if err != nil {
		b.Fatal(err)
	}
	prompt := "Does the output answer the input? INPUT: What is the capital of France? OUTPUT: Paris. Reply with JSON."
	req := []sdk.CompletionRequest{{Messages: []sdk.Message{{Role: "system", Content: "You grade answers."}, {Role: "user", Content: prompt}}, JSON: true}}
	ctx := context.Background()
	warm := br.Meter("t", "s")
	if _, err := warm.Complete(ctx, req); err != nil {
		b.Fatal(err)
	}
	res := sdk.Scored(1, "")
	warm.Finish(&res)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m := br.Meter("t", "s")
		out, err := m.Complete(ctx, req)
		if err != nil || !out[0].Cached {
			b.Fatalf("not a cache hit: %+v %v", out, err)
		}
		res := sdk.Scored(1, "")
		m.Finish(&res)
	}
	b.StopTimer()
	b.ReportMetric(float64(srv.Calls()), "endpoint_calls")
}
