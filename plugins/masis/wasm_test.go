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
	"github.com/scorekit/scorekit/host/wasm"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/plugins/masis"
	"github.com/scorekit/scorekit/sdk"
)

// buildGuest builds the MASIS WASM reactor into a temporary folder and pins it.
func buildGuest(t *testing.T) host.Manifest {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "masis.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, "github.com/scorekit/scorekit/plugins/masis/plugin")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the guest: GOOS=wasip1 GOARCH=wasm %s: %v\n%s", strings.Join(cmd.Args, " "), err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return host.Manifest{Name: "masis", Runtime: host.RuntimeWASM, Artifact: out, SHA256: hex.EncodeToString(sum[:]), Dir: dir}
}

// TestWASMEquivalence holds the WASM build to the native results, host pipeline included,
// with the judge served to the guest through the host.
func TestWASMEquivalence(t *testing.T) {
	ctx := context.Background()
	e, err := wasm.NewEngine(ctx, wasm.Options{CacheDir: filepath.Join(os.TempDir(), "scorekit-masis-wazero")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	ps, err := e.Load(ctx, buildGuest(t))
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
	if len(ps) != 1 || ps[0].Info().Name != masis.Name {
		t.Fatalf("the guest carries %d scorers, want masis alone", len(ps))
	}
	native, guest := scorer(host.Native(masis.New)), scorer(ps[0])
	defer native.Close(ctx)
	defer guest.Close(ctx)
	if a, b := jsonText(t, native.Info()), jsonText(t, guest.Info()); a != b {
		t.Fatalf("Info differs:\nnative %s\nwasm   %s", a, b)
	}
	runs := []struct {
		name string
		run  sdk.Run
	}{
		{"invalid citation", sdk.Run{Input: question, Output: "The Eiffel Tower is 330 metres tall [1] and was completed in 1889 [3].", Context: eiffel}},
		{"percentage answer", sdk.Run{Input: "PERCENT " + question, Output: "It is 330 metres tall [1].", Context: eiffel}},
		{"no evidence", sdk.Run{Input: question, Output: "It is 330 metres tall."}},
		{"missing dimension", sdk.Run{Input: "NO-DIM " + question, Output: "It is 330 metres tall [1].", Context: eiffel}},
		{"uncited", sdk.Run{Input: question, Output: strings.Repeat("The tower is a tall iron lattice in Paris. ", 11), Context: eiffel}},
	}
	for _, c := range runs {
		t.Run(c.name, func(t *testing.T) {
			want, got := native.Score(ctx, c.run), guest.Score(ctx, c.run)
			if got.Telemetry.Runtime != host.RuntimeWASM {
				t.Fatalf("ran in %q, want wasm", got.Telemetry.Runtime)
			}
			if a, b := jsonText(t, stable(want)), jsonText(t, stable(got)); a != b {
				t.Errorf("results differ:\nnative %s\nwasm   %s", a, b)
			}
		})
	}
}

// stable drops what may differ between runtimes: timing, runtime name, judge accounting
// (the second call is a cache hit).
func stable(r sdk.Result) sdk.Result {
	r.Telemetry = sdk.Telemetry{Nodes: r.Telemetry.Nodes}
	for _, n := range r.Telemetry.Nodes {
		delete(n, "duration_ms")
	}
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
