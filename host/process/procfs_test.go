package process

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The tests read /proc to see what processes a plugin left behind; they never trust the
// runtime's own bookkeeping for that.

// procStat is what the tests need of /proc/PID/stat.
type procStat struct {
	pid, ppid, pgid int
	state           byte
}

func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, false
	}
	// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 3 {
		return procStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgid, _ := strconv.Atoi(f[2])
	return procStat{pid: pid, ppid: ppid, pgid: pgid, state: f[0][0]}, true
}

// allPids lists the processes that exist now.
func allPids() []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// descendants returns every live (not zombie) process below root.
func descendants(root int) []int {
	children := map[int][]int{}
	for _, pid := range allPids() {
		if st, ok := readStat(pid); ok && st.state != 'Z' {
			children[st.ppid] = append(children[st.ppid], pid)
		}
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out = append(out, c)
			walk(c)
		}
	}
	walk(root)
	return out
}

// withArg returns the live processes whose command line holds arg: a test gives each of
// its plugins a unique argument, which the plugin's children and the sandbox's helper
// processes carry too.
func withArg(arg string) []int {
	var out []int
	for _, pid := range allPids() {
		if pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); !ok || st.state == 'Z' {
			continue
		}
		for _, a := range bytes.Split(b, []byte{0}) {
			if string(a) == arg {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// rssKiB is the resident set of pid in KiB, or 0 when it is gone.
func rssKiB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return n
		}
	}
	return 0
}

// exeOf is the executable of pid, or "".
func exeOf(pid int) string {
	p, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return ""
	}
	return filepath.Clean(p)
}
