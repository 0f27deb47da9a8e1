package redact

import (
	"bytes"
	"os"
	"syscall"
	"testing"
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
	c0 := cpu()
	for i := range b.N {
		if _, _, err := r.JSON(lines[i%len(lines)], "id", "agent", "time"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu()-c0)/float64(b.N), "cpu-ns/run")
	b.ReportMetric(float64(size)/float64(len(lines)), "bytes/run")
}

// cpu is the process's CPU time (user and system) in nanoseconds: on a machine shared
// with other work it varies less than wall time.
func cpu() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
