package pythontest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/process"
	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/sdk"
)

// repoRoot is the repository's root folder.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// python is Debian's python3, the one that sees python3-grpcio and the other packages
// make test installs (a pyenv or venv python3 earlier on PATH does not).
var python = sync.OnceValues(func() (string, error) {
	exe := "/usr/bin/python3"
	if _, err := os.Stat(exe); err != nil {
		if exe, err = exec.LookPath("python3"); err != nil {
			return "", errors.New("python3 is not installed: make test installs it as root (apt-get install python3), or run make deps")
		}
	}
	out, err := exec.Command(exe, "-c", "import grpc, google.protobuf, jsonschema, pytest").CombinedOutput()
	if err != nil {
		return "", errors.New(exe + " lacks a module the Python SDK needs (" + strings.TrimSpace(lastLine(out)) +
			"): apt-get install python3-grpcio python3-protobuf python3-jsonschema python3-pytest (make test does as root; make deps)")
	}
	return exe, nil
})

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

func pythonExe(t testing.TB) string {
	t.Helper()
	exe, err := python()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// sdkSrc is the folder that holds the scorekit_sdk package in this checkout.
func sdkSrc(t testing.TB) string {
	return filepath.Join(repoRoot(t), "sdks", "python", "src")
}

// pythonManifest describes examples/EXAMPLE/SCRIPT as a process plugin, as make
// python-plugins writes it: the script pinned, Python pointed at the SDK of this checkout
// (PYTHONPATH), which the sandbox shows read-only.
func pythonManifest(t testing.TB, example, script string) host.Manifest {
	t.Helper()
	pythonExe(t)
	dir := filepath.Join(repoRoot(t), "examples", example)
	sum, err := fileSum(filepath.Join(dir, script))
	if err != nil {
		t.Fatal(err)
	}
	return host.Manifest{Name: example, Runtime: host.RuntimeProcess, Artifact: script, SHA256: sum, Dir: dir,
		Env: map[string]string{"PYTHONPATH": sdkSrc(t)}, Read: []string{sdkSrc(t)}}
}

// logBuffer keeps what the host logs, for the checks, and passes it to the test's log.
type logBuffer struct {
	testkit.SyncBuffer
	t testing.TB
}

func (w *logBuffer) Write(p []byte) (int, error) {
	w.SyncBuffer.Write(p)
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// confined are the options of a host that requires the whole sandbox (bubblewrap, the
// memory and pids cgroups, rlimits), as scorekit serve --require-sandbox does, logging as
// JSON into logs.
func confined(logs io.Writer) process.Options {
	return process.Options{Confine: process.ConfineRequired,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
}

func load(t testing.TB, m host.Manifest, opts process.Options) []host.Plugin {
	t.Helper()
	ps, err := process.Load(context.Background(), m, opts)
	if err != nil {
		t.Fatalf("load %s: %v", m.Name, err)
	}
	t.Cleanup(func() {
		for _, p := range ps {
			p.Close(context.Background())
		}
	})
	return ps
}

// open opens p through a host, as scorekit score and serve do: its config validated
// against the schema and merged over the defaults, its results normalized.
func open(t testing.TB, p host.Plugin, config string, opts ...host.Option) *host.Scorer {
	t.Helper()
	opts = append([]host.Option{host.WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	s, err := host.New(host.NewRegistry(), opts...).OpenPlugin(context.Background(), p, host.OpenOptions{Tenant: "t", Config: json.RawMessage(config)})
	if err != nil {
		t.Fatalf("open %s: %v", p.Info().Name, err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// TestPythonScorer runs examples/python-scorer through a host that requires the sandbox:
// handshake, health, Info, a config the schema refuses and one it takes, every status, the
// plugin's JSON log line in the host's log with its fields, and no process left after Close.
func TestPythonScorer(t *testing.T) {
	logs := &logBuffer{t: t}
	ps := load(t, pythonManifest(t, "python-scorer", "word_budget.py"), confined(logs))
	if len(ps) != 1 {
		t.Fatalf("got %d scorers, want 1", len(ps))
	}
	p := ps[0]
	info := p.Info()
	if info.Name != "word_budget" || info.ABIVersion != sdk.ABIVersion || info.Range != sdk.Unit || info.Threshold != 0.5 ||
		string(info.Defaults) != `{"max_words":100}` {
		t.Fatalf("Info = %+v, defaults %s", info, info.Defaults)
	}
	sb := p.(interface{ Sandbox() process.Sandbox }).Sandbox()
	if !sb.Confined || sb.Degraded != "" {
		t.Fatalf("sandbox %s: want confined, nothing degraded", sb)
	}
	if !strings.Contains(logs.String(), `"msg":"serving"`) || !strings.Contains(logs.String(), `"scorers":["word_budget"]`) {
		t.Errorf("the plugin's JSON log line did not reach the host's log with its fields:\n%s", logs)
	}

	if _, err := host.New(host.NewRegistry()).OpenPlugin(context.Background(), p, host.OpenOptions{Config: json.RawMessage(`{"max_word": 3}`)}); err == nil ||
		!strings.Contains(err.Error(), "max_word") {
		t.Errorf("a misspelt config field: err = %v, want the host to refuse it naming the field", err)
	}
	s := open(t, p, `{"max_words": 10}`)
	tests := []struct {
		name   string
		output string
		status sdk.Status
		score  float64
		passed bool
		reason string
	}{
		{"within the budget", "Paris is the capital of France.", sdk.StatusScored, 1, true, "6 words for a budget of 10"},
		{"half over", strings.Repeat("word ", 15), sdk.StatusScored, 0.5, true, "15 words for a budget of 10"},
		{"twice the budget", strings.Repeat("word ", 20), sdk.StatusScored, 0, false, "20 words for a budget of 10"},
		{"empty output is skipped, not 0", " \n", sdk.StatusSkipped, 0, false, "the output is empty; the pre-screen judges empty outputs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.Score(context.Background(), sdk.Run{Input: "What is the capital of France?", Output: tt.output})
			if res.Status != tt.status || res.Reason != tt.reason || res.Telemetry.Runtime != host.RuntimeProcess {
				t.Fatalf("got %s (%s) in %s, want %s (%s) in the process runtime", res.Status, res.Reason, res.Telemetry.Runtime, tt.status, tt.reason)
			}
			if tt.status == sdk.StatusScored && (*res.Score != tt.score || *res.Passed != tt.passed) {
				t.Errorf("score %v passed %v, want %v %v", *res.Score, *res.Passed, tt.score, tt.passed)
			}
		})
	}

	pids := processes(t, "examples/python-scorer/word_budget.py")
	if len(pids) == 0 {
		t.Fatal("no python process serves the plugin")
	}
	s.Close(context.Background())
	for _, pl := range ps {
		pl.Close(context.Background())
	}
	for _, pid := range pids {
		if !waitGone(pid) {
			t.Errorf("python process %d outlived Close", pid)
		}
	}
}
