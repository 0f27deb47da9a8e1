package heuristic_test

import (
	"context"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/sizematrix"
	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// BenchmarkTimeoutLeftover scores a 100 KiB run (two similar texts, levenshtein's costliest
// case, ~55 ms) with levenshtein under a 2 ms host deadline and reports what the timeout left behind: the wall time and
// process CPU time from the caller's answer until no goroutine of the call was left
// (left-ms, left-cpu-ms), and the time to the answer (answer-ms):
//
//	go test -run '^$' -bench TimeoutLeftover -benchtime 3x ./plugins/heuristic
func BenchmarkTimeoutLeftover(b *testing.B) {
	var run sdk.Run
	for _, c := range sizematrix.Runs(100 << 10) {
		if c.Kind == "similar" {
			run = c.Run
		}
	}
	reg := host.NewRegistry()
	if err := reg.Register(host.Native(heuristic.NewLevenshtein), false); err != nil {
		b.Fatal(err)
	}
	h := host.New(reg, host.WithTimeout(2*time.Millisecond), host.WithLogger(slog.New(slog.DiscardHandler)))
	s, err := h.Open(context.Background(), "levenshtein", host.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	base := runtime.NumGoroutine()
	var answer, left time.Duration
	var leftCPU time.Duration
	for b.Loop() {
		start := time.Now()
		if res := s.Score(context.Background(), run); res.Status != sdk.StatusFailed {
			b.Fatalf("status %s, want failed (timeout)", res.Status)
		}
		answered, cpu := time.Now(), testkit.CPUTime()
		answer += answered.Sub(start)
		for runtime.NumGoroutine() > base {
			time.Sleep(time.Millisecond)
		}
		left += time.Since(answered)
		leftCPU += testkit.CPUTime() - cpu
	}
	n := float64(b.N)
	b.ReportMetric(answer.Seconds()*1e3/n, "answer-ms")
	b.ReportMetric(left.Seconds()*1e3/n, "left-ms")
	b.ReportMetric(leftCPU.Seconds()*1e3/n, "left-cpu-ms")
}
