//go:build unix

package cli

import (
	"runtime"
	"syscall"
	"time"
)

// selfUsage returns the command's CPU time and peak resident set (bytes).
func selfUsage() (time.Duration, int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	rss := int64(ru.Maxrss) // kilobytes on Linux, bytes on Darwin
	if runtime.GOOS != "darwin" {
		rss <<= 10
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), rss
}
