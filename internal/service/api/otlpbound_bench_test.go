package api_test

import (
	"bytes"
	"io"
	"net/http"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/otlpcheck/otlpchecktest"
)

// BenchmarkTraceMemory measures the heap a POST /v1/traces request takes at its peak
// (live objects and garbage not yet collected, sampled every 100µs, less the heap before)
// beside what the server counts it to hold (traceBytes: the request's share of
// --otlp-max-in-flight-bytes), on an SDK's batch, a Collector's, and bodies of empty
// spans and attributes as large as the budget takes. peak/held-% under 100 is an
// estimate that covers the request.
func BenchmarkTraceMemory(b *testing.B) {
	for _, tc := range []struct {
		name string
		ct   string
		body []byte
	}{
		{"sdk-512x20", "application/x-protobuf", otlpchecktest.ExportProtobuf(512, 20)},
		{"collector-8192x50", "application/x-protobuf", otlpchecktest.ExportProtobuf(8192, 50)},
		{"spans-100000", "application/x-protobuf", otlpchecktest.SpansProtobuf(100_000)},
		{"spans-100000-json", "application/json", otlpchecktest.SpansJSON(100_000)},
		{"attributes-1000000", "application/x-protobuf", otlpchecktest.AttributesProtobuf(1_000_000)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, h, key := boundServer(b, filepath.Join(b.TempDir(), "scorekit.db"), api.Options{})
			held, err := api.TraceBytes(s, tc.ct, tc.body, tc.body)
			if err != nil {
				b.Fatal(err)
			}
			var peak int64
			for b.Loop() {
				peak = max(peak, peakHeap(func() {
					req, err := http.NewRequest("POST", h.srv.URL+"/v1/traces", bytes.NewReader(tc.body))
					if err != nil {
						b.Fatal(err)
					}
					req.Header.Set("Authorization", "Bearer "+key)
					req.Header.Set("Content-Type", tc.ct)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					out, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Fatalf("%d %.200s", resp.StatusCode, out)
					}
				}))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
			b.ReportMetric(float64(held)/(1<<20), "held-MiB")
			b.ReportMetric(100*float64(peak)/float64(held), "peak/held-%")
		})
	}
}

// peakHeap runs f and returns the most the heap grew meanwhile.
func peakHeap(f func()) int64 {
	heap := func() int64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		return int64(s[0].Value.Uint64())
	}
	runtime.GC()
	base := heap()
	var peak atomic.Int64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			if h := heap() - base; h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-done:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()
	f()
	close(done)
	<-stopped
	return peak.Load()
}
