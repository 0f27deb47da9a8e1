package process

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/internal/cgroup"
	"github.com/scorekit/scorekit/internal/pluginrpc"
	"github.com/scorekit/scorekit/sdk"
)

// The test binary doubles as the plugin under test: started with pluginArg it serves the
// probe scorers instead of running tests, as go-plugin's own tests do.
const pluginArg = "scorekit-test-plugin"

func TestMain(m *testing.M) {
	if len(os.Args) >= 3 && os.Args[1] == pluginArg {
		runTestPlugin(os.Args[2])
		return
	}
	if len(os.Args) >= 4 && os.Args[1] == hostArg {
		runTestHost(os.Args[2:])
		return
	}
	code := m.Run()
	if dir, err := buildDir(); err == nil {
		os.RemoveAll(dir)
	}
	// The cgroups of the test hosts that TestHostDies killed.
	cgroup.Find().RemoveStale()
	os.Exit(code)
}

// hostArg starts the test binary as a host: it loads a plugin under confinement mode
// (argv[2]) with marker (argv[3]) among its arguments, prints "ready" once the plugin
// serves, and waits to be killed. The plugin is the probes, which start a child, or with
// argv[4], the Node example in that folder.
const hostArg = "scorekit-test-host"

func runTestHost(args []string) {
	mode, marker := args[0], args[1]
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	m := host.Manifest{Name: "probes", Runtime: host.RuntimeProcess, Artifact: exe, Args: []string{pluginArg, "serve", marker}}
	run := sdk.Run{Input: "fork"}
	if len(args) > 2 {
		m = host.Manifest{Name: "node-scorer", Runtime: host.RuntimeProcess, Artifact: "scorer.js", Dir: args[2],
			Read: []string{"../../proto"}, Args: []string{marker}}
		run = sdk.Run{Output: "Paris", Expected: "Paris"}
	}
	if m.SHA256, err = fileSum(m.ArtifactPath()); err != nil {
		panic(err)
	}
	opts := Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Confine: Confinement(mode)}
	ps, err := Load(context.Background(), m, opts)
	if err != nil {
		panic(err)
	}
	b, err := ps[0].Open(context.Background(), host.Tenant{Name: "t"}, nil)
	if err != nil {
		panic(err)
	}
	if _, err := b.Score(context.Background(), &run, nil); err != nil {
		panic(err)
	}
	fmt.Println("ready")
	time.Sleep(time.Hour)
}

// marker returns the test binary's argument of a plugin in test t: each plugin gets its
// own, and so do its children and its sandbox's helpers (they carry the plugin's command
// line), so the test can find every process it caused in /proc.
func marker(t testing.TB) string {
	return fmt.Sprintf("scorekit-test-%d-%s-%d", os.Getpid(), strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), markers.Add(1))
}

var markers atomic.Int64

// noLeftovers fails t when a process carrying mark still exists after the test's
// cleanups (registered after this one) have run, and kills it so that it does not outlive
// the test either.
func noLeftovers(t testing.TB, mark string) {
	t.Cleanup(func() {
		var left []int
		for range 100 {
			if left = withArg(mark); len(left) == 0 {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		for _, pid := range left {
			cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			t.Errorf("process %d outlived the test: %s", pid, strings.ReplaceAll(string(cmd), "\x00", " "))
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

func runTestPlugin(mode string) {
	if mode == "child" || mode == "child-setsid" || strings.HasPrefix(mode, "child-alloc-") {
		runTestChild(mode)
		return
	}
	factories := []func() sdk.Scorer{
		func() sdk.Scorer { return &probe{name: "probe", caps: []sdk.Capability{sdk.CapJudge}} },
		func() sdk.Scorer { return &probe{name: "sneaky"} },
	}
	switch mode {
	case "serve":
		pluginrpc.Serve(factories, pluginrpc.ProtocolVersion)
	case "v99":
		pluginrpc.Serve(factories, 99)
	case "garbage":
		fmt.Println("hello from a program that is not a plugin")
		pluginrpc.Serve(factories, pluginrpc.ProtocolVersion)
	case "exit":
		fmt.Fprintln(os.Stderr, "test plugin: giving up at start")
		os.Exit(3)
	case "silent":
		// Never completes the handshake; the host's start timeout must end it.
		time.Sleep(time.Hour)
	case "silent-child":
		// Never completes the handshake, and leaves a child holding its stdout and stderr.
		startChild("child", true)
		time.Sleep(time.Hour)
	default:
		fmt.Fprintf(os.Stderr, "test plugin: unknown mode %q\n", mode)
		os.Exit(2)
	}
}

// probe behaves as its run's input says: crash, hang, print, judge; anything else scores
// the output's length in [0, 1].
type probe struct {
	name string
	caps []sdk.Capability
	tag  string
}

func (p *probe) Info() sdk.Info {
	return sdk.Info{Name: p.name, Version: "0.0.1", ABIVersion: sdk.ABIVersion, Description: "test probe",
		Range: sdk.Unit, Threshold: 0.5, Capabilities: p.caps}
}

func (p *probe) Configure(config json.RawMessage) error {
	var c struct {
		Tag  string `json:"tag"`
		Fail bool   `json:"fail"`
	}
	if len(config) > 0 {
		if err := json.Unmarshal(config, &c); err != nil {
			return err
		}
	}
	if c.Fail {
		return errors.New("config field \"fail\" is true; set it to false")
	}
	p.tag = c.Tag
	return nil
}

func (p *probe) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	if res, ok := hostile(call.Run); ok {
		return res, nil
	}
	switch call.Run.Input {
	case "crash":
		os.Exit(7)
	case "hang":
		time.Sleep(time.Hour)
	case "print":
		fmt.Println("stray line on stdout")
		fmt.Fprintln(os.Stderr, "stray line on stderr")
	case "judge":
		if call.Judge == nil {
			return sdk.NoJudge(p.name), nil
		}
		resp, err := sdk.Ask(ctx, call.Judge, "", call.Run.Output)
		if err != nil {
			return sdk.Result{}, err
		}
		return sdk.Scored(1, resp.Content), nil
	case "junk":
		return sdk.Result{Status: "maybe"}, nil
	}
	n := float64(len(call.Run.Output))
	res := sdk.Scored(n/(n+10), p.tag+call.Run.Output)
	res.Dimensions = map[string]float64{"length": n / (n + 10)}
	res.Flags = []string{"probe"}
	return res, nil
}

var exeSum = sync.OnceValues(func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return fileSum(exe)
})

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// testManifest describes the test binary as a plugin serving mode. The test fails if a
// process of this plugin outlives it.
func testManifest(t testing.TB, mode string) host.Manifest {
	t.Helper()
	mark := marker(t)
	noLeftovers(t, mark)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sum, err := exeSum()
	if err != nil {
		t.Fatal(err)
	}
	return host.Manifest{Name: "probes", Runtime: host.RuntimeProcess, Artifact: exe, SHA256: sum,
		Args: []string{pluginArg, mode, mark}, Dir: filepath.Dir(exe)}
}

func testOptions(t testing.TB) Options {
	return Options{Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// loadProbes loads the test plugin and returns its scorers by name; they are closed at
// the end of the test.
func loadProbes(t testing.TB, m host.Manifest) map[string]host.Plugin {
	t.Helper()
	return loadProbesWith(t, m, testOptions(t))
}

func loadProbesWith(t testing.TB, m host.Manifest, opts Options) map[string]host.Plugin {
	t.Helper()
	ps, err := Load(context.Background(), m, opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	out := map[string]host.Plugin{}
	for _, p := range ps {
		out[p.Info().Name] = p
		t.Cleanup(func() { p.Close(context.Background()) })
	}
	return out
}

func open(t testing.TB, p host.Plugin, config string) host.Backend {
	t.Helper()
	b, err := p.Open(context.Background(), host.Tenant{Name: "tenant-a"}, json.RawMessage(config))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	return b
}

// pids are the process groups of the processes serving b (its tenant's pool).
func pids(b host.Backend) []int { return b.(*backend).pool.pids() }

// transports are the two ways a call travels: the Session stream (judge requests on the
// stream) and unary calls (judge requests through the GRPCBroker).
var transports = []struct {
	name  string
	unary bool
}{{"session", false}, {"unary", true}}

func forTransports(t *testing.T, f func(t *testing.T, opts Options)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			opts := testOptions(t)
			opts.Unary = tr.unary
			f(t, opts)
		})
	}
}

// gone reports whether the process pid has exited: no process has the pid any more, or
// (Linux) it is a zombie waiting for a parent that is not us.
func gone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// waitGone waits up to 10s for pid to be gone.
func waitGone(pid int) bool {
	for range 200 {
		if gone(pid) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

func codeOf(err error) string {
	var e *sdk.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestLoad(t *testing.T) {
	ps := loadProbes(t, testManifest(t, "serve"))
	for _, name := range []string{"probe", "sneaky"} {
		p, ok := ps[name]
		if !ok {
			t.Fatalf("scorer %q not loaded; got %v", name, ps)
		}
		if p.Runtime() != host.RuntimeProcess || p.Info().ABIVersion != sdk.ABIVersion {
			t.Errorf("%s: runtime %q abi %d", name, p.Runtime(), p.Info().ABIVersion)
		}
	}
	probe, sneaky := ps["probe"].Info(), ps["sneaky"].Info()
	if !probe.Has(sdk.CapJudge) || sneaky.Has(sdk.CapJudge) {
		t.Errorf("capabilities not carried over: probe %v sneaky %v", probe.Capabilities, sneaky.Capabilities)
	}
}

func TestScore(t *testing.T) {
	ps := loadProbes(t, testManifest(t, "serve"))
	b := open(t, ps["probe"], `{"tag":"t:"}`)
	tests := []struct {
		name       string
		run        sdk.Run
		wantStatus sdk.Status
		wantReason string
		wantCode   string
	}{
		{name: "scored", run: sdk.Run{Input: "q", Output: "0123456789"}, wantStatus: sdk.StatusScored, wantReason: "t:0123456789"},
		{name: "stray output after the handshake", run: sdk.Run{Input: "print", Output: "x"}, wantStatus: sdk.StatusScored, wantReason: "t:x"},
		{name: "no judge given", run: sdk.Run{Input: "judge", Output: "x"}, wantStatus: sdk.StatusSkipped},
		{name: "junk result", run: sdk.Run{Input: "junk"}, wantCode: sdk.CodeInvalidResult},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := b.Score(context.Background(), &tt.run, nil)
			if tt.wantCode != "" {
				if codeOf(err) != tt.wantCode {
					t.Fatalf("err = %v, want code %s", err, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatalf("Score: %v", err)
			}
			if res.Status != tt.wantStatus || (tt.wantReason != "" && res.Reason != tt.wantReason) {
				t.Errorf("got %s %q, want %s %q", res.Status, res.Reason, tt.wantStatus, tt.wantReason)
			}
		})
	}
}

func TestConfigRefused(t *testing.T) {
	ps := loadProbes(t, testManifest(t, "serve"))
	_, err := ps["probe"].Open(context.Background(), host.Tenant{Name: "tenant-a"}, json.RawMessage(`{"fail":true}`))
	if codeOf(err) != sdk.CodeInvalidConfig {
		t.Fatalf("Open with a refused config: err = %v, want code %s", err, sdk.CodeInvalidConfig)
	}
}

// TestCrashMidCall: the call that crashed is failed, its process is gone, the next call
// runs in a fresh process.
func TestCrashMidCall(t *testing.T) { forTransports(t, testCrashMidCall) }

func testCrashMidCall(t *testing.T, opts Options) {
	ps := loadProbesWith(t, testManifest(t, "serve"), opts)
	b := open(t, ps["probe"], "")
	before := pids(b)
	_, err := b.Score(context.Background(), &sdk.Run{Input: "crash"}, nil)
	if codeOf(err) != sdk.CodeUnavailable {
		t.Fatalf("crash: err = %v, want code %s", err, sdk.CodeUnavailable)
	}
	for _, pid := range before {
		if !gone(pid) {
			t.Errorf("crashed process %d still exists", pid)
		}
	}
	res, err := b.Score(context.Background(), &sdk.Run{Input: "q", Output: "after"}, nil)
	if err != nil || res.Status != sdk.StatusScored {
		t.Fatalf("call after the crash: %v %+v", err, res)
	}
	if after := pids(b); len(after) != 1 || after[0] == before[0] {
		t.Errorf("pids before %v, after %v: want one fresh process", before, after)
	}
}

// TestHang: a plugin that ignores its deadline is killed at the deadline.
func TestHang(t *testing.T) { forTransports(t, testHang) }

func testHang(t *testing.T, opts Options) {
	for _, tc := range []struct {
		name  string
		limit int
		ctx   time.Duration
	}{
		{name: "host deadline", ctx: 500 * time.Millisecond},
		{name: "manifest timeout_ms", limit: 1000, ctx: time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testManifest(t, "serve")
			m.Limits.TimeoutMS = tc.limit
			ps := loadProbesWith(t, m, opts)
			b := open(t, ps["probe"], "")
			before := pids(b)
			ctx, cancel := context.WithTimeout(context.Background(), tc.ctx)
			defer cancel()
			_, err := b.Score(ctx, &sdk.Run{Input: "hang"}, nil)
			if codeOf(err) != sdk.CodeTimeout {
				t.Fatalf("hang: err = %v, want code %s", err, sdk.CodeTimeout)
			}
			// The call returns at its deadline; the group was sent SIGKILL then, and the
			// process is gone once the kernel has delivered it.
			for _, pid := range before {
				if !waitGone(pid) {
					t.Errorf("hung process %d still exists after the deadline", pid)
				}
			}
			if tc.limit > 0 {
				// The next call runs under the same limit, and a start may take longer
				// than that on a busy machine: start its process outside the call.
				pool := b.(*backend).pool
				pr, err := pool.acquire(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				pool.release(pr)
			}
			if res, err := b.Score(context.Background(), &sdk.Run{Input: "q", Output: "ok"}, nil); err != nil || res.Status != sdk.StatusScored {
				t.Fatalf("call after the hang: %v %+v", err, res)
			}
		})
	}
}

func TestStartFailures(t *testing.T) {
	tests := []struct {
		name     string
		manifest func(t *testing.T) host.Manifest
		wantErr  error
		wantText []string
	}{
		{
			name: "wrong checksum",
			manifest: func(t *testing.T) host.Manifest {
				m := testManifest(t, "serve")
				m.SHA256 = "00000000000000000000000000000000000000000000000000000000000000ff"
				return m
			},
			wantErr:  host.ErrHashMismatch,
			wantText: []string{"00000000000000000000000000000000000000000000000000000000000000ff"},
		},
		{
			name:     "wrong handshake version",
			manifest: func(t *testing.T) host.Manifest { return testManifest(t, "v99") },
			wantErr:  ErrStart,
			wantText: []string{"Plugin version: 99", "protocol v1"},
		},
		{
			name:     "garbage on stdout",
			manifest: func(t *testing.T) host.Manifest { return testManifest(t, "garbage") },
			wantErr:  ErrStart,
			wantText: []string{"hello from a program that is not a plugin", "handshake line"},
		},
		{
			name:     "exits at start",
			manifest: func(t *testing.T) host.Manifest { return testManifest(t, "exit") },
			wantErr:  ErrStart,
			wantText: []string{"exited at start"},
		},
		{
			name:     "no handshake within the start timeout",
			manifest: func(t *testing.T) host.Manifest { return testManifest(t, "silent") },
			wantErr:  ErrStart,
			wantText: []string{"start timeout"},
		},
		{
			name: "not a process manifest",
			manifest: func(t *testing.T) host.Manifest {
				m := testManifest(t, "serve")
				m.Runtime = host.RuntimeWASM
				return m
			},
			wantText: []string{`want "process"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions(t)
			if tt.name == "no handshake within the start timeout" {
				opts.StartTimeout = 500 * time.Millisecond
			}
			_, err := Load(context.Background(), tt.manifest(t), opts)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			for _, s := range tt.wantText {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("err = %q, want it to mention %q", err, s)
				}
			}
		})
	}
}

// TestArtifactSwapped: go-plugin's SecureConfig refuses an executable replaced after Load.
func TestArtifactSwapped(t *testing.T) {
	m := testManifest(t, "serve")
	exe := filepath.Join(t.TempDir(), "probes")
	b, err := os.ReadFile(m.Artifact)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	m.Artifact, m.Dir = exe, filepath.Dir(exe)
	ps := loadProbes(t, m)
	if err := os.WriteFile(exe, append(b, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = ps["probe"].Open(context.Background(), host.Tenant{Name: "tenant-a"}, nil)
	if !errors.Is(err, host.ErrHashMismatch) {
		t.Fatalf("Open after the artifact changed: err = %v, want %v", err, host.ErrHashMismatch)
	}
}

type tenantKey struct{}

// fakeJudge answers every prompt with "verdict: PROMPT" and records the tenant it saw.
type fakeJudge struct {
	mu      sync.Mutex
	tenants []any
}

func (j *fakeJudge) Complete(ctx context.Context, reqs []sdk.CompletionRequest) ([]sdk.CompletionResponse, error) {
	j.mu.Lock()
	j.tenants = append(j.tenants, ctx.Value(tenantKey{}))
	j.mu.Unlock()
	out := make([]sdk.CompletionResponse, len(reqs))
	for i, r := range reqs {
		out[i] = sdk.CompletionResponse{Content: "verdict: " + r.Messages[len(r.Messages)-1].Content}
	}
	return out, nil
}

func (j *fakeJudge) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return nil, errors.New("not used")
}

// TestJudge is an allowed/denied pair: the scorer that declared the judge reaches the
// host's judge (with the call's context); the one that did not is denied, and the host's
// judge is never called for it.
func TestJudge(t *testing.T) { forTransports(t, testJudge) }

func testJudge(t *testing.T, opts Options) {
	ps := loadProbesWith(t, testManifest(t, "serve"), opts)
	ctx := context.WithValue(context.Background(), tenantKey{}, "tenant-a")

	t.Run("allowed", func(t *testing.T) {
		j := &fakeJudge{}
		b := open(t, ps["probe"], "")
		for i := range 3 {
			out := fmt.Sprint("answer ", i)
			res, err := b.Score(ctx, &sdk.Run{Input: "judge", Output: out}, j)
			if err != nil || res.Reason != "verdict: "+out {
				t.Fatalf("call %d: %v %+v", i, err, res)
			}
		}
		if len(j.tenants) != 3 || j.tenants[0] != "tenant-a" {
			t.Errorf("judge saw tenants %v, want tenant-a three times", j.tenants)
		}
	})
	t.Run("denied", func(t *testing.T) {
		j := &fakeJudge{}
		b := open(t, ps["sneaky"], "")
		_, err := b.Score(ctx, &sdk.Run{Input: "judge", Output: "x"}, j)
		if codeOf(err) != sdk.CodeJudgeError || !strings.Contains(err.Error(), `did not declare the "judge" capability`) {
			t.Fatalf("err = %v, want a judge_error denial naming the capability", err)
		}
		if len(j.tenants) != 0 {
			t.Errorf("the host's judge was called %d times for a scorer that did not declare it", len(j.tenants))
		}
	})
}

// TestCloseStopsProcesses: closing the plugin leaves no process behind.
func TestCloseStopsProcesses(t *testing.T) {
	ps, err := Load(context.Background(), testManifest(t, "serve"), testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	var all []int
	for _, p := range ps {
		for _, tenant := range []string{"a", "b"} {
			b, err := p.Open(context.Background(), host.Tenant{Name: tenant}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.Score(context.Background(), &sdk.Run{Input: "q", Output: "x"}, nil); err != nil {
				t.Fatal(err)
			}
			all = append(all, pids(b)...)
		}
	}
	if len(all) != 4 {
		t.Fatalf("want 4 processes (2 scorers x 2 tenants), got pids %v", all)
	}
	for _, pid := range all {
		if gone(pid) {
			t.Fatalf("process %d gone before Close", pid)
		}
	}
	for _, p := range ps {
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for _, pid := range all {
		if !gone(pid) {
			t.Errorf("process %d outlived Close", pid)
		}
	}
}

// TestConcurrentCalls: concurrent calls on one backend each get a process of the pool, and
// the pool never grows past Limits.PoolSize; Limits.MaxCalls recycles processes.
func TestConcurrentCalls(t *testing.T) {
	m := testManifest(t, "serve")
	m.Limits.PoolSize = 2
	m.Limits.MaxCalls = 5
	ps := loadProbes(t, m)
	b := open(t, ps["probe"], "")
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	seen := sync.Map{}
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				out := fmt.Sprintf("g%d-%d", g, i)
				res, err := b.Score(context.Background(), &sdk.Run{Input: "q", Output: out}, nil)
				if err == nil && res.Reason != out {
					err = fmt.Errorf("call %s got reason %q", out, res.Reason)
				}
				if err != nil {
					errs <- err
				}
				for _, pid := range pids(b) {
					seen.Store(pid, true)
				}
				if n := len(pids(b)); n > 2 {
					errs <- fmt.Errorf("%d live processes, pool size is 2", n)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	n := 0
	seen.Range(func(_, _ any) bool { n++; return true })
	if n < 40/5 {
		t.Errorf("saw %d processes for 40 calls recycled every 5 calls, want at least 8", n)
	}
	// Recycled processes are stopped off the call path; Close still waits for them.
	b.Close(context.Background())
	seen.Range(func(pid, _ any) bool {
		if !gone(pid.(int)) {
			t.Errorf("process %d outlived Close", pid)
		}
		return true
	})
}
