package api_test

import (
	"bytes"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/otlpcheck/otlpchecktest"
)

// BenchmarkExportTraces: POST /v1/traces of an SDK's batch (512 spans of 20 attributes,
// 64 agent turns, in protobuf), each batch new, end to end on SQLite: spans/s.
func BenchmarkExportTraces(b *testing.B) {
	const spans, attrs = 512, 20
	_, h, key := boundServer(b, filepath.Join(b.TempDir(), "scorekit.db"), api.Options{})
	var bodies [][]byte
	for i := range b.N {
		body, err := ptraceotlp.NewExportRequestFromTraces(otlpchecktest.Batch(i+1, spans, attrs)).MarshalProto()
		if err != nil {
			b.Fatal(err)
		}
		bodies = append(bodies, body)
	}
	b.ResetTimer()
	for i := range b.N {
		req, err := http.NewRequest("POST", h.srv.URL+"/v1/traces", bytes.NewReader(bodies[i]))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%d %.200s", resp.StatusCode, out)
		}
	}
	b.ReportMetric(float64(spans*b.N)/b.Elapsed().Seconds(), "spans/s")
}
