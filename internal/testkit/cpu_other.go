//go:build !unix

package testkit

import "time"

// CPUTime is not measured on this platform; it reads 0, and so do the CPU metrics built
// on it.
func CPUTime() time.Duration { return 0 }
