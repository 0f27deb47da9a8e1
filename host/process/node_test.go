package process

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// nodeManifest describes examples/node-scorer/scorer.js as a process plugin, failing with
// the command that sets it up when its dependencies are missing.
func nodeManifest(t testing.TB) host.Manifest {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not on PATH: install Node.js >= 18 (apt-get install nodejs npm)")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "node-scorer"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@grpc", "grpc-js")); err != nil {
		t.Fatalf("examples/node-scorer has no node_modules: run `make node-scorer` at the repository root (or `cd examples/node-scorer && npm ci`)")
	}
	sum, err := fileSum(filepath.Join(dir, "scorer.js"))
	if err != nil {
		t.Fatal(err)
	}
	return host.Manifest{Name: "node-scorer", Runtime: host.RuntimeProcess, Artifact: "scorer.js", SHA256: sum,
		Scorers: []string{"node_keyword_recall"}, Read: []string{"../../proto"}, Dir: dir}
}

// TestNodeScorer runs the Node.js plugin through the host: handshake, health, Info,
// Configure (accepted and refused), Score, and no process left after Close.
func TestNodeScorer(t *testing.T) {
	ps, err := Load(context.Background(), nodeManifest(t), testOptions(t))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(ps) != 1 {
		t.Fatalf("got %d scorers, want 1", len(ps))
	}
	p := ps[0]
	defer p.Close(context.Background())
	info := p.Info()
	if info.Name != "node_keyword_recall" || info.ABIVersion != sdk.ABIVersion || info.Range != sdk.Unit {
		t.Fatalf("Info = %+v", info)
	}

	if _, err := p.Open(context.Background(), host.Tenant{Name: "t"}, json.RawMessage(`{"min_lenght":3}`)); codeOf(err) != sdk.CodeInvalidConfig || !strings.Contains(err.Error(), "min_lenght") {
		t.Errorf("Open with a misspelt field: err = %v, want invalid_config naming the field", err)
	}

	b, err := p.Open(context.Background(), host.Tenant{Name: "t"}, json.RawMessage(`{"min_length":3}`))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	tests := []struct {
		name       string
		run        sdk.Run
		wantStatus sdk.Status
		wantScore  float64
		wantFlag   string
	}{
		{name: "all keywords", run: sdk.Run{Output: "Paris is the capital of France", Expected: "The capital of France is Paris"}, wantStatus: sdk.StatusScored, wantScore: 1},
		{name: "half the keywords", run: sdk.Run{Output: "It is Paris", Expected: "Paris, France"}, wantStatus: sdk.StatusScored, wantScore: 0.5},
		{name: "empty output", run: sdk.Run{Output: "", Expected: "Paris"}, wantStatus: sdk.StatusScored, wantScore: 0, wantFlag: "empty_output"},
		{name: "no reference", run: sdk.Run{Output: "Paris"}, wantStatus: sdk.StatusSkipped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := b.Score(context.Background(), &tt.run, nil)
			if err != nil {
				t.Fatalf("Score: %v", err)
			}
			if res.Status != tt.wantStatus {
				t.Fatalf("status %s (%s), want %s", res.Status, res.Reason, tt.wantStatus)
			}
			if tt.wantStatus == sdk.StatusScored && res.Value() != tt.wantScore {
				t.Errorf("score %v (%s), want %v", res.Value(), res.Reason, tt.wantScore)
			}
			if tt.wantFlag != "" && !res.HasFlag(tt.wantFlag) {
				t.Errorf("flags %v, want %s", res.Flags, tt.wantFlag)
			}
		})
	}
	t.Run("through the host", func(t *testing.T) {
		reg := host.NewRegistry()
		if err := reg.Register(p, false); err != nil {
			t.Fatal(err)
		}
		h := host.New(reg)
		s, err := h.Open(context.Background(), "node_keyword_recall", host.OpenOptions{Config: json.RawMessage(`{"min_length":4}`)})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		res := s.Score(context.Background(), sdk.Run{Input: "Capital of France?", Output: "Paris.", Expected: "Paris, France"})
		if res.Status != sdk.StatusScored || res.Value() != 0.5 || res.Passed == nil || !*res.Passed || res.Telemetry.Runtime != host.RuntimeProcess {
			t.Errorf("got %+v, want scored 0.5, passed, runtime process", res)
		}
		if _, err := h.Open(context.Background(), "node_keyword_recall", host.OpenOptions{Config: json.RawMessage(`{"min_length":"4"}`)}); err == nil {
			t.Error("host opened the scorer with a mistyped config")
		}
	})

	procs := pids(b)
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, pid := range procs {
		if !gone(pid) {
			t.Errorf("node process %d outlived Close", pid)
		}
	}
}
