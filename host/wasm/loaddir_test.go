package wasm

import (
	"context"
	"encoding/json"
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
// process runtime.
func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{"ok.wasm": watGuest(t, "ok"), "c_contains.wasm": cGuest(t)} {
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
	ps, err := newEngine(t, nil).LoadDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(ps); !slices.Equal(got, []string{"c_contains", "ok"}) {
		t.Fatalf("loaded %v, want [c_contains ok]", got)
	}
	t.Run("denied: a folder without manifests", func(t *testing.T) {
		if _, err := newEngine(t, nil).LoadDir(context.Background(), t.TempDir()); err == nil {
			t.Fatal("LoadDir of an empty folder succeeded")
		}
	})
}
