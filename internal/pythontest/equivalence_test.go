package pythontest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/sdk"
)

// buildGoWordBudget builds examples/first-scorer's plugin (word_budget in Go, the scorer
// docs/FIRST-SCORER.md writes) as a process plugin, once per test binary. The module is
// built from a copy pointed at this checkout and tidied there, as the page's reader does,
// so that a dependency this checkout added since the example's go.sum does not stop it.
var buildGoWordBudget = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "scorekit-pythontest-go-")
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil { // the sandbox's user runs it
		return "", err
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return "", err
	}
	src := filepath.Join(dir, "src")
	exe := filepath.Join(dir, "wordbudget")
	for _, args := range [][]string{
		{"cp", "-r", filepath.Join(root, "examples", "first-scorer"), src},
		{"go", "mod", "edit", "-replace", "github.com/scorekit/scorekit=" + root},
		{"go", "mod", "tidy"},
		{"go", "build", "-o", exe, "./plugin"},
	} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = src
		if args[0] == "cp" {
			cmd.Dir = dir
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("build examples/first-scorer/plugin: %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return exe, nil
})

func goWordBudgetManifest(t testing.TB) host.Manifest {
	t.Helper()
	exe, err := buildGoWordBudget()
	if err != nil {
		t.Fatal(err)
	}
	sum, err := fileSum(exe)
	if err != nil {
		t.Fatal(err)
	}
	return host.Manifest{Name: "go-wordbudget", Runtime: host.RuntimeProcess, Artifact: exe, SHA256: sum, Dir: filepath.Dir(exe)}
}

func corpusRuns(t testing.TB) []sdk.Run {
	t.Helper()
	dir, err := corpus.Dir()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := corpus.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 1000 {
		t.Fatalf("the corpus has %d runs, want at least 1000", len(cases))
	}
	runs := make([]sdk.Run, len(cases))
	for i, c := range cases {
		runs[i] = c.Run
	}
	return runs
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPythonEquivalence holds the Python example to the Go scorer it mirrors, as the
// runtime equivalence tests hold each runtime to the native one: word_budget in Python
// (examples/python-scorer) and in Go (examples/first-scorer), each a process plugin under
// the host's sandbox, declare the same Info and give identical results on every run of
// the corpus, as the scorers return them and as the host finishes them.
func TestPythonEquivalence(t *testing.T) {
	runs := corpusRuns(t)
	py := load(t, pythonManifest(t, "python-scorer", "word_budget.py"), confined(&logBuffer{t: t}))[0]
	gp := load(t, goWordBudgetManifest(t), confined(&logBuffer{t: t}))[0]
	if a, b := mustJSON(t, gp.Info()), mustJSON(t, py.Info()); !bytes.Equal(a, b) {
		t.Fatalf("Info differs:\ngo     %s\npython %s", a, b)
	}
	ctx := context.Background()
	for _, config := range []string{`{"max_words": 100}`, `{"max_words": 12}`} {
		t.Run(config, func(t *testing.T) {
			pb, err := py.Open(ctx, host.Tenant{Name: "t"}, json.RawMessage(config))
			if err != nil {
				t.Fatal(err)
			}
			defer pb.Close(ctx)
			gb, err := gp.Open(ctx, host.Tenant{Name: "t"}, json.RawMessage(config))
			if err != nil {
				t.Fatal(err)
			}
			defer gb.Close(ctx)
			ps, gs := open(t, py, config), open(t, gp, config)
			diffs, statuses := 0, map[sdk.Status]int{}
			for i := range runs {
				run := runs[i]
				want, werr := gb.Score(ctx, &run, nil)
				run = runs[i]
				got, gerr := pb.Score(ctx, &run, nil)
				same := (werr == nil) == (gerr == nil) && bytes.Equal(mustJSON(t, comparable(want)), mustJSON(t, comparable(got)))
				hw, hg := gs.Score(ctx, runs[i]), ps.Score(ctx, runs[i])
				same = same && bytes.Equal(mustJSON(t, comparable(hw)), mustJSON(t, comparable(hg)))
				if !same {
					diffs++
					if diffs <= 5 {
						t.Errorf("run %s differs:\ngo     %s (err %v)\npython %s (err %v)", runs[i].ID, mustJSON(t, comparable(want)), werr, mustJSON(t, comparable(got)), gerr)
					}
				}
				statuses[hw.Status]++
			}
			t.Logf("%d runs, %d identical in Go and Python (statuses %v)", len(runs), len(runs)-diffs, statuses)
			if diffs > 0 {
				t.Errorf("%d of %d runs differ", diffs, len(runs))
			}
			if statuses[sdk.StatusScored] == 0 || statuses[sdk.StatusSkipped] == 0 {
				t.Errorf("statuses %v: the corpus should exercise both scored and skipped runs", statuses)
			}
		})
	}
}

// comparable is what equivalence covers: everything the scorer decides, not the host's
// telemetry.
func comparable(r sdk.Result) sdk.Result {
	r.Telemetry = sdk.Telemetry{}
	return r
}
