// Package cgroup caps what a process tree may hold with the kernel's memory and pids
// controllers, for the hosts that start processes: plugin processes (host/process) and
// the child that compiles a tenant's WebAssembly module (host/wasm's Vet).
package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The host caps what a whole process tree may hold with the kernel's memory and
// pids controllers, in whichever cgroup hierarchy carries them (v1, v2, or a hybrid of both:
// these machines, as root, have v1's memory and pids while v2 carries only hugetlb), and
// reads the tree's CPU time there (v1's cpuacct, v2's cpu.stat). It writes cgroupfs
// directly (RATIONALE.md says why not a library):
//
//	<the host's own cgroup>/scorekit-<host pid>/   pids.max: every plugin process together
//	    p<N>/                                      one plugin process and all it starts:
//	                                               memory limit, pids.max
//
// A plugin is born inside its p<N> (so nothing it forks escapes), the tree is killed
// through it, and its event counters say whether a limit ended it.

// hierarchy is one mounted cgroup hierarchy that carries the memory, pids or (v1) cpuacct
// controller.
type hierarchy struct {
	v2     bool
	memory bool
	pids   bool
	// cpu: it counts the CPU time of a cgroup (v1's cpuacct; every v2 cgroup's cpu.stat).
	cpu bool
	own string // the host's own cgroup in it (a folder under the mount point)
	dir string // own/scorekit-<pid>, once made
}

// Host is what the host found of the cgroup hierarchies once.
type Host struct {
	hiers []*hierarchy // those the host could make its folder in
	why   string       // what is missing and why; "" when memory and pids both bind

	// The host's folders exist while a plugin's cgroup does: made for the first, removed
	// after the last, so a host that has closed its plugins leaves nothing behind.
	mu    sync.Mutex
	live  int
	total int // the cap on every plugin's tasks together; 0 for none
}

func (c *Host) memory() *hierarchy {
	for _, h := range c.hiers {
		if h.memory {
			return h
		}
	}
	return nil
}

func (c *Host) pids() *hierarchy {
	for _, h := range c.hiers {
		if h.pids {
			return h
		}
	}
	return nil
}

func (h *hierarchy) version() string {
	if h.v2 {
		return "cgroup v2"
	}
	return "cgroup v1"
}

// Find returns what this process found of the cgroup hierarchies, looked for once.
func Find() *Host { return findOnce() }

// Why says what is missing and why, "" when the memory and pids controllers both bind.
func (c *Host) Why() string { return c.why }

// Usable reports whether the host could make its folder in some hierarchy that carries
// memory or pids.
func (c *Host) Usable() bool { return len(c.hiers) > 0 }

// MemoryVersion is the version of the hierarchy that carries memory ("cgroup v1" or
// "cgroup v2"), "" when none does.
func (c *Host) MemoryVersion() string {
	if h := c.memory(); h != nil {
		return h.version()
	}
	return ""
}

// PidsVersion is MemoryVersion for the pids controller.
func (c *Host) PidsVersion() string {
	if h := c.pids(); h != nil {
		return h.version()
	}
	return ""
}

// RemoveStale removes the folders that hosts which are gone left behind.
func (c *Host) RemoveStale() {
	for _, h := range c.hiers {
		removeStale(h.own)
	}
}

var (
	findOnce  = sync.OnceValue(findCgroups)
	cgroupSeq atomic.Int64
)

// findCgroups finds the hierarchies that carry memory and pids, and makes the host's folder
// in each (removing the folders of hosts that are gone).
func findCgroups() *Host {
	c := &Host{}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		c.why = "cannot read /proc/self/mountinfo: " + err.Error()
		return c
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		c.why = "cannot read /proc/self/cgroup: " + err.Error()
		return c
	}
	var problems []string
	for _, h := range parseHierarchies(mounts, self) {
		if h.v2 {
			if err := enableV2(h); err != nil {
				problems = append(problems, err.Error())
				continue
			}
		}
		h.dir = filepath.Join(h.own, fmt.Sprintf("scorekit-%d", os.Getpid()))
		removeStale(h.own)
		// Try it once: made and removed again.
		if err := h.make(); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		_ = os.Remove(h.dir)
		c.hiers = append(c.hiers, h)
	}
	var missing []string
	if c.memory() == nil {
		missing = append(missing, "memory")
	}
	if c.pids() == nil {
		missing = append(missing, "pids")
	}
	if len(missing) > 0 {
		c.why = fmt.Sprintf("no usable cgroup %s controller", strings.Join(missing, " or "))
		if len(problems) > 0 {
			c.why += ": " + strings.Join(problems, "; ")
		} else {
			c.why += " is mounted (neither cgroup v1 nor v2 offers it to this process)"
		}
	}
	return c
}

// parseHierarchies reads /proc/self/mountinfo and /proc/self/cgroup: the hierarchies
// mounted here that carry memory or pids, with the host's own cgroup in each.
func parseHierarchies(mountinfo, self []byte) []*hierarchy {
	ownV1 := map[string]string{} // controller -> path
	ownV2 := ""
	for _, line := range strings.Split(string(self), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			ownV2 = parts[2]
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			ownV1[ctl] = parts[2]
		}
	}
	var out []*hierarchy
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		root, mnt := f[3], f[4]
		switch g[0] {
		case "cgroup":
			opts := strings.Split(g[2], ",")
			h := &hierarchy{memory: slices.Contains(opts, "memory"), pids: slices.Contains(opts, "pids"), cpu: slices.Contains(opts, "cpuacct")}
			var own string
			ok := false
			for _, ctl := range []string{"memory", "pids", "cpuacct"} {
				if slices.Contains(opts, ctl) {
					own, ok = ownV1[ctl]
					break
				}
			}
			if !ok || seen[mnt] {
				continue
			}
			h.own = under(mnt, root, own)
			seen[mnt] = true
			out = append(out, h)
		case "cgroup2":
			if seen[mnt] || ownV2 == "" {
				continue
			}
			own := under(mnt, root, ownV2)
			ctls, err := os.ReadFile(filepath.Join(own, "cgroup.controllers"))
			if err != nil {
				continue
			}
			have := strings.Fields(string(ctls))
			h := &hierarchy{v2: true, own: own, memory: slices.Contains(have, "memory"), pids: slices.Contains(have, "pids"), cpu: true}
			if !h.memory && !h.pids {
				continue
			}
			seen[mnt] = true
			out = append(out, h)
		}
	}
	return out
}

// under is the folder of cgroup path (as /proc/self/cgroup names it) in a hierarchy mounted
// at mnt whose root is root (a container sees only its part of the hierarchy).
func under(mnt, root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = path
	}
	return filepath.Join(mnt, rel)
}

func controlList(h *hierarchy) string {
	var s []string
	if h.memory {
		s = append(s, "+memory")
	}
	if h.pids {
		s = append(s, "+pids")
	}
	return strings.Join(s, " ")
}

// enableV2 hands memory and pids to the host's own cgroup's children. cgroup v2 allows
// that only where the cgroup holds no process itself (the root excepted).
func enableV2(h *hierarchy) error {
	if err := writeFile(filepath.Join(h.own, "cgroup.subtree_control"), controlList(h)); err != nil {
		return fmt.Errorf("cgroup v2: cannot hand %s to the cgroups below the host's %s (%v); run the host in a cgroup whose controllers are delegated to it and whose own processes sit in a leaf (systemd-run --property=Delegate=yes)",
			strings.TrimPrefix(strings.ReplaceAll(controlList(h), " +", " and "), "+"), h.own, err)
	}
	return nil
}

// make makes the host's folder in h.
func (h *hierarchy) make() error {
	if err := os.Mkdir(h.dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("cannot make a cgroup in %s (%v)", h.own, err)
	}
	if h.v2 && controlList(h) != "" {
		// The host's folder hands the controllers on to each plugin's folder.
		if err := writeFile(filepath.Join(h.dir, "cgroup.subtree_control"), controlList(h)); err != nil {
			_ = os.Remove(h.dir)
			return err
		}
	}
	return nil
}

// acquire makes the host's folders if no plugin cgroup exists yet, and counts one more.
func (c *Host) acquire() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live == 0 {
		for _, h := range c.hiers {
			if err := h.make(); err != nil {
				return err
			}
		}
		if err := c.writeTotal(); err != nil {
			return err
		}
	}
	c.live++
	return nil
}

// release counts one plugin cgroup less, and removes the host's folders after the last.
func (c *Host) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live--; c.live > 0 {
		return
	}
	for _, h := range c.hiers {
		_ = os.Remove(h.dir)
	}
}

// removeStale removes the folders of earlier hosts that are gone (a host killed before it
// could remove its own); folders still holding a process stay.
func removeStale(own string) {
	stale, _ := filepath.Glob(filepath.Join(own, "scorekit-*"))
	for _, d := range stale {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "scorekit-"))
		if err != nil || pid == os.Getpid() || !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			continue
		}
		kids, _ := filepath.Glob(filepath.Join(d, "p*"))
		for _, k := range kids {
			_ = os.Remove(k)
		}
		_ = os.Remove(d)
	}
}

// SetTotal caps the tasks of every process of this host together.
func (c *Host) SetTotal(n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total = n
	if c.live == 0 {
		return nil // written when the folder is made
	}
	return c.writeTotal()
}

// writeTotal writes the total cap; the caller holds c.mu and the folders exist.
func (c *Host) writeTotal() error {
	h := c.pids()
	if h == nil || c.total <= 0 {
		return nil
	}
	return writeFile(filepath.Join(h.dir, "pids.max"), strconv.Itoa(c.total))
}

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

func readInt(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

func writeFile(path, v string) error {
	if err := os.WriteFile(path, []byte(v), 0); err != nil {
		return fmt.Errorf("write %q to %s: %w", v, path, err)
	}
	return nil
}

func writeIfExists(path, v string) error {
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	return writeFile(path, v)
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
