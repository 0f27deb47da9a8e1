package process

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/sdk"
)

// The sandbox tests run hostile plugins (the test binary's probes, told what to attempt by
// the run's input) and check each attempt is contained, with the good case beside it still
// working, as host/wasm/sandbox_test.go does for WASM. Every plugin carries a marker
// argument; noLeftovers fails a test whose plugin left a process behind.

// hostile runs the attack the run's input names ("dial:127.0.0.1:4000", "alloc", ...).
func hostile(run sdk.Run) (sdk.Result, bool) {
	cmd, arg, _ := strings.Cut(run.Input, ":")
	outcome := func(what string, err error) (sdk.Result, bool) {
		if err != nil {
			return sdk.Scored(0, "error: "+err.Error()), true
		}
		return sdk.Scored(1, what), true
	}
	switch cmd {
	case "env":
		env := os.Environ()
		slices.Sort(env)
		return sdk.Scored(1, strings.Join(env, "\n")), true
	case "dial":
		c, err := net.DialTimeout("tcp", arg, 2*time.Second)
		if err == nil {
			c.Close()
		}
		return outcome("connected", err)
	case "write":
		return outcome("wrote", os.WriteFile(arg, []byte("written by a plugin"), 0o644))
	case "writeread":
		if err := os.WriteFile(arg, []byte("kept"), 0o644); err != nil {
			return outcome("", err)
		}
		b, err := os.ReadFile(arg)
		return outcome("read back: "+string(b), err)
	case "read":
		b, err := os.ReadFile(arg)
		return outcome("read: "+string(b[:min(len(b), 64)]), err)
	case "len":
		return sdk.Scored(1, strconv.Itoa(len(run.Output))), true
	case "fork":
		return outcome("forked", startChild("child", false))
	case "fork-setsid":
		return outcome("forked", startChild("child-setsid", false))
	case "fork-exit":
		if err := startChild("child", false); err != nil {
			return outcome("", err)
		}
		os.Exit(0)
	case "stdio-hang":
		if err := startChild("child", true); err != nil {
			return outcome("", err)
		}
		time.Sleep(time.Hour)
	case "alloc":
		// arg MiB, touched; none: without bound.
		limit, _ := strconv.Atoi(arg)
		var keep [][]byte
		for i := 0; limit == 0 || i < limit; i++ {
			b := make([]byte, 1<<20)
			for j := range b {
				b[j] = byte(j)
			}
			keep = append(keep, b)
		}
		return sdk.Scored(1, fmt.Sprintf("allocated %d MiB", len(keep))), true
	case "big":
		n, _ := strconv.Atoi(arg)
		return sdk.Scored(1, strings.Repeat("x", n)), true
	case "spin":
		for start := time.Now(); time.Since(start) < time.Hour; {
		}
	case "shout":
		n, _ := strconv.Atoi(arg)
		fmt.Fprintln(os.Stderr, strings.Repeat("z", n))
		return sdk.Scored(1, "printed"), true
	case "forkmany", "children-alloc", "sockflood", "uid", "panic", "panic-goroutine", "alloc-threads":
		return treeProbe(cmd, arg)
	case "rlimit":
		// The plugin's own rlimits, as /proc shows them.
		b, err := os.ReadFile("/proc/self/limits")
		return outcome(string(b), err)
	}
	return sdk.Result{}, false
}

// startChild starts the test binary as a child that sleeps (mode "child") or leaves the
// plugin's session first ("child-setsid"), with the plugin's marker; with stdio, it holds
// the plugin's raw stdout and stderr.
func startChild(mode string, stdio bool) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, pluginArg, mode, os.Args[3])
	if stdio {
		cmd.Stdout, cmd.Stderr = os.NewFile(1, "stdout"), os.NewFile(2, "stderr")
	}
	return cmd.Start()
}

func runTestChild(mode string) {
	if mib, ok := strings.CutPrefix(mode, "child-alloc-"); ok {
		childAlloc(mib)
		return
	}
	if mode == "child-setsid" {
		_, _ = syscall.Setsid()
	}
	time.Sleep(time.Hour)
}

// confinedOptions are testOptions that require bubblewrap. The test fails when bubblewrap
// is not installed, and is skipped, saying why, when it is but this machine lets it create
// no namespace (some containers); TestDegradedVisible covers that mode.
func confinedOptions(t testing.TB) Options {
	t.Helper()
	c := probeConfinement(ConfineAuto, "", false)
	if c.bwrap == "" {
		if _, err := exec.LookPath("bwrap"); err != nil {
			t.Fatalf("the sandbox tests need bubblewrap: apt-get install bubblewrap (%s)", c.why)
		}
		t.Skipf("bubblewrap cannot confine plugins on this machine: %s", c.why)
	}
	opts := testOptions(t)
	opts.Confine = ConfineRequired
	return opts
}

func limitsOnlyOptions(t testing.TB) Options {
	opts := testOptions(t)
	opts.Confine = ConfineLimitsOnly
	return opts
}

// forModes runs f confined and with limits only.
func forModes(t *testing.T, f func(t *testing.T, opts Options, confined bool)) {
	t.Run("confined", func(t *testing.T) { f(t, confinedOptions(t), true) })
	t.Run("limits-only", func(t *testing.T) { f(t, limitsOnlyOptions(t), false) })
}

func score(t testing.TB, b host.Backend, input string) (sdk.Result, error) {
	t.Helper()
	return b.Score(context.Background(), &sdk.Run{Input: input, Output: "x"}, nil)
}

func mustScore(t testing.TB, b host.Backend, input string) string {
	t.Helper()
	res, err := score(t, b, input)
	if err != nil {
		t.Fatalf("%s: %v", input, err)
	}
	return res.Reason
}

// bounded fails t when f has not returned within limit: it detects a hang, it does not
// measure speed (limit is many times what f needs).
func bounded[T any](t testing.TB, limit time.Duration, what string, f func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(limit):
		t.Fatalf("%s: still waiting after %s: the host hangs", what, limit)
		panic("unreachable")
	}
}

// TestSandboxEnv: the plugin's environment is its manifest's env and the host's few
// variables; the host's (its API key included) never reaches it.
func TestSandboxEnv(t *testing.T) {
	forModes(t, func(t *testing.T, opts Options, _ bool) {
		t.Setenv("OPENAI_API_KEY", "sk-host-secret")
		t.Setenv("SCOREKIT_HOST_ONLY", "host")
		m := testManifest(t, "serve")
		m.Env = map[string]string{"SCOREKIT_TEST_GREETING": "hello"}
		b := open(t, loadProbesWith(t, m, opts)["probe"], "")
		env := strings.Split(mustScore(t, b, "env"), "\n")
		t.Run("allowed", func(t *testing.T) {
			if !slices.Contains(env, "SCOREKIT_TEST_GREETING=hello") {
				t.Errorf("the manifest's env did not reach the plugin: %q", env)
			}
		})
		t.Run("denied", func(t *testing.T) {
			for _, kv := range env {
				name, _, _ := strings.Cut(kv, "=")
				if strings.Contains(kv, "sk-host-secret") || name == "SCOREKIT_HOST_ONLY" {
					t.Errorf("the host's environment reached the plugin: %s", kv)
				}
				// bubblewrap sets PWD to the folder it starts the plugin in (--chdir).
				known := name == "SCOREKIT_TEST_GREETING" || name == "SCOREKIT_PLUGIN" || strings.HasPrefix(name, "PLUGIN_") || name == "PWD"
				if _, ok := baseEnv[name]; !ok && !known {
					t.Errorf("unexpected variable in the plugin's environment: %s", kv)
				}
			}
		})
	})
}

// TestManifestEnv: a manifest may not hand its plugin a credential.
func TestManifestEnv(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OPENAI_API_KEY": "sk-1"}, "env OPENAI_API_KEY: a plugin never gets a credential"},
		{map[string]string{"GITHUB_TOKEN": "x"}, "env GITHUB_TOKEN"},
		{map[string]string{"PGPASSWORD": "x"}, "env PGPASSWORD"},
		{map[string]string{"PLUGIN_UNIX_SOCKET_DIR": "/"}, "the host sets go-plugin's variables"},
		{map[string]string{"NODE_OPTIONS": "--max-old-space-size=64", "TZ": "UTC"}, ""},
	} {
		m := testManifest(t, "serve")
		m.Env = tc.env
		ps, err := Load(context.Background(), m, testOptions(t))
		for _, p := range ps {
			p.Close(context.Background())
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("env %v: %v", tc.env, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("env %v: err = %v, want it to say %q", tc.env, err, tc.want)
		}
	}
}

// TestSandboxNetwork: a confined plugin reaches no socket of the host's (its own calls
// work: they come over the host's Unix socket); with limits only, it can, and says so.
func TestSandboxNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	forModes(t, func(t *testing.T, opts Options, confined bool) {
		accepted.Store(0)
		p := loadProbesWith(t, testManifest(t, "serve"), opts)["probe"]
		b := open(t, p, "")
		if got := mustScore(t, b, "q"); got != "x" {
			t.Fatalf("a plain call: reason %q, want x", got)
		}
		got := mustScore(t, b, "dial:"+ln.Addr().String())
		if confined {
			if got == "connected" || accepted.Load() != 0 {
				t.Fatalf("a confined plugin connected to the host's %s (%s)", ln.Addr(), got)
			}
			t.Logf("denied: %s", got)
			return
		}
		if got != "connected" || accepted.Load() != 1 {
			t.Fatalf("with limits only the plugin reaches the network (what Sandbox() says): got %q", got)
		}
		if !strings.Contains(p.(*scorerPlugin).Sandbox().Degraded, "network") {
			t.Errorf("Sandbox() = %+v, want it to say the network is reachable", p.(*scorerPlugin).Sandbox())
		}
	})
}

// TestSandboxFilesystem: a confined plugin writes only to its private /tmp, and reads only
// its artifact's folder, the system's libraries and its manifest's read paths.
func TestSandboxFilesystem(t *testing.T) {
	opts := confinedOptions(t)
	hostDir := t.TempDir()
	secret := filepath.Join(hostDir, "secret")
	if err := os.WriteFile(secret, []byte("host secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	shared := t.TempDir()
	if err := os.WriteFile(filepath.Join(shared, "data.txt"), []byte("declared data"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := testManifest(t, "serve")
	m.Read = []string{shared}
	b := open(t, loadProbesWith(t, m, opts)["probe"], "")
	private := "/tmp/scorekit-private-" + strconv.Itoa(os.Getpid())
	t.Cleanup(func() { os.Remove(private) })

	t.Run("allowed", func(t *testing.T) {
		if got := mustScore(t, b, "writeread:"+private); got != "read back: kept" {
			t.Errorf("private /tmp: %s", got)
		}
		if _, err := os.Stat(private); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the plugin's private /tmp wrote to the host's /tmp: %v", err)
		}
		if got := mustScore(t, b, "read:"+filepath.Join(shared, "data.txt")); got != "read: declared data" {
			t.Errorf("a manifest read path: %s", got)
		}
		if got := mustScore(t, b, "read:"+m.Artifact); !strings.HasPrefix(got, "read: ") {
			t.Errorf("its own artifact: %.80s", got)
		}
	})
	t.Run("denied", func(t *testing.T) {
		for _, in := range []string{
			"write:" + filepath.Join(hostDir, "dropped"),            // a host folder
			"write:" + filepath.Join(filepath.Dir(m.Artifact), "x"), // its own folder (read-only)
			"write:/usr/scorekit-dropped",
			"read:" + secret,
			"read:/etc/passwd",
			"read:/etc/hostname",
		} {
			if got := mustScore(t, b, in); !strings.HasPrefix(got, "error: ") {
				t.Errorf("%s: %.100s", in, got)
			}
		}
		for _, f := range []string{filepath.Join(hostDir, "dropped"), filepath.Join(filepath.Dir(m.Artifact), "x"), "/usr/scorekit-dropped"} {
			if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s exists on the host after the plugin tried to write it", f)
			}
		}
	})
}

// TestSandboxChildren: what a plugin starts dies with it, whether the plugin goes on,
// exits mid-call, or (confined) its child leaves the plugin's session.
func TestSandboxChildren(t *testing.T) {
	forModes(t, func(t *testing.T, opts Options, confined bool) {
		inputs := []string{"fork", "fork-exit"}
		if confined {
			inputs = append(inputs, "fork-setsid")
		}
		for _, in := range inputs {
			t.Run(in, func(t *testing.T) {
				m := testManifest(t, "serve")
				p := loadProbesWith(t, m, opts)["probe"]
				b, err := p.Open(context.Background(), host.Tenant{Name: "t"}, nil)
				if err != nil {
					t.Fatal(err)
				}
				_, err = score(t, b, in)
				if in == "fork-exit" {
					if codeOf(err) != sdk.CodeUnavailable {
						t.Fatalf("a plugin that exits mid-call: err = %v, want %s", err, sdk.CodeUnavailable)
					}
					if got := mustScore(t, b, "q"); got != "x" {
						t.Errorf("the call after: %q", got)
					}
				} else if err != nil {
					t.Fatal(err)
				}
				bounded(t, 30*time.Second, "Close", func() error { return b.Close(context.Background()) })
				// noLeftovers checks the children are gone too.
			})
		}
	})
}

// TestStdioChild: a plugin whose child holds its stdout and stderr, then hangs, is killed
// at the call's deadline: the call ends then, the pool's one slot comes back and the scorer
// works afterwards, and Close does not wait for the child.
func TestStdioChild(t *testing.T) {
	forModes(t, func(t *testing.T, opts Options, _ bool) {
		m := testManifest(t, "serve")
		m.Limits.PoolSize = 1
		p := loadProbesWith(t, m, opts)["probe"]
		b, err := p.Open(context.Background(), host.Tenant{Name: "t"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err = bounded(t, 30*time.Second, "a call past its deadline", func() error {
			_, err := b.Score(ctx, &sdk.Run{Input: "stdio-hang"}, nil)
			return err
		})
		if codeOf(err) != sdk.CodeTimeout {
			t.Fatalf("err = %v, want %s", err, sdk.CodeTimeout)
		}
		if got := bounded(t, 30*time.Second, "the call after", func() string { return mustScore(t, b, "q") }); got != "x" {
			t.Errorf("the call after: %q", got)
		}
		bounded(t, 30*time.Second, "Close", func() error { return b.Close(context.Background()) })
	})
}

// TestNeverHandshakes: a plugin that never completes the handshake fails Load within the
// start timeout, also when its child holds its stdout and stderr; nothing is left behind.
func TestNeverHandshakes(t *testing.T) {
	forModes(t, func(t *testing.T, opts Options, _ bool) {
		for _, mode := range []string{"silent", "silent-child"} {
			t.Run(mode, func(t *testing.T) {
				opts.StartTimeout = time.Second
				m := testManifest(t, mode)
				err := bounded(t, 30*time.Second, "Load", func() error {
					ps, err := Load(context.Background(), m, opts)
					for _, p := range ps {
						p.Close(context.Background())
					}
					return err
				})
				if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), "start timeout") {
					t.Fatalf("err = %v, want ErrStart naming the start timeout", err)
				}
			})
		}
	})
}

// TestMemoryLimit: limits.memory_mib caps a plugin's memory; running out is
// limit_exceeded, the process restarts, and an allocation under the cap works.
func TestMemoryLimit(t *testing.T) {
	forModes(t, func(t *testing.T, opts Options, _ bool) {
		m := testManifest(t, "serve")
		m.Limits.MemoryMiB = 200
		b := open(t, loadProbesWith(t, m, opts)["probe"], "")
		t.Run("allowed", func(t *testing.T) {
			if got := mustScore(t, b, "alloc:32"); got != "allocated 32 MiB" {
				t.Errorf("32 MiB under a 200 MiB cap: %s", got)
			}
		})
		t.Run("denied", func(t *testing.T) {
			err := bounded(t, 60*time.Second, "alloc", func() error { _, err := score(t, b, "alloc"); return err })
			if codeOf(err) != sdk.CodeLimitExceeded || !strings.Contains(err.Error(), "out of memory") || !strings.Contains(err.Error(), "memory_mib is 200") {
				t.Fatalf("err = %v, want limit_exceeded naming memory_mib", err)
			}
			if got := mustScore(t, b, "q"); got != "x" {
				t.Errorf("the call after: %q", got)
			}
		})
	})
}

// TestCPULimit: limits.cpu_seconds caps a plugin's CPU time; a plugin that spins past it
// is killed and the call is limit_exceeded.
func TestCPULimit(t *testing.T) {
	forModes(t, func(t *testing.T, opts Options, _ bool) {
		m := testManifest(t, "serve")
		m.Limits.CPUSeconds = 1
		// On a busy machine a second of CPU may take many seconds of wall time: the
		// deadline must not end the call first.
		m.Limits.TimeoutMS = 120_000
		opts.Limits.TimeoutMS = 120_000
		b := open(t, loadProbesWith(t, m, opts)["probe"], "")
		if got := mustScore(t, b, "q"); got != "x" {
			t.Fatalf("a plain call: %q", got)
		}
		err := bounded(t, 150*time.Second, "spin", func() error { _, err := score(t, b, "spin"); return err })
		if codeOf(err) != sdk.CodeLimitExceeded || !strings.Contains(err.Error(), "cpu_seconds is 1") {
			t.Fatalf("err = %v, want limit_exceeded naming cpu_seconds", err)
		}
		if got := mustScore(t, b, "q"); got != "x" {
			t.Errorf("the call after: %q", got)
		}
	})
}

// TestMessageLimits: a result over max_result_bytes (50 MB) is limit_exceeded and never
// buffered whole; one under it passes. A run over gRPC's default 4 MiB reaches the plugin;
// one over the host's MaxCallBytes does not.
func TestMessageLimits(t *testing.T) {
	forTransports(t, func(t *testing.T, opts Options) {
		opts.MaxCallBytes = 8 << 20
		b := open(t, loadProbesWith(t, testManifest(t, "serve"), opts)["probe"], "")
		t.Run("result allowed", func(t *testing.T) {
			if got := mustScore(t, b, "big:102400"); len(got) != 102400 {
				t.Errorf("a 100 KB result: %d bytes", len(got))
			}
		})
		t.Run("result denied", func(t *testing.T) {
			_, err := score(t, b, "big:52428800")
			if codeOf(err) != sdk.CodeLimitExceeded || !strings.Contains(err.Error(), "max_result_bytes") {
				t.Fatalf("a 50 MB result: err = %v, want limit_exceeded naming max_result_bytes", err)
			}
			if got := mustScore(t, b, "q"); got != "x" {
				t.Errorf("the call after: %q", got)
			}
		})
		t.Run("run allowed", func(t *testing.T) {
			res, err := b.Score(context.Background(), &sdk.Run{Input: "len", Output: strings.Repeat("y", 5<<20)}, nil)
			if err != nil || res.Reason != strconv.Itoa(5<<20) {
				t.Fatalf("a 5 MiB run: %v (the plugin saw %s bytes)", err, res.Reason)
			}
		})
		t.Run("run denied", func(t *testing.T) {
			_, err := b.Score(context.Background(), &sdk.Run{Input: "q", Output: strings.Repeat("y", 9<<20)}, nil)
			if codeOf(err) != sdk.CodeLimitExceeded || !strings.Contains(err.Error(), "MaxCallBytes") {
				t.Fatalf("a 9 MiB run: err = %v, want limit_exceeded naming MaxCallBytes", err)
			}
		})
	})
}

// TestCeilings: a manifest may ask for less than the host allows, never more; a tenant's
// limits lower what its processes run under (read back from the process's own
// /proc/self/limits).
func TestCeilings(t *testing.T) {
	t.Run("denied", func(t *testing.T) {
		m := testManifest(t, "serve")
		m.Limits.MemoryMiB = 4096
		_, err := Load(context.Background(), m, testOptions(t))
		if !errors.Is(err, host.ErrOverCeiling) || !strings.Contains(err.Error(), "limits.memory_mib is 4096, the host allows at most 512") {
			t.Fatalf("err = %v, want the memory ceiling named", err)
		}
		p := loadProbes(t, testManifest(t, "serve"))["probe"]
		if _, err := p.Open(context.Background(), host.Tenant{Name: "tiny", Limits: host.Limits{MemoryMiB: 4}}, nil); !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), "limits.memory_mib is 4 MiB") {
			t.Errorf("a tenant's memory too small to start the plugin: err = %v, want ErrStart naming memory_mib", err)
		}
		opts := testOptions(t)
		opts.Limits.PoolSize = 2
		m = testManifest(t, "serve")
		m.Limits.PoolSize = 3
		if _, err := Load(context.Background(), m, opts); !errors.Is(err, host.ErrOverCeiling) || !strings.Contains(err.Error(), "limits.pool_size is 3") {
			t.Fatalf("err = %v, want the pool ceiling named", err)
		}
	})
	t.Run("allowed", func(t *testing.T) {
		m := testManifest(t, "serve")
		m.Limits.MemoryMiB = 256
		p := loadProbes(t, m)["probe"]
		if got := p.(*scorerPlugin).Limits(); got.MemoryMiB != 256 || got.MaxResultBytes != DefaultLimits().MaxResultBytes {
			t.Errorf("limits %+v, want memory 256 and the default ceilings elsewhere", got)
		}
		for _, tc := range []struct {
			tenant host.Tenant
			want   string
		}{
			{host.Tenant{Name: "roomy"}, strconv.Itoa(256 << 20)},
			// The test binary's data segment is ~120 MiB at rest (heap arenas, thread stacks).
			{host.Tenant{Name: "small", Limits: host.Limits{MemoryMiB: 192, CPUSeconds: 30}}, strconv.Itoa(192 << 20)},
		} {
			b, err := p.Open(context.Background(), tc.tenant, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close(context.Background())
			if got := memoryLimit(t, b); !strings.Contains(got, tc.want) {
				t.Errorf("tenant %s: %q, want %s bytes", tc.tenant.Name, got, tc.want)
			}
			if tc.tenant.Limits.CPUSeconds > 0 {
				if got := limitLine(t, mustScore(t, b, "rlimit"), "Max cpu time"); !strings.Contains(got, " 30 ") {
					t.Errorf("tenant %s: %q, want 30 s", tc.tenant.Name, got)
				}
			}
		}
	})
}

// memoryLimit is the memory limit b's process runs under: its tree's memory cgroup's, or
// without one, its RLIMIT_DATA.
func memoryLimit(t testing.TB, b host.Backend) string {
	t.Helper()
	limits := mustScore(t, b, "rlimit")
	p := b.(*backend).pool
	if !p.a.conf.memoryByCgroup() {
		return limitLine(t, limits, "Max data size")
	}
	if got := limitLine(t, limits, "Max data size"); !strings.Contains(got, "unlimited") {
		t.Errorf("RLIMIT_DATA is set (%q) although the memory cgroup caps the tree", got)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range p.liveProcs() {
		b, err := os.ReadFile(pr.r.cg.MemoryLimitFile())
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	t.Fatal("no live process")
	return ""
}

func limitLine(t testing.TB, limits, name string) string {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(limits))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), name) {
			return sc.Text()
		}
	}
	t.Fatalf("no %q in the plugin's limits:\n%s", name, limits)
	return ""
}

// TestOneProcessPerArtifact: the scorers of one artifact share its processes, per tenant;
// tenants never share one.
func TestOneProcessPerArtifact(t *testing.T) {
	m := testManifest(t, "serve")
	ps := loadProbes(t, m)
	perTenant := map[string][]int{}
	for _, tenant := range []string{"a", "b"} {
		var backends []host.Backend
		for _, name := range []string{"probe", "sneaky"} {
			b, err := ps[name].Open(context.Background(), host.Tenant{Name: tenant}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close(context.Background()) })
			backends = append(backends, b)
		}
		for range 3 {
			for _, b := range backends {
				mustScore(t, b, "q")
			}
		}
		perTenant[tenant] = pids(backends[0])
		if got := pids(backends[1]); !slices.Equal(got, perTenant[tenant]) || len(got) != 1 {
			t.Errorf("tenant %s: probe runs in %v, sneaky in %v; want both in the same one process", tenant, perTenant[tenant], got)
		}
	}
	if slices.Contains(perTenant["b"], perTenant["a"][0]) {
		t.Errorf("tenants a and b share process %v", perTenant["a"])
	}
	// UsageOf counts the artifact's processes once, however many of its scorers are
	// passed, and as many as /proc shows.
	onProc := withArg(m.Args[2])
	u := UsageOf([]host.Plugin{ps["probe"], ps["sneaky"]})
	if one := UsageOf([]host.Plugin{ps["probe"]}); one.Processes != u.Processes {
		t.Errorf("UsageOf(probe) = %+v, UsageOf(probe, sneaky) = %+v: want the artifact counted once", one, u)
	}
	if u.Processes != len(onProc) || u.RSSBytes <= 0 {
		t.Errorf("UsageOf = %+v; /proc shows the processes %v", u, onProc)
	}
}

// TestHostDies: a host killed (SIGKILL) or terminated (SIGTERM) without closing its
// plugins takes them with it; confined, the children they started go too. The Node example
// dies with its host as well.
func TestHostDies(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	nodeDir := nodeManifest(t).Dir
	for _, mode := range []Confinement{ConfineRequired, ConfineLimitsOnly} {
		for _, plugin := range []string{"probes", "node"} {
			for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
				name := map[Confinement]string{ConfineRequired: "confined", ConfineLimitsOnly: "limits-only"}[mode]
				t.Run(fmt.Sprintf("%s/%s/%s", name, plugin, sig), func(t *testing.T) {
					if mode == ConfineRequired {
						confinedOptions(t)
					}
					mark := marker(t)
					noLeftovers(t, mark)
					args := []string{hostArg, string(mode), mark}
					if plugin == "node" {
						args = append(args, nodeDir)
					}
					hostDies(t, exec.Command(exe, args...), mark, sig, mode == ConfineLimitsOnly && plugin == "probes")
				})
			}
		}
	}
}

// hostDies starts the test host cmd, kills it with sig once its plugin serves, and waits
// for the plugin's processes (those carrying mark) to be gone. orphanOK: the plugin's
// child may survive (unconfined, only the plugin has a death signal; docs/SANDBOX.md).
func hostDies(t *testing.T, cmd *exec.Cmd, mark string, sig syscall.Signal, orphanOK bool) {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("test host: %q %v\n%s", line, err, stderr.String())
	}
	before := withArg(mark)
	if len(before) == 0 {
		t.Fatal("found no process of the plugin")
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if !orphanOK {
		return // noLeftovers checks every process carrying mark is gone
	}
	plugin := slices.DeleteFunc(before, func(pid int) bool { return !isServe(pid) })
	for range 200 {
		if plugin = slices.DeleteFunc(plugin, gone); len(plugin) == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(plugin) != 0 {
		t.Errorf("plugin %v outlived its host", plugin)
	}
	for _, pid := range withArg(mark) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// isServe reports whether pid is a probe plugin (not a child of one).
func isServe(pid int) bool {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return bytes.Contains(b, []byte("\x00serve\x00"))
}

// TestDegradedVisible: where bubblewrap cannot run, a plugin still loads, with limits only,
// and says so: a warning at load and Sandbox(); ConfineRequired refuses to load it.
func TestDegradedVisible(t *testing.T) {
	var logs testkit.SyncBuffer
	opts := Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Bwrap: "/nonexistent/bwrap"}
	p := loadProbesWith(t, testManifest(t, "serve"), opts)["probe"]
	sb := p.(*scorerPlugin).Sandbox()
	if sb.Confined || !strings.Contains(sb.Degraded, "bubblewrap is not installed") || !strings.Contains(sb.String(), "DEGRADED") {
		t.Errorf("Sandbox() = %+v", sb)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "DEGRADED") {
		t.Errorf("no warning at load; logs:\n%s", logs.String())
	}
	if got := mustScore(t, open(t, p, ""), "q"); got != "x" {
		t.Errorf("a call with limits only: %q", got)
	}
	opts.Confine = ConfineRequired
	if _, err := Load(context.Background(), testManifest(t, "serve"), opts); !errors.Is(err, ErrNotConfined) || !strings.Contains(err.Error(), "apt-get install bubblewrap") {
		t.Errorf("ConfineRequired without bubblewrap: err = %v, want ErrNotConfined saying how to install it", err)
	}
}

// TestOutputCap: what a plugin prints in a call reaches the host's log up to
// limits.max_output_bytes; the rest is dropped, with a warning.
func TestOutputCap(t *testing.T) {
	var logs testkit.SyncBuffer
	opts := Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	m := testManifest(t, "serve")
	m.Limits.MaxOutputBytes = 4096
	b := open(t, loadProbesWith(t, m, opts)["probe"], "")
	zs := func() int { return strings.Count(logs.String(), "z") }
	mustScore(t, b, "shout:100")
	for i := 0; i < 100 && zs() < 100; i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if zs() != 100 {
		t.Fatalf("allowed: %d of 100 bytes printed reached the log", zs())
	}
	mustScore(t, b, "shout:1000000")
	for i := 0; i < 100 && !strings.Contains(logs.String(), "max_output_bytes"); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	mustScore(t, b, "q") // a later call: the stream has been read past the big line
	if !strings.Contains(logs.String(), "over limits.max_output_bytes") {
		t.Errorf("denied: no warning about the dropped output")
	}
	if n := zs(); n > 100+4096 {
		t.Errorf("denied: %d bytes of a 1 MB print reached the log, limit 4096 per call", n-100)
	}
}

// TestReadPaths: a manifest's read paths are resolved against its folder, to absolute
// paths (bubblewrap needs them), and must exist.
func TestReadPaths(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	got, err := readPaths(host.Manifest{Dir: "plugins", Read: []string{"../nothing"}})
	if err == nil || !strings.Contains(err.Error(), `read "../nothing"`) {
		t.Fatalf("a missing path: %v %v", got, err)
	}
	got, err = readPaths(host.Manifest{Dir: "plugins", Read: []string{"../data"}})
	want, _ := filepath.EvalSymlinks(filepath.Join(dir, "data"))
	if err != nil || len(got) != 1 || got[0] != want {
		t.Fatalf("got %v %v, want [%s]", got, err, want)
	}
}
