package modroot_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/modroot"
)

// TestFind: the nearest go.mod at or above the folder wins.
func TestFind(t *testing.T) {
	tmp := t.TempDir()
	outer, inner, deep := filepath.Join(tmp, "a"), filepath.Join(tmp, "a", "b"), filepath.Join(tmp, "a", "b", "c", "d")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(outer)
	for _, dir := range []string{outer, deep} {
		if got, ok := modroot.Find(dir); !ok || got != outer {
			t.Errorf("Find(%s) = %q, %v; want %q", dir, got, ok, outer)
		}
	}
	write(inner)
	if got, ok := modroot.Find(deep); !ok || got != inner {
		t.Errorf("Find(%s) with a nearer go.mod = %q, %v; want %q", deep, got, ok, inner)
	}
}

// TestFindThisModule: from this package's folder, the root is scorekit's.
func TestFindThisModule(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, ok := modroot.Find(wd)
	if !ok {
		t.Fatalf("Find(%s): no module root", wd)
	}
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.HasPrefix(string(b), "module github.com/scorekit/scorekit\n") {
		t.Fatalf("Find(%s) = %s, whose go.mod is %q, %v", wd, root, b, err)
	}
}
