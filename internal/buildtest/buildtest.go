// Package buildtest loads, for tests, the artifacts `make test-artifacts` builds under
// build/: the built-in scorers as one WASM module and as one process plugin. A missing or
// stale artifact fails the test with the make target that rebuilds it, never skips it.
package buildtest

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/process"
	"github.com/scorekit/scorekit/host/wasm"
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
	for ; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatal("no go.mod above the working directory")
		}
	}
}
