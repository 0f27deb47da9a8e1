package wasm

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"syscall"
)

// vetSysProcAttr kills the child with the host: a compiler left running would hold its
// memory for nobody.
func vetSysProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// vetLimiter bounds the child's memory.
type vetLimiter struct {
	memoryBytes int64
}

// newVetLimiter picks how the child's memory is bounded.
func newVetLimiter(memoryBytes int64) (*vetLimiter, error) {
	return &vetLimiter{memoryBytes: memoryBytes}, nil
}

func (l *vetLimiter) rlimitAS() bool            { return true }
func (l *vetLimiter) start(cmd *exec.Cmd) error { return cmd.Start() }
func (l *vetLimiter) kill(cmd *exec.Cmd)        { _ = cmd.Process.Kill() }
func (l *vetLimiter) outOfMemory() bool         { return false }
func (l *vetLimiter) close()                    {}

// limitSelf bounds the child's own memory: a soft limit that makes the Go collector work
// before the hard one, and, where no memory cgroup holds the child, its address space
// (RLIMIT_AS): what it has mapped already plus the compilation's budget. The hard limit
// adds the guest's linear memory, reserved whole when the probe instantiates it
// (memory_mmap.go); allowGuestMemory lifts the soft limit to it once compilation is done,
// so that compilation alone is held to its budget.
func limitSelf(req vetRequest) error {
	debug.SetMemoryLimit(req.MemoryBytes * 3 / 4)
	if !req.RlimitAS {
		return nil
	}
	mapped, err := vmSize()
	if err != nil {
		return fmt.Errorf("bound the compiler's address space: %w", err)
	}
	lim := syscall.Rlimit{Cur: uint64(mapped + req.MemoryBytes), Max: uint64(mapped + req.MemoryBytes + int64(req.Limits.MemoryMiB)<<20)}
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		return fmt.Errorf("bound the compiler's address space (RLIMIT_AS): %w", err)
	}
	return nil
}

// allowGuestMemory raises the address-space limit to its hard limit, for the probe.
func allowGuestMemory(req vetRequest) error {
	if !req.RlimitAS {
		return nil
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		return fmt.Errorf("raise the address-space limit for the probe: %w", err)
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		return fmt.Errorf("raise the address-space limit for the probe: %w", err)
	}
	return nil
}

// vmSize is this process's mapped address space in bytes (VmSize).
func vmSize() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmSize:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmSize in /proc/self/status")
}
