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

	"github.com/scorekit/scorekit/host/internal/cgroup"
)

// vetSysProcAttr kills the child with the host: a compiler left running would hold its
// memory for nobody.
func vetSysProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// vetLimiter bounds the child's memory: with a memory cgroup of its own where the host
// can make one (host/internal/cgroup, as process plugins get), which counts what the
// child really holds and kills it at the limit; else with RLIMIT_AS, which the child sets
// on itself (limitSelf), and which counts reserved address space as well.
type vetLimiter struct {
	cg *cgroup.Proc // nil: RLIMIT_AS
}

// vetTasks caps the child's threads: the Go runtime's few plus the compiler's workers.
const vetTasks = 256

// VetMemoryBound says how Vet bounds the compiler's memory on this machine, for the
// operator's log at start: a memory cgroup, or RLIMIT_AS and why no cgroup.
func VetMemoryBound() string {
	cg := cgroup.Find()
	if v := cg.MemoryVersion(); v != "" {
		return "a memory cgroup per compile (" + v + ")"
	}
	return "RLIMIT_AS (address space, a looser bound): " + cg.Why()
}

// newVetLimiter picks how the child's memory is bounded.
func newVetLimiter(memoryBytes int64) (*vetLimiter, error) {
	cg := cgroup.Find()
	if cg.MemoryVersion() == "" {
		return &vetLimiter{}, nil
	}
	pc, err := cg.NewProc(memoryBytes, vetTasks)
	if err != nil {
		return nil, fmt.Errorf("make the compiler's cgroup: %w", err)
	}
	return &vetLimiter{cg: pc}, nil
}

func (l *vetLimiter) rlimitAS() bool { return l.cg == nil }

// start starts the child born in its cgroup, from the host's one spawner thread (so
// that Pdeathsig follows the host, not a thread the Go runtime retires).
func (l *vetLimiter) start(cmd *exec.Cmd) error { return cgroup.Start(cmd, l.cg) }

func (l *vetLimiter) kill(cmd *exec.Cmd) {
	_ = cmd.Process.Kill()
	l.cg.Kill()
}

// outOfMemory reports whether the kernel killed the child at the cgroup's limit.
func (l *vetLimiter) outOfMemory() bool { return l.cg.OOMKills() > 0 }

func (l *vetLimiter) close() { l.cg.Remove() }

// allowGuest raises the cgroup's limit by the guest's memory once compilation is done,
// so that compilation alone is held to its budget (the RLIMIT_AS path does the same in
// the child: allowGuestMemory).
func (l *vetLimiter) allowGuest(compile, guest int64) error { return l.cg.RaiseMemory(compile + guest) }

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
