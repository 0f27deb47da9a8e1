package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Proc is the cgroup of one process and everything it starts.
type Proc struct {
	host   *Host
	dirs   []string // one per hierarchy
	v1     []string // the v1 folders: the spawner thread joins them to fork into them
	v1home []string // the host's own cgroup in each v1 hierarchy, where the thread returns
	v2     string   // the v2 folder, "" if none: the process is cloned into it
	mem    string   // the folder with the memory controller, "" if none
	pids   string   // the folder with the pids controller, "" if none
	cpu    string   // the folder that counts CPU time, "" if none
	memV2  bool
	cpuV2  bool

	removed atomic.Bool
}

// NewProc makes the cgroup of one process with its limits: memBytes for the memory of
// the whole tree (0: none), maxTasks for its processes and threads (0: none).
func (c *Host) NewProc(memBytes int64, maxTasks int) (*Proc, error) {
	if err := c.acquire(); err != nil {
		return nil, fmt.Errorf("make the host's cgroup: %w", err)
	}
	name := fmt.Sprintf("p%d", cgroupSeq.Add(1))
	pc := &Proc{host: c}
	for _, h := range c.hiers {
		d := filepath.Join(h.dir, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			pc.Remove()
			return nil, fmt.Errorf("make the plugin's cgroup: %w", err)
		}
		pc.dirs = append(pc.dirs, d)
		if h.v2 {
			pc.v2 = d
		} else {
			pc.v1, pc.v1home = append(pc.v1, d), append(pc.v1home, h.own)
		}
		if h.memory && pc.mem == "" {
			pc.mem, pc.memV2 = d, h.v2
		}
		if h.pids && pc.pids == "" {
			pc.pids = d
		}
		if h.cpu && pc.cpu == "" {
			pc.cpu, pc.cpuV2 = d, h.v2
		}
	}
	if err := pc.limit(memBytes, maxTasks); err != nil {
		pc.Remove()
		return nil, err
	}
	return pc, nil
}

func (pc *Proc) limit(memBytes int64, maxTasks int) error {
	if pc.mem != "" && memBytes > 0 {
		b := strconv.FormatInt(memBytes, 10)
		if pc.memV2 {
			if err := writeFile(filepath.Join(pc.mem, "memory.max"), b); err != nil {
				return err
			}
			// No swap: the limit is on memory, not on memory plus swap.
			_ = writeIfExists(filepath.Join(pc.mem, "memory.swap.max"), "0")
		} else {
			if err := writeFile(filepath.Join(pc.mem, "memory.limit_in_bytes"), b); err != nil {
				return err
			}
			_ = writeIfExists(filepath.Join(pc.mem, "memory.memsw.limit_in_bytes"), b)
		}
	}
	if pc.pids != "" && maxTasks > 0 {
		return writeFile(filepath.Join(pc.pids, "pids.max"), strconv.Itoa(maxTasks))
	}
	return nil
}

// RaiseMemory raises the tree's memory limit to memBytes (cgroup v1 takes the limit on
// memory plus swap first: the memory limit may not exceed it).
func (pc *Proc) RaiseMemory(memBytes int64) error {
	if pc == nil || pc.mem == "" {
		return nil
	}
	b := strconv.FormatInt(memBytes, 10)
	if pc.memV2 {
		return writeFile(filepath.Join(pc.mem, "memory.max"), b)
	}
	if err := writeIfExists(filepath.Join(pc.mem, "memory.memsw.limit_in_bytes"), b); err != nil {
		return err
	}
	return writeFile(filepath.Join(pc.mem, "memory.limit_in_bytes"), b)
}

// MemoryLimitFile is the file that holds the tree's memory limit, "" without a memory
// controller.
func (pc *Proc) MemoryLimitFile() string {
	switch {
	case pc == nil || pc.mem == "":
		return ""
	case pc.memV2:
		return filepath.Join(pc.mem, "memory.max")
	}
	return filepath.Join(pc.mem, "memory.limit_in_bytes")
}

// Procs lists the processes in the cgroup.
func (pc *Proc) Procs() []int {
	if pc == nil || len(pc.dirs) == 0 {
		return nil
	}
	d := pc.pids
	if d == "" {
		d = pc.dirs[0]
	}
	b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// Tasks counts the processes and threads in the cgroup (what pids.max caps).
func (pc *Proc) Tasks() int {
	if pc == nil || pc.pids == "" {
		return 0
	}
	return readInt(filepath.Join(pc.pids, "pids.current"))
}

// Kill kills every process in the cgroup, again until none is left: a process forking
// while the first sweep runs is caught by the next, and pids.max bounds how many there
// can be. Bounded: it gives up after killSweeps sweeps.
func (pc *Proc) Kill() {
	if pc == nil || len(pc.dirs) == 0 {
		return
	}
	if pc.v2 != "" && writeFile(filepath.Join(pc.v2, "cgroup.kill"), "1") == nil {
		return
	}
	for range killSweeps {
		// A zombie (the plugin's leader, before the host reaps it) is dead already.
		pids := slices.DeleteFunc(pc.Procs(), zombie)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(time.Millisecond)
	}
}

const killSweeps = 1000

// OOMKills is how many processes of the tree the kernel killed at the memory limit.
func (pc *Proc) OOMKills() int {
	if pc == nil || pc.mem == "" {
		return 0
	}
	if pc.memV2 {
		return eventCount(filepath.Join(pc.mem, "memory.events"), "oom_kill")
	}
	return eventCount(filepath.Join(pc.mem, "memory.oom_control"), "oom_kill")
}

// CPUSeconds is the CPU time the tree has used, its dead processes' included.
func (pc *Proc) CPUSeconds() float64 {
	if pc == nil || pc.cpu == "" {
		return 0
	}
	if pc.cpuV2 {
		return float64(eventCount(filepath.Join(pc.cpu, "cpu.stat"), "usage_usec")) / 1e6
	}
	return float64(readInt(filepath.Join(pc.cpu, "cpuacct.usage"))) / 1e9
}

// PidsRefused is how many forks (or new threads) the pids limit refused.
func (pc *Proc) PidsRefused() int {
	if pc == nil || pc.pids == "" {
		return 0
	}
	return eventCount(filepath.Join(pc.pids, "pids.events"), "max")
}

// Remove removes the cgroup once its processes are gone; it waits up to two seconds for
// the kernel to finish releasing them. Once only.
func (pc *Proc) Remove() {
	if pc == nil || !pc.removed.CompareAndSwap(false, true) {
		return
	}
	defer pc.host.release()
	for _, d := range slices.Backward(pc.dirs) {
		for i := 0; i < 200; i++ {
			err := os.Remove(d)
			if err == nil || errors.Is(err, os.ErrNotExist) || !errors.Is(err, syscall.EBUSY) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// eventCount reads the value of key in a flat-keyed cgroup file ("oom_kill 2").
func eventCount(path, key string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok && k == key {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}
