package masis_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/host/process"
	"github.com/scorekit/scorekit/host/wasm"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/plugins/masis"
	"github.com/scorekit/scorekit/sdk"
)

// build builds the MASIS plugin for runtime (a WASM reactor, or a process plugin for this
// machine) into a temporary folder and pins it in a manifest.
func build(t *testing.T, runtime string) host.Manifest {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "masis")
	args := []string{"build", "-o", out, "github.com/scorekit/scorekit/plugins/masis/plugin"}
	env := os.Environ()
	if runtime == host.RuntimeWASM {
		out += ".wasm"
		args = []string{"build", "-buildmode=c-shared", "-o", out, "github.com/scorekit/scorekit/plugins/masis/plugin"}
		env = append(env, "GOOS=wasip1", "GOARCH=wasm")
	}
	cmd := exec.Command("go", args...)
	cmd.Env = env
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the %s plugin: go %s: %v\n%s", runtime, strings.Join(args, " "), err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return host.Manifest{Name: "masis", Runtime: runtime, Artifact: out, SHA256: hex.EncodeToString(sum[:]), Dir: dir}
}

// TestRuntimeEquivalence holds the WASM and process builds to the native results, host
// pipeline included, with the judge served to the plugin through the host.
func TestRuntimeEquivalence(t *testing.T) {
	ctx := context.Background()
	e, err := wasm.NewEngine(ctx, wasm.Options{CacheDir: filepath.Join(os.TempDir(), "scorekit-masis-wazero")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	wasmPlugins, err := e.Load(ctx, build(t, host.RuntimeWASM))
	if err != nil {
		t.Fatal(err)
	}
	processPlugins, err := process.Load(ctx, build(t, host.RuntimeProcess), process.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := judgetest.New(
		judgetest.Rule{Match: "NO-DIM", Reply: `{"faithfulness": 0.9, "relevance": 0.8}`},
		judgetest.Rule{Match: "PERCENT", Reply: `{"faithfulness": 90, "relevance": 80, "completeness": 70, "reasoning_quality": 60, "overall_score": 80, "improvement_suggestions": ["cite [2]"]}`},
		judgetest.Rule{Reply: `{"faithfulness": 0.9, "relevance": 0.8, "completeness": 0.7, "reasoning_quality": 0.6, "overall_score": 0.8, "improvement_suggestions": ["cite [2] for the date"]}`},
	)
	defer srv.Close()
	b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge-test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	scorer := func(p host.Plugin) *host.Scorer {
		reg := host.NewRegistry()
		if err := reg.Register(p, false); err != nil {
			t.Fatal(err)
		}
		s, err := host.New(reg, host.WithJudge(b)).Open(ctx, masis.Name, host.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	native := scorer(host.Native(masis.New))
	defer native.Close(ctx)
	loaded := map[string]*host.Scorer{}
	for runtime, ps := range map[string][]host.Plugin{host.RuntimeWASM: wasmPlugins, host.RuntimeProcess: processPlugins} {
		if len(ps) != 1 || ps[0].Info().Name != masis.Name {
			t.Fatalf("the %s plugin carries %d scorers, want masis alone", runtime, len(ps))
		}
		if a, b := jsonText(t, native.Info()), jsonText(t, ps[0].Info()); a != b {
			t.Fatalf("%s Info differs:\nnative %s\n%s %s", runtime, a, runtime, b)
		}
		s := scorer(ps[0])
		defer s.Close(ctx)
		loaded[runtime] = s
	}
	runs := []struct {
		name   string
		status sdk.Status
		run    sdk.Run
	}{
		{"invalid citation", sdk.StatusScored, sdk.Run{Input: question, Output: "The Eiffel Tower is 330 metres tall [1] and was completed in 1889 [3].", Context: eiffel}},
		{"percentage answer", sdk.StatusScored, sdk.Run{Input: "PERCENT " + question, Output: "It is 330 metres tall [1].", Context: eiffel}},
		{"no evidence", sdk.StatusScored, sdk.Run{Input: question, Output: "It is 330 metres tall."}},
		{"missing dimension", sdk.StatusFailed, sdk.Run{Input: "NO-DIM " + question, Output: "It is 330 metres tall [1].", Context: eiffel}},
		{"uncited", sdk.StatusScored, sdk.Run{Input: question, Output: strings.Repeat("The tower is a tall iron lattice in Paris. ", 11), Context: eiffel}},
	}
	for _, c := range runs {
		want := native.Score(ctx, c.run)
		if want.Status != c.status {
			t.Fatalf("%s: native status %s (%s), want %s", c.name, want.Status, want.Reason, c.status)
		}
		for _, runtime := range []string{host.RuntimeWASM, host.RuntimeProcess} {
			t.Run(runtime+"/"+c.name, func(t *testing.T) {
				got := loaded[runtime].Score(ctx, c.run)
				if got.Telemetry.Runtime != runtime {
					t.Fatalf("ran in %q, want %s", got.Telemetry.Runtime, runtime)
				}
				if a, b := jsonText(t, stable(want)), jsonText(t, stable(got)); a != b {
					t.Errorf("results differ:\nnative %s\n%-6s %s", a, runtime, b)
				}
			})
		}
	}
}

// stable drops what may differ between runtimes: timing, runtime name, judge accounting
// (the second call is a cache hit).
func stable(r sdk.Result) sdk.Result {
	nodes := make([]map[string]any, len(r.Telemetry.Nodes))
	for i, n := range r.Telemetry.Nodes {
		nodes[i] = map[string]any{}
		for k, v := range n {
			if k != "duration_ms" {
				nodes[i][k] = v
			}
		}
	}
	r.Telemetry = sdk.Telemetry{Nodes: nodes}
	return r
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
