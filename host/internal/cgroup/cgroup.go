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
