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
		Scorers: []string{"node_keyword_recall", "node_answers_question"}, Read: []string{"../../proto"}, Dir: dir}
}

// TestNodeScorer runs the Node.js plugin through the host: handshake, health, Info,
// Configure (accepted and refused), Score, and no process left after Close.
func TestNodeScorer(t *testing.T) {
	ps, err := Load(context.Background(), nodeManifest(t), testOptions(t))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(ps) != 2 {
		t.Fatalf("got %d scorers, want 2", len(ps))
	}
	p := ps[0]
	defer p.Close(context.Background())
	defer ps[1].Close(context.Background())
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

// TestNodeJudge: on both transports (the Session stream, and unary calls whose judge the
// plugin dials through go-plugin's broker), the Node example's judge scorer reaches the
// host's judge with the call's context and scores with its answer; without a judge it is
// skipped, and a judge answer it cannot read fails the call with the judge's words.
func TestNodeJudge(t *testing.T) { forTransports(t, testNodeJudge) }

func testNodeJudge(t *testing.T, opts Options) {
	ps, err := Load(context.Background(), nodeManifest(t), opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	for _, p := range ps {
		defer p.Close(context.Background())
	}
	p := ps[1]
	if info := p.Info(); info.Name != "node_answers_question" || !info.Has(sdk.CapJudge) {
		t.Fatalf("Info = %+v, want node_answers_question with the judge capability", info)
	}
	b, err := p.Open(context.Background(), host.Tenant{Name: "tenant-a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	ctx := context.WithValue(context.Background(), tenantKey{}, "tenant-a")
	j := &scriptedJudge{reply: `{"score": 0.8, "reasoning": "It names the capital."}`}
	res, err := b.Score(ctx, &sdk.Run{Input: "What is the capital of France?", Output: "Paris"}, j)
	if err != nil || res.Status != sdk.StatusScored || res.Value() != 0.8 || res.Reason != "It names the capital." {
		t.Fatalf("with a judge: %+v, %v", res, err)
	}
	if len(j.prompts) != 1 || !strings.Contains(j.prompts[0], "<question>\nWhat is the capital of France?\n</question>") || j.tenants[0] != "tenant-a" {
		t.Errorf("the judge got %q for tenant %v", j.prompts, j.tenants)
	}
	if res, err := b.Score(ctx, &sdk.Run{Input: "q", Output: "a"}, nil); err != nil || res.Status != sdk.StatusSkipped {
		t.Errorf("without a judge: %+v, %v; want skipped", res, err)
	}
	prose := &scriptedJudge{reply: "I would rather not."}
	if _, err := b.Score(ctx, &sdk.Run{Input: "q", Output: "a"}, prose); codeOf(err) != sdk.CodeJudgeError || !strings.Contains(err.Error(), "I would rather not.") {
		t.Errorf("a judge that answers prose: err = %v, want judge_error quoting it", err)
	}
}

// scriptedJudge answers every prompt with reply and records the prompts and tenants.
type scriptedJudge struct {
	reply   string
	prompts []string
	tenants []any
}

func (j *scriptedJudge) Complete(ctx context.Context, reqs []sdk.CompletionRequest) ([]sdk.CompletionResponse, error) {
	out := make([]sdk.CompletionResponse, len(reqs))
	for i, r := range reqs {
		j.prompts = append(j.prompts, r.Messages[len(r.Messages)-1].Content)
		j.tenants = append(j.tenants, ctx.Value(tenantKey{}))
		out[i] = sdk.CompletionResponse{Content: j.reply}
	}
	return out, nil
}

func (j *scriptedJudge) Embed(context.Context, []string) ([][]float32, error) { return nil, nil }
