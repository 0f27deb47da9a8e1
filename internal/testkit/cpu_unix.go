//go:build unix

package testkit

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time the process has used (user + system, every thread). Unlike wall
// time it does not grow when other processes compete for the cores, so a benchmark on a
// shared machine can report a cost that a busy machine does not inflate.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
