package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
)

// TestLoadDir loads a plugins folder as `scorekit score --plugins DIR` does: manifests
// written by internal/cmd/mkmanifest, artifacts beside them, process plugins left to the
// process runtime, and a plugin that fails reported while the others load.
func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{"ok.wasm": watGuest(t, "ok"), "c_contains.wasm": cGuest(t), "forbidden.wasm": watGuest(t, "forbidden")} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, name)
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("go", "run", "../../internal/cmd/mkmanifest", dst).CombinedOutput(); err != nil {
			t.Fatalf("mkmanifest %s: %v\n%s", dst, err, out)
		}
	}
	proc, _ := json.Marshal(host.Manifest{Name: "proc", Runtime: host.RuntimeProcess, Artifact: "proc", SHA256: strings.Repeat("0", 64)})
	if err := os.WriteFile(filepath.Join(dir, "proc"+host.ManifestSuffix), proc, 0o644); err != nil {
		t.Fatal(err)
	}
	reg := host.NewRegistry()
	loaded, err := newEngine(t, nil).LoadDir(context.Background(), reg, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(loaded.Plugins); !slices.Equal(got, []string{"c_contains", "ok"}) || !slices.Equal(reg.Names(), got) {
		t.Fatalf("loaded %v, registered %v; want [c_contains ok]", got, reg.Names())
	}
	if len(loaded.Skipped) != 1 || !strings.HasSuffix(loaded.Skipped[0], "proc"+host.ManifestSuffix) {
		t.Fatalf("skipped %v; want the process plugin's manifest", loaded.Skipped)
	}
	t.Run("denied: a plugin that fails is reported, the others load", func(t *testing.T) {
		if len(loaded.Failures) != 1 || loaded.Failures[0].Plugin != "forbidden" || !errors.Is(loaded.Failures[0].Err, ErrForbiddenImport) {
			t.Fatalf("failures %+v; want forbidden's forbidden import", loaded.Failures)
		}
		if f := reg.Failures(); len(f) != 1 {
			t.Fatalf("the registry records %d failures, want 1", len(f))
		}
	})
	t.Run("denied: a folder without manifests", func(t *testing.T) {
		if _, err := newEngine(t, nil).LoadDir(context.Background(), host.NewRegistry(), t.TempDir()); err == nil {
			t.Fatal("LoadDir of an empty folder succeeded")
		}
	})
}
