package redact

import (
	"bytes"
	"os"
	"testing"

	"github.com/scorekit/scorekit/internal/testkit"
)

// BenchmarkJSON: redacting the example email-triage runs (raw emails in, Slack triage
// out), every built-in kind: ns and bytes per run.
func BenchmarkJSON(b *testing.B) {
	raw, err := os.ReadFile("../../../examples/service/email-triage.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(raw), []byte("\n"))
	r, err := Compile(Config{Kinds: Kinds})
	if err != nil {
		b.Fatal(err)
	}
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	b.ResetTimer()
	c0 := testkit.CPUTime()
	for i := range b.N {
		if _, _, err := r.JSON(lines[i%len(lines)], "id", "agent", "time"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(testkit.CPUTime()-c0)/float64(b.N), "cpu-ns/run")
	b.ReportMetric(float64(size)/float64(len(lines)), "bytes/run")
}
