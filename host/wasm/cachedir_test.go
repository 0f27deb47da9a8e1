package wasm

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/scorekit/scorekit/host"
)

// filesUnder counts the regular files under dir and their bytes.
func filesUnder(t *testing.T, dir string) (n int, size int64) {
	t.Helper()
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n, size = n+1, size+info.Size()
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return n, size
}

// TestLoadWithCacheDir: an engine with no cache of its own ("-") writes nothing to disk;
// a load with its own CacheDir compiles into that folder alone, and a second load from it
// finds the code there; the folder can be removed once its plugins are closed.
func TestLoadWithCacheDir(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	engineDir := filepath.Join(root, "engine")
	e := newEngineWith(t, Options{CacheDir: "-"})
	if _, err := os.Stat(engineDir); !os.IsNotExist(err) {
		t.Fatalf("engine folder: %v", err)
	}
	own := filepath.Join(root, "own")
	m := manifestFor(t, watGuest(t, "ok"), host.Limits{})
	ps, err := e.LoadWith(ctx, m, LoadOptions{CacheDir: own})
	if err != nil {
		t.Fatal(err)
	}
	n, size := filesUnder(t, own)
	if n != 1 || size == 0 {
		t.Fatalf("own cache after a load: %d files, %d bytes; want the compiled module", n, size)
	}
	if n, _ := filesUnder(t, root); n != 1 {
		t.Fatalf("files under the test's folder: %d; want only the one in the load's own cache", n)
	}
	// The second load reads the file the first wrote; it adds none.
	again, err := e.LoadWith(ctx, m, LoadOptions{CacheDir: own})
	if err != nil {
		t.Fatal(err)
	}
	if n2, size2 := filesUnder(t, own); n2 != 1 || size2 != size {
		t.Fatalf("own cache after a second load: %d files, %d bytes", n2, size2)
	}
	b, err := again[0].Open(ctx, host.Tenant{Name: "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = b.Close(ctx)
	for _, p := range append(ps, again...) {
		if err := p.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(own); err != nil {
		t.Fatal(err)
	}
}
