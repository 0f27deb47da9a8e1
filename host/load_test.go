package host

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorekit/scorekit/sdk"
)

// manifest writes a manifest into dir; its scorers are what the test loader returns.
func manifest(t *testing.T, dir, name, runtime string, scorers, replaces []string) string {
	t.Helper()
	b, err := json.Marshal(Manifest{Name: name, Runtime: runtime, Artifact: name, SHA256: strings.Repeat("0", 64), Scorers: scorers, Replaces: replaces})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+ManifestSuffix)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// closeCounted is a plugin whose Close is counted.
type closeCounted struct {
	Plugin
	closed *atomic.Int32
}

func (c closeCounted) Close(ctx context.Context) error {
	c.closed.Add(1)
	return c.Plugin.Close(ctx)
}

// testLoader loads a manifest as native scorers named by its "scorers"; a plugin whose
// name holds "fails" does not load.
type testLoader struct{ closed atomic.Int32 }

func (l *testLoader) Load(_ context.Context, m Manifest) ([]Plugin, error) {
	if strings.Contains(m.Name, "fails") {
		return nil, errors.New("artifact is broken; rebuild it")
	}
	var out []Plugin
	for _, name := range m.Scorers {
		inf := info(name)
		inf.Version = m.Name
		out = append(out, closeCounted{Plugin: Native(func() sdk.Scorer { return &fake{info: inf} }), closed: &l.closed})
	}
	return out, nil
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestLoadPlugins(t *testing.T) {
	dir := t.TempDir()
	manifest(t, dir, "a_good", RuntimeWASM, []string{"good"}, nil)
	manifest(t, dir, "b_fails", RuntimeWASM, []string{"lost"}, nil)
	manifest(t, dir, "c_shadow", RuntimeProcess, []string{"builtin", "extra"}, nil)
	manifest(t, dir, "d_replace", RuntimeWASM, []string{"replaced"}, []string{"replaced"})
	manifest(t, dir, "e_other", RuntimeProcess, []string{"other"}, nil)
	if err := os.WriteFile(filepath.Join(dir, "f_broken"+ManifestSuffix), []byte(`{"name": `), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry()
	for _, name := range []string{"builtin", "replaced"} {
		if err := reg.Register(Native(func() sdk.Scorer { return &fake{info: info(name)} }), false); err != nil {
			t.Fatal(err)
		}
	}
	ld := &testLoader{}
	loaded, err := LoadPlugins(context.Background(), reg, []string{dir}, LoadOptions{Loaders: map[string]Loader{RuntimeWASM: ld, RuntimeProcess: ld}, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := reg.Names(), []string{"builtin", "extra", "good", "other", "replaced"}; !slices.Equal(got, want) {
		t.Fatalf("registered %v, want %v", got, want)
	}
	var failed []string
	for _, f := range loaded.Failures {
		failed = append(failed, f.Plugin)
	}
	if want := []string{"b_fails", "c_shadow", "f_broken"}; !slices.Equal(failed, want) || len(reg.Failures()) != 3 {
		t.Fatalf("failures %v (registry holds %d), want %v, in the order of the manifests", failed, len(reg.Failures()), want)
	}
	t.Run("denied: a failed plugin's scorer is unavailable, with the reason", func(t *testing.T) {
		_, err := reg.Lookup("lost")
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "artifact is broken; rebuild it") {
			t.Fatalf("Lookup(lost) = %v", err)
		}
	})
	t.Run("denied: a scorer takes a registered name without opting in", func(t *testing.T) {
		f := loaded.Failures[1]
		if !errors.Is(f.Err, ErrDuplicate) || !slices.Equal(f.Scorers, []string{"builtin"}) || !strings.Contains(f.Err.Error(), `add "replaces": ["builtin"] to c_shadow's manifest`) {
			t.Fatalf("failure %+v", f)
		}
		if p, _ := reg.Lookup("builtin"); p.Runtime() != RuntimeNative {
			t.Fatalf("the built-in was replaced by a plugin that did not opt in")
		}
		if ld.closed.Load() != 1 {
			t.Fatalf("%d refused plugins closed, want 1", ld.closed.Load())
		}
	})
	t.Run("allowed: a scorer replaces a registered one when its manifest opts in", func(t *testing.T) {
		p, err := reg.Lookup("replaced")
		if by, ok := reg.Replaced("replaced"); err != nil || !ok || by != "d_replace" || p.Info().Version != "d_replace" {
			t.Fatalf("replaced by %q (%v): %v", by, ok, err)
		}
	})
	t.Run("a runtime without a loader is skipped", func(t *testing.T) {
		reg := NewRegistry()
		loaded, err := LoadPlugins(context.Background(), reg, []string{dir}, LoadOptions{Loaders: map[string]Loader{RuntimeWASM: &testLoader{}}, Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		if len(loaded.Skipped) != 2 || slices.Contains(reg.Names(), "other") {
			t.Fatalf("skipped %v, registered %v; want the two process manifests skipped", loaded.Skipped, reg.Names())
		}
	})
	if err := loaded.Close(context.Background()); err != nil || ld.closed.Load() != 1+int32(len(loaded.Plugins)) {
		t.Fatalf("Close: %v; %d closes, want every loaded plugin's", err, ld.closed.Load())
	}
}

// A path LoadPlugins cannot read stops it before anything loads: the command that named it
// has a typo to fix.
func TestLoadPluginsPaths(t *testing.T) {
	good := t.TempDir()
	path := manifest(t, good, "good", RuntimeWASM, []string{"good"}, nil)
	notManifest := filepath.Join(good, "notes.json")
	if err := os.WriteFile(notManifest, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		paths []string
		err   string // "" means loaded
	}{
		{"a folder", []string{good}, ""},
		{"a manifest file", []string{path}, ""},
		{"a missing path", []string{good, filepath.Join(good, "nope")}, "no such file"},
		{"a folder without manifests", []string{good, t.TempDir()}, "no *" + ManifestSuffix},
		{"a file that is not a manifest", []string{good, notManifest}, "not a plugin manifest"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := NewRegistry()
			_, err := LoadPlugins(context.Background(), reg, tt.paths, LoadOptions{Loaders: map[string]Loader{RuntimeWASM: &testLoader{}}, Logger: quiet()})
			switch {
			case tt.err == "" && (err != nil || !slices.Equal(reg.Names(), []string{"good"})):
				t.Fatalf("err %v, registered %v", err, reg.Names())
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err) || len(reg.Names()) != 0):
				t.Fatalf("err %v, registered %v; want an error saying %q and nothing loaded", err, reg.Names(), tt.err)
			}
		})
	}
}

// Manifests load at once: two plugins that each start only once the other has started
// both load. Loaded one after the other, the first would wait for the second forever
// (here, until the context's deadline, and the test fails).
func TestLoadPluginsConcurrently(t *testing.T) {
	dir := t.TempDir()
	manifest(t, dir, "one", RuntimeWASM, []string{"one"}, nil)
	manifest(t, dir, "two", RuntimeWASM, []string{"two"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var arrived atomic.Int32
	both := make(chan struct{})
	inner := &testLoader{}
	ld := LoaderFunc(func(ctx context.Context, m Manifest) ([]Plugin, error) {
		if arrived.Add(1) == 2 {
			close(both)
		}
		select {
		case <-both:
		case <-ctx.Done():
			return nil, errors.New("the other plugin never started loading")
		}
		return inner.Load(ctx, m)
	})
	reg := NewRegistry()
	loaded, err := LoadPlugins(ctx, reg, []string{dir}, LoadOptions{Loaders: map[string]Loader{RuntimeWASM: ld}, Logger: quiet(), Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := loaded.Err(); err != nil || !slices.Equal(reg.Names(), []string{"one", "two"}) {
		t.Fatalf("registered %v: %v", reg.Names(), err)
	}
}
