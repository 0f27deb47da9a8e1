package process

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/internal/cgroup"
	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/sdk"
)

// The tests of a plugin's whole process tree: forks, the tree's memory, the socket folder,
// the sandbox's user, a plugin that crashes. The attacks run inside the probe plugin
// (treeProbe), told what to do by the run's input.

// treeProbe runs the attack cmd with arg inside the plugin.
func treeProbe(cmd, arg string) (sdk.Result, bool) {
	switch cmd {
	case "forkmany":
		n, _ := strconv.Atoi(arg)
		started := 0
		// Bounded in count (n) and time.
		for start := time.Now(); started < n && time.Since(start) < 20*time.Second; {
			c := exec.Command("/usr/bin/sleep", "600")
			c.Args[0] = os.Args[3] // the plugin's marker: the test counts these
			if err := c.Start(); err != nil {
				return sdk.Scored(1, fmt.Sprintf("forked %d of %d: %v", started, n, err)), true
			}
			started++
		}
		return sdk.Scored(1, fmt.Sprintf("forked %d of %d", started, n)), true
	case "children-alloc":
		// K children of MIB MiB each, every one holding its memory; reports how many hold.
		k, mib, _ := strings.Cut(arg, ":")
		n, _ := strconv.Atoi(k)
		return sdk.Scored(1, fmt.Sprintf("held %d", childrenAlloc(n, mib))), true
	case "sockflood":
		dir := os.Getenv("PLUGIN_UNIX_SOCKET_DIR")
		var wrote, files int
		var werr error
		chunk := make([]byte, 256<<10)
		for start := time.Now(); files < 400 && time.Since(start) < 20*time.Second; files++ {
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("flood-%d", files)))
			if err != nil {
				werr = err
				break
			}
			n, err := f.Write(chunk)
			f.Close()
			wrote += n
			if err != nil {
				werr = err
				break
			}
		}
		return sdk.Scored(1, fmt.Sprintf("%d %d %s %v", wrote, files, dir, werr)), true
	case "uid":
		return sdk.Scored(1, fmt.Sprintf("%d %d", os.Getuid(), os.Getgid())), true
	case "panic":
		panic("boom in Score")
	case "panic-goroutine":
		go func() { panic("boom in a goroutine") }()
		time.Sleep(10 * time.Second)
	case "alloc-threads":
		return allocThenThreads(), true
	}
	return sdk.Result{}, false
}

// childrenAlloc starts n children that each allocate mib MiB, and counts those that say
// they hold it within a minute.
func childrenAlloc(n int, mib string) int {
	exe, err := os.Executable()
	if err != nil {
		return -1
	}
	lines := make(chan bool, n)
	for range n {
		c := exec.Command(exe, pluginArg, "child-alloc-"+mib, os.Args[3])
		out, err := c.StdoutPipe()
		if err != nil || c.Start() != nil {
			lines <- false
			continue
		}
		go func() {
			line, _ := bufio.NewReader(out).ReadString('\n')
			lines <- line == "ok\n"
		}()
	}
	held := 0
	deadline := time.After(time.Minute)
	for range n {
		select {
		case ok := <-lines:
			if ok {
				held++
			}
		case <-deadline:
			return held
		}
	}
	return held
}

// childAlloc allocates and touches mib MiB, says "ok" and holds it.
func childAlloc(mib string) {
	n, _ := strconv.Atoi(mib)
	b := make([]byte, n<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	fmt.Println("ok")
	time.Sleep(time.Hour)
	runtime.KeepAlive(b)
}

// allocThenThreads fills the plugin's data segment to just under RLIMIT_DATA, then needs
// new threads: their stacks no longer fit, and the runtime aborts starting one, before any
// allocation of its own fails.
func allocThenThreads() sdk.Result {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_DATA, &lim); err != nil || lim.Cur == ^uint64(0) {
		return sdk.Scored(0, "no RLIMIT_DATA")
	}
	var keep [][]byte
	for range 4096 {
		if vmData() > int64(lim.Cur)-24<<20 {
			break
		}
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		keep = append(keep, b)
	}
	for range 64 {
		go func() {
			runtime.LockOSThread()
			time.Sleep(time.Hour)
		}()
	}
	time.Sleep(10 * time.Second)
	runtime.KeepAlive(keep)
	return sdk.Scored(1, "threads started")
}

// vmData is the process's data segment (what RLIMIT_DATA counts), in bytes.
func vmData() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmData:"); ok {
			kib, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kib << 10
		}
	}
	return 0
}

// TestForkCap: a plugin that forks 1,000 children per call, called three times, is held to
// its cap on processes (the pids controller counts its threads too), and nothing of it
// outlives Close (noLeftovers).
func TestForkCap(t *testing.T) {
	const limit = 64
	forModes(t, func(t *testing.T, opts Options, _ bool) {
		opts.MaxProcesses = limit
		m := testManifest(t, "serve")
		mark := m.Args[2]
		b := open(t, loadProbesWith(t, m, opts)["probe"], "")
		t.Run("allowed", func(t *testing.T) {
			if got := mustScore(t, b, "forkmany:5"); got != "forked 5 of 5" {
				t.Errorf("five children under a cap of %d: %s", limit, got)
			}
		})
		t.Run("denied", func(t *testing.T) {
			for call := range 3 {
				res, err := scoreWithin(t, b, "forkmany:1000", 2*time.Minute)
				switch {
				case err == nil:
					t.Logf("call %d: %s", call+1, res.Reason)
				case codeOf(err) == sdk.CodeLimitExceeded && strings.Contains(err.Error(), "cap on processes"):
					t.Logf("call %d: %v", call+1, err)
				default:
					t.Fatalf("call %d: %v; want a result or limit_exceeded naming the cap on processes", call+1, err)
				}
				if n := len(withArg(mark)); n > limit {
					t.Fatalf("call %d: the plugin's tree has %d processes, over its cap of %d", call+1, n, limit)
				}
			}
		})
		bounded(t, 30*time.Second, "Close", func() error { return b.Close(context.Background()) })
	})
}

// scoreWithin is score, failing t when it has not returned within limit.
func scoreWithin(t testing.TB, b host.Backend, input string, limit time.Duration) (sdk.Result, error) {
	t.Helper()
	type scored struct {
		res sdk.Result
		err error
	}
	s := bounded(t, limit, input, func() scored {
		res, err := score(t, b, input)
		return scored{res, err}
	})
	return s.res, s.err
}

// TestForkCapTotal: the processes of all plugin processes together are held to the host's
// total cap, whatever each one's own cap allows.
func TestForkCapTotal(t *testing.T) {
	const each, total = 64, 100
	opts := confinedOptions(t)
	opts.MaxProcesses, opts.MaxProcessesTotal = each, total
	t.Cleanup(func() {
		// Later tests' Loads set the total again; leave the default meanwhile.
		_ = cgroup.Find().SetTotal(DefaultMaxProcessesTotal)
	})
	m := testManifest(t, "serve")
	p := loadProbesWith(t, m, opts)["probe"]
	var backends []host.Backend
	for _, tenant := range []string{"a", "b"} {
		b, err := p.Open(context.Background(), host.Tenant{Name: tenant}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close(context.Background()) })
		backends = append(backends, b)
	}
	for _, b := range backends {
		_, err := scoreWithin(t, b, "forkmany:1000", 2*time.Minute)
		if err != nil && codeOf(err) != sdk.CodeLimitExceeded {
			t.Fatal(err)
		}
	}
	if n := len(withArg(m.Args[2])); n > total {
		t.Fatalf("two tenants' trees hold %d processes, over the host's total of %d", n, total)
	}
}

// TestTreeMemory: limits.memory_mib caps the plugin's whole tree: four children of 400 MiB
// each cannot hold more than 512 MiB together; the call after works.
func TestTreeMemory(t *testing.T) {
	forModes(t, func(t *testing.T, opts Options, _ bool) {
		m := testManifest(t, "serve")
		m.Limits.MemoryMiB = 512
		mark := m.Args[2]
		b := open(t, loadProbesWith(t, m, opts)["probe"], "")
		t.Run("allowed", func(t *testing.T) {
			if got := mustScore(t, b, "children-alloc:1:400"); got != "held 1" {
				t.Errorf("one child of 400 MiB under 512 MiB for the tree: %s", got)
			}
		})
		// Its child holds its memory until the process goes: a fresh one for the rest.
		b.Close(context.Background())
		b = open(t, loadProbesWith(t, m, opts)["probe"], "")
		res, err := scoreWithin(t, b, "children-alloc:4:400", 2*time.Minute)
		switch {
		case err == nil:
			t.Logf("denied: %s", res.Reason)
			if held, _ := strconv.Atoi(strings.TrimPrefix(res.Reason, "held ")); held > 1 {
				t.Errorf("%d children hold 400 MiB each under a limit of 512 MiB for the tree", held)
			}
		case codeOf(err) == sdk.CodeLimitExceeded && strings.Contains(err.Error(), "memory_mib is 512"):
			t.Logf("denied: %v", err)
		default:
			t.Fatalf("err = %v, want a result or limit_exceeded naming memory_mib", err)
		}
		var rss int
		for _, pid := range withArg(mark) {
			rss += rssKiB(pid)
		}
		if rss > (512+32)<<10 {
			t.Errorf("the plugin's processes hold %d MiB resident, over the tree's 512 MiB", rss>>10)
		}
		if got := mustScore(t, b, "q"); got != "x" {
			t.Errorf("the call after: %q", got)
		}
	})
}

// TestSocketFolder: what a confined plugin writes into its socket folder lands in a small
// tmpfs inside its sandbox, never on the host's disk: the bytes it can write are capped,
// and the folder is gone with the plugin.
func TestSocketFolder(t *testing.T) {
	opts := confinedOptions(t)
	m := testManifest(t, "serve")
	b := open(t, loadProbesWith(t, m, opts)["probe"], "")
	got := mustScore(t, b, "sockflood")
	var wrote, files int
	var dir string
	if _, err := fmt.Sscanf(got, "%d %d %s", &wrote, &files, &dir); err != nil {
		t.Fatalf("sockflood: %q: %v", got, err)
	}
	t.Logf("wrote %d bytes in %d files to %s", wrote, files, dir)
	if wrote > socketDirBytes {
		t.Errorf("the plugin wrote %d bytes into its socket folder; the cap is %d", wrote, socketDirBytes)
	}
	if entries, err := os.ReadDir(dir); err == nil {
		t.Errorf("the plugin's socket folder %s is on the host's disk (%d entries)", dir, len(entries))
	}
	// The host still reaches the plugin's socket in there.
	if got := mustScore(t, b, "q"); got != "x" {
		t.Errorf("a call after the flood: %q", got)
	}
}

// TestSandboxUser: a confined plugin runs as an unprivileged user on the host, never as
// root, so a manifest that shows it all of "/" exposes only what any user may read.
func TestSandboxUser(t *testing.T) {
	opts := confinedOptions(t)
	world := t.TempDir()
	if err := os.Chmod(world, 0o755); err != nil {
		t.Fatal(err)
	}
	public, private := filepath.Join(world, "public"), filepath.Join(world, "root-only")
	if err := os.WriteFile(public, []byte("anyone may read this"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(private, []byte("root only"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := testManifest(t, "serve")
	m.Read = []string{"/", world}
	p := loadProbesWith(t, m, opts)["probe"]
	b := open(t, p, "")
	if sb := p.(*scorerPlugin).Sandbox(); os.Geteuid() == 0 && (!strings.Contains(sb.User, "65534") || strings.Contains(sb.Mode, "root")) {
		t.Errorf("Sandbox() = %+v, want it to say the plugin runs as uid 65534", sb)
	}
	t.Run("allowed", func(t *testing.T) {
		if got := mustScore(t, b, "read:"+public); got != "read: anyone may read this" {
			t.Errorf("a world-readable file in a read path: %s", got)
		}
	})
	t.Run("denied", func(t *testing.T) {
		for _, f := range []string{"/etc/shadow", private} {
			if got := mustScore(t, b, "read:"+f); !strings.HasPrefix(got, "error: ") {
				t.Errorf("%s: %.60s", f, got)
			}
		}
		if os.Geteuid() != 0 {
			return
		}
		exe, _ := os.Executable()
		comm := filepath.Base(exe)[:min(15, len(filepath.Base(exe)))]
		seen := 0
		for _, pid := range withArg(m.Args[2]) {
			if c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(c)) != comm {
				continue // bubblewrap, prlimit
			}
			seen++
			status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			for _, line := range strings.Split(string(status), "\n") {
				if f := strings.Fields(line); len(f) >= 3 && f[0] == "Uid:" && f[1] != "65534" {
					t.Errorf("plugin process %d runs as uid %s on the host (%s)", pid, f[1], line)
				}
			}
		}
		if seen == 0 {
			t.Error("found no plugin process to check")
		}
	})
}

// TestRequireSandbox: ConfineRequired refuses to load a plugin it cannot confine (no
// bubblewrap on PATH, no cgroups), naming what is missing; with everything there it loads.
func TestRequireSandbox(t *testing.T) {
	t.Run("allowed", func(t *testing.T) {
		p := loadProbesWith(t, testManifest(t, "serve"), confinedOptions(t))["probe"]
		if sb := p.(*scorerPlugin).Sandbox(); !sb.Confined || sb.Degraded != "" || !strings.Contains(sb.Cgroups, "memory") || !strings.Contains(sb.Cgroups, "pids") {
			t.Errorf("Sandbox() = %+v, want confined with memory and pids, nothing degraded", sb)
		}
	})
	for _, tc := range []struct {
		name string
		set  func(t *testing.T, opts *Options)
		want string
	}{
		{"no bubblewrap", func(t *testing.T, _ *Options) { t.Setenv("PATH", pathWithout(t, "bwrap")) }, "bubblewrap is not installed"},
		{"no cgroups", func(_ *testing.T, opts *Options) { opts.NoCgroups = true }, "cgroups turned off"},
	} {
		t.Run("denied/"+tc.name, func(t *testing.T) {
			opts := testOptions(t)
			opts.Confine = ConfineRequired
			tc.set(t, &opts)
			ps, err := Load(context.Background(), testManifest(t, "serve"), opts)
			for _, p := range ps {
				p.Close(context.Background())
			}
			if !errors.Is(err, ErrNotConfined) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrNotConfined saying %q", err, tc.want)
			}
		})
	}
}

// pathWithout is a PATH holding the tools the sandbox uses but the one named.
func pathWithout(t *testing.T, tool string) string {
	dir := t.TempDir()
	for _, name := range []string{"bwrap", "prlimit", "setpriv", "true", "sleep"} {
		if name == tool {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			if err := os.Symlink(p, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// TestPluginCrash: a plugin that panics fails the call with one line, "plugin crashed: " and
// the panic's message; its stack goes to the host's log only.
func TestPluginCrash(t *testing.T) {
	for _, tc := range []struct {
		input, code, msg string
	}{
		{"panic", sdk.CodeScorerError, "plugin crashed: boom in Score"},
		{"panic-goroutine", sdk.CodeUnavailable, "plugin crashed: boom in a goroutine"},
	} {
		t.Run(tc.input, func(t *testing.T) {
			var logs testkit.SyncBuffer
			opts := Options{Logger: slog.New(slog.NewTextHandler(io.MultiWriter(&logs, testWriter{t}), nil))}
			b := open(t, loadProbesWith(t, testManifest(t, "serve"), opts)["probe"], "")
			_, err := scoreWithin(t, b, tc.input, time.Minute)
			if codeOf(err) != tc.code || !strings.Contains(err.Error(), tc.msg) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "goroutine ") {
				t.Fatalf("err = %q, want %s, one line saying %q", err, tc.code, tc.msg)
			}
			for i := 0; i < 100 && !strings.Contains(logs.String(), "goroutine "); i++ {
				time.Sleep(50 * time.Millisecond)
			}
			if !strings.Contains(logs.String(), "goroutine ") {
				t.Errorf("the stack is not in the host's log:\n%s", logs.String())
			}
			if got := mustScore(t, b, "q"); got != "x" {
				t.Errorf("the call after: %q", got)
			}
		})
	}
}

// TestMemoryLimitThreads: without cgroups, memory_mib is RLIMIT_DATA, and a plugin at the
// limit may die starting a thread (its stack no longer fits) rather than at an allocation:
// that is the memory limit too, limit_exceeded naming memory_mib, never "unavailable".
func TestMemoryLimitThreads(t *testing.T) {
	forModes(t, func(t *testing.T, opts Options, _ bool) {
		opts.NoCgroups = true
		if opts.Confine == ConfineRequired {
			opts.Confine = ConfineAuto
		}
		m := testManifest(t, "serve")
		m.Limits.MemoryMiB = 200
		b := open(t, loadProbesWith(t, m, opts)["probe"], "")
		_, err := scoreWithin(t, b, "alloc-threads", time.Minute)
		if codeOf(err) != sdk.CodeLimitExceeded || !strings.Contains(err.Error(), "memory_mib is 200") {
			t.Fatalf("err = %v, want limit_exceeded naming memory_mib", err)
		}
		if got := mustScore(t, b, "q"); got != "x" {
			t.Errorf("the call after: %q", got)
		}
	})
}
