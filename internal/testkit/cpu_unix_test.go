//go:build unix

package testkit_test

import (
	"crypto/sha256"
	"testing"

	"github.com/scorekit/scorekit/internal/testkit"
)

// CPUTime moves forward as the process works.
func TestCPUTimeCountsWork(t *testing.T) {
	start := testkit.CPUTime()
	sum := sha256.Sum256(nil)
	for i := 0; i < 100_000_000 && testkit.CPUTime() <= start; i++ {
		for range 1000 {
			sum = sha256.Sum256(sum[:])
		}
	}
	if testkit.CPUTime() <= start {
		t.Fatalf("CPUTime stayed at %v through the work", start)
	}
}
