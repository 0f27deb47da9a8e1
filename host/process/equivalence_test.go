package process

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// buildHeuristic builds plugins/heuristic/plugin (the heuristic scorers of `make
// process-plugins`) once per test binary, with the go command that runs the tests.
var buildHeuristic = sync.OnceValues(func() (string, error) {
	dir, err := buildDir()
	if err != nil {
		return "", err
	}
	exe := filepath.Join(dir, "heuristic")
	cmd := exec.Command("go", "build", "-o", exe, "github.com/scorekit/scorekit/plugins/heuristic/plugin")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", &buildError{err: err, out: out.String()}
	}
	return exe, nil
})

// buildDir is this test binary's folder for what it builds, removed by TestMain: one
// per run, so that tests of other checkouts running at the same time build their own.
var buildDir = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "scorekit-process-test-")
	if err != nil {
		return "", err
	}
	// The sandbox's user (not root) runs what is built here.
	return dir, os.Chmod(dir, 0o755)
})

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string {
	return "go build ./plugins/heuristic/plugin: " + e.err.Error() + "\n" + e.out
}

// heuristicManifest describes the built heuristic plugin.
func heuristicManifest(t testing.TB) host.Manifest {
	t.Helper()
	exe, err := buildHeuristic()
	if err != nil {
		t.Fatal(err)
	}
	sum, err := fileSum(exe)
	if err != nil {
		t.Fatal(err)
	}
	return host.Manifest{Name: "heuristic", Runtime: host.RuntimeProcess, Artifact: exe, SHA256: sum, Dir: filepath.Dir(exe)}
}

func loadCorpus(t testing.TB) []corpus.Case {
	t.Helper()
	dir, err := corpus.Dir()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := corpus.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestEquivalence holds the process runtime to the native one: the same scorer source,
// built as a plugin, gives identical results on every labelled run.
func TestEquivalence(t *testing.T) {
	cases := loadCorpus(t)
	if len(cases) < 1000 {
		t.Fatalf("corpus has %d runs, want at least 1000", len(cases))
	}
	loaded, err := Load(context.Background(), heuristicManifest(t), testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	procs := map[string]host.Plugin{}
	for _, p := range loaded {
		procs[p.Info().Name] = p
		t.Cleanup(func() { p.Close(context.Background()) })
	}
	if _, ok := procs["prescreen"]; !ok {
		t.Fatalf("the heuristic plugin carries no prescreen (got %v); register heuristic.NewPrescreen in heuristic.Factories", names(procs))
	}
	for _, f := range heuristic.Factories() {
		native := host.Native(f)
		name := native.Info().Name
		t.Run(name, func(t *testing.T) {
			proc, ok := procs[name]
			if !ok {
				t.Fatalf("process plugin lacks %s", name)
			}
			if !reflect.DeepEqual(jsonOf(t, native.Info()), jsonOf(t, proc.Info())) {
				t.Errorf("Info differs:\nnative  %s\nprocess %s", jsonOf(t, native.Info()), jsonOf(t, proc.Info()))
			}
			config := native.Info().Defaults
			nb, err := native.Open(context.Background(), host.Tenant{Name: "t"}, config)
			if err != nil {
				t.Fatal(err)
			}
			pb, err := proc.Open(context.Background(), host.Tenant{Name: "t"}, config)
			if err != nil {
				t.Fatal(err)
			}
			defer pb.Close(context.Background())
			// prescreen, the one the issue names, on every run; the others on every 8th run
			// to keep the suite fast.
			stride := 8
			if name == "prescreen" {
				stride = 1
			}
			diffs, n := 0, 0
			for i := 0; i < len(cases); i += stride {
				c := cases[i]
				n++
				run := c.Run
				want, werr := nb.Score(context.Background(), &run, nil)
				run = c.Run
				got, gerr := pb.Score(context.Background(), &run, nil)
				if !sameResult(want, werr, got, gerr) {
					diffs++
					if diffs <= 5 {
						t.Errorf("run %s differs:\nnative  %s (err %v)\nprocess %s (err %v)", c.Run.ID, jsonOf(t, comparable(want)), werr, jsonOf(t, comparable(got)), gerr)
					}
				}
			}
			t.Logf("%s: %d runs identical in both runtimes", name, n-diffs)
			if diffs > 0 {
				t.Errorf("%d of %d runs differ", diffs, n)
			}
		})
	}
}

func names(m map[string]host.Plugin) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	return out
}

// comparable is what equivalence covers: everything the scorer decides, not the host's
// telemetry.
func comparable(r sdk.Result) sdk.Result {
	r.Telemetry = sdk.Telemetry{}
	return r
}

func sameResult(want sdk.Result, werr error, got sdk.Result, gerr error) bool {
	if (werr == nil) != (gerr == nil) {
		return false
	}
	if werr != nil {
		w, g := sdk.FailedErr(werr), sdk.FailedErr(gerr)
		return w.Error.Code == g.Error.Code && w.Error.Message == g.Error.Message
	}
	// Compare as JSON: that is what crosses the boundary, and nil vs empty maps and
	// slices are the same result.
	return bytes.Equal(jsonOfErr(comparable(want)), jsonOfErr(comparable(got)))
}

func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func jsonOfErr(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(err.Error())
	}
	return b
}
