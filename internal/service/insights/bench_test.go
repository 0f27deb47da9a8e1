package insights

import (
	"testing"
	"time"
)

// BenchmarkUpdate measures one assessment and reconciliation of a series of two windows
// (200 rows), which the service runs each time results of an (agent, scorer) arrive.
func BenchmarkUpdate(b *testing.B) {
	rows := build(cat(times(100, pass()), mix(100, 4, pass(), fail()))...)
	open, err := Assess(Config{}, "a", "prescreen", rows, nil)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Update(Config{}, "a", "prescreen", rows, open, now); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "us/assessment")
}
