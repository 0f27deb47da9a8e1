package otlpcheck

import (
	"runtime"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service/otlpcheck/otlpchecktest"
)

// BenchmarkCheck is the walk's cost beside pdata's decoding of the same body, on an
// exporter's batches: the OpenTelemetry SDK's (512 spans of 20 attributes) and a
// Collector's (8192 spans of 50). It reports the walk's share of the decode's time
// (walk/decode-%), and its allocations per request (one: the stack).
func BenchmarkCheck(b *testing.B) {
	for _, size := range []struct {
		name         string
		spans, attrs int
	}{{"sdk-512x20", 512, 20}, {"collector-8192x50", 8192, 50}} {
		td := otlpchecktest.Export(size.spans, size.attrs)
		for enc := range encodings {
			e := encodings[enc]
			body := encode(enc, td)
			b.Run(size.name+"/"+e.name, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := e.walk(body, Traces, Limits{}); err != nil {
						b.Fatal(err)
					}
				}
				// The decoder, as many times, apart: its garbage would be collected during
				// the walks.
				walk := b.Elapsed()
				b.StopTimer()
				runtime.GC()
				start := time.Now()
				for range b.N {
					if _, err := e.decode(body, Traces); err != nil {
						b.Fatal(err)
					}
				}
				decode := time.Since(start)
				b.ReportMetric(100*float64(walk)/float64(decode), "walk/decode-%")
			})
		}
	}
}

// BenchmarkDecodedCost measures what pdata keeps per element it decodes, for the costs in
// cost.go: B/elem is the heap the decoded request holds, over its elements (a span, an
// attribute, a value of an array, a nesting level, an event and a link, a log record).
func BenchmarkDecodedCost(b *testing.B) {
	const n = 20_000
	for _, sh := range shapes {
		body := encode(0, sh.make(n))
		b.Run(sh.name, func(b *testing.B) {
			var kept int64
			for b.Loop() {
				kept += keptBytes(func() any {
					r, err := encodings[0].decode(body, sh.sig)
					if err != nil {
						b.Fatal(err)
					}
					return r
				})
			}
			b.ReportMetric(float64(kept)/float64(b.N)/n, "B/elem")
		})
	}
}
