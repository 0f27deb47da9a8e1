// Package buildtest loads, for tests, the artifacts `make test-artifacts` builds under
// build/: the built-in scorers as one WASM module and as one process plugin. A missing or
// stale artifact fails the test with the make target that rebuilds it, never skips it.
// It also builds examples/first-scorer as a WASM module, the scorer a tenant publishes.
package buildtest

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/process"
	"github.com/scorekit/scorekit/host/wasm"
	"github.com/scorekit/scorekit/internal/modroot"
)

// Builtins loads build/RUNTIME/builtin.plugin.json, RUNTIME being host.RuntimeWASM or
// host.RuntimeProcess, and returns its plugins, closed when the test ends. limits are
// the WASM engine's ceilings; the process runtime takes its defaults.
func Builtins(t testing.TB, runtime string, limits host.Limits) []host.Plugin {
	t.Helper()
	path := filepath.Join(ModuleRoot(t), "build", runtime, "builtin"+host.ManifestSuffix)
	m, err := host.ReadManifest(path)
	if err != nil {
		t.Fatalf("%v: build the %s plugin with: make %s-plugins (make test-artifacts builds it)", err, runtime, runtime)
	}
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	var ps []host.Plugin
	switch runtime {
	case host.RuntimeWASM:
		e, err := wasm.NewEngine(ctx, wasm.Options{Logger: quiet, Limits: limits})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close(context.Background()) })
		ps, err = e.Load(ctx, m)
		if err != nil {
			t.Fatalf("%v; rebuild with: make %s-plugins", err, runtime)
		}
	case host.RuntimeProcess:
		ps, err = process.Load(ctx, m, process.Options{Logger: quiet})
		if err != nil {
			t.Fatalf("%v; rebuild with: make %s-plugins", err, runtime)
		}
	default:
		t.Fatalf("buildtest: runtime %q: want %s or %s", runtime, host.RuntimeWASM, host.RuntimeProcess)
	}
	for _, p := range ps {
		t.Cleanup(func() { p.Close(context.Background()) })
	}
	return ps
}

// ModuleRoot is the folder holding go.mod, above the test's working directory.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	d, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, ok := modroot.Find(d)
	if !ok {
		t.Fatal("no go.mod above the working directory")
	}
	return root
}

// FirstScorerWASM builds examples/first-scorer (the word_budget scorer of
// docs/FIRST-SCORER.md) as a WASM module, as its plugin's doc says, and returns the
// module's bytes. The Go build cache makes builds after the first quick.
func FirstScorerWASM(t testing.TB) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "word_budget.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, "./plugin")
	cmd.Dir = filepath.Join(ModuleRoot(t), "examples", "first-scorer")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build examples/first-scorer for WASM (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared ./plugin): %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
