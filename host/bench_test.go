package host

import (
	"context"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/sdk"
)

// trivial is the cheapest honest scorer: it looks at the run and returns a number.
type trivial struct{ info sdk.Info }

func (s trivial) Info() sdk.Info { return s.info }

func (s trivial) Score(_ context.Context, call sdk.Call) (sdk.Result, error) {
	if call.Run.Output == "" {
		return sdk.Skipped("empty output"), nil
	}
	r := sdk.Scored(0.8, "ok")
	if len(s.info.Dimensions) > 0 {
		r.Dimensions = map[string]float64{"faithfulness": 0.8, "relevance": 0.9, "completeness": 0.6, "reasoning": 0.7}
	}
	return r, nil
}

// BenchmarkPipeline compares a bare call of a native scorer with the same call through
// Scorer.Score; the overhead sub-benchmarks report the difference as overhead-ns/op (wall
// time) and overhead-cpu-ns/op (process CPU time, steadier on a shared machine).
//
//	go test -run '^$' -bench BenchmarkPipeline -benchmem ./host/
func BenchmarkPipeline(b *testing.B) {
	masisInfo := masis()
	masisInfo.Name = "trivial"
	for _, c := range []struct {
		name  string
		info  sdk.Info
		audit *sdk.CitationAudit
	}{
		// A plain 0-1 scorer: validation, deadline, normalization, rounding.
		{"score", info("trivial"), nil},
		// Four weighted dimensions with the run's own citation audit: clamps and overall.
		{"masis-audited", masisInfo, &sdk.CitationAudit{Citations: 1, Sentences: 1}},
		// The same, with the host computing the audit from the output (citation.Audit).
		{"masis", masisInfo, nil},
	} {
		sc := trivial{info: c.info}
		reg := NewRegistry()
		if err := reg.Register(Native(func() sdk.Scorer { return sc }), false); err != nil {
			b.Fatal(err)
		}
		s, err := New(reg).Open(context.Background(), "trivial", OpenOptions{})
		if err != nil {
			b.Fatal(err)
		}
		in := sdk.Run{Input: "What is the capital of France?", Output: "Paris is the capital of France [1].",
			Context: []sdk.Passage{{Text: "Paris is the capital of France."}}, CitationAudit: c.audit}
		ctx := context.Background()
		direct := func() {
			if _, err := sc.Score(ctx, sdk.Call{Run: in}); err != nil {
				b.Fatal(err)
			}
		}
		piped := func() {
			if r := s.Score(ctx, in); r.Status != sdk.StatusScored {
				b.Fatalf("status %s: %v", r.Status, r.Error)
			}
		}
		b.Run(c.name+"/native", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				direct()
			}
		})
		b.Run(c.name+"/pipeline", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				piped()
			}
		})
		b.Run(c.name+"/overhead", func(b *testing.B) {
			// Wall time, interleaved so both sides see the same machine.
			var bare, full time.Duration
			for b.Loop() {
				t0 := time.Now()
				direct()
				t1 := time.Now()
				piped()
				bare += t1.Sub(t0)
				full += time.Since(t1)
			}
			b.ReportMetric(float64(full-bare)/float64(b.N), "overhead-ns/op")
			// CPU time of the process (GC included), which other load does not inflate.
			c0 := testkit.CPUTime()
			for range b.N {
				direct()
			}
			c1 := testkit.CPUTime()
			for range b.N {
				piped()
			}
			c2 := testkit.CPUTime()
			b.ReportMetric(float64((c2-c1)-(c1-c0))/float64(b.N), "overhead-cpu-ns/op")
		})
	}
}
