package wasm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// builds caches the artifacts the tests build, for the whole test binary.
type builds struct {
	dir  string
	mu   sync.Mutex
	done map[string]string
}

var testBuilds builds

func TestMain(m *testing.M) {
	if code, ok := VetChild(); ok {
		os.Exit(code)
	}
	dir, err := os.MkdirTemp("", "scorekit-wasm-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testBuilds = builds{dir: dir, done: map[string]string{}}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// artifact builds name once per test binary with build(out) and returns its path.
func buildOnce(t testing.TB, name string, build func(out string) *exec.Cmd) string {
	t.Helper()
	testBuilds.mu.Lock()
	defer testBuilds.mu.Unlock()
	if p, ok := testBuilds.done[name]; ok {
		return p
	}
	out := filepath.Join(testBuilds.dir, name)
	cmd := build(out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %s: %v\n%s", name, strings.Join(cmd.Args, " "), err, b)
	}
	testBuilds.done[name] = out
	return out
}

// goGuest builds a Go package as a WASM reactor.
func goGuest(t testing.TB, name, pkg string) string {
	return buildOnce(t, name+".wasm", func(out string) *exec.Cmd {
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, pkg)
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		return cmd
	})
}

// watGuest compiles testdata/NAME.wat with wabt's wat2wasm.
func watGuest(t testing.TB, name string) string {
	t.Helper()
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		t.Fatalf("wat2wasm not found (%v): install it with: apt-get install wabt", err)
	}
	return buildOnce(t, name+".wasm", func(out string) *exec.Cmd {
		return exec.Command("wat2wasm", filepath.Join("testdata", name+".wat"), "-o", out)
	})
}

// cGuest builds the C example with its own Makefile, as CI does.
func cGuest(t testing.TB) string {
	t.Helper()
	for _, tool := range []string{"make", "clang", "wasm-ld"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found (%v): install the C guest's tools with: apt-get install make clang lld", tool, err)
		}
	}
	return buildOnce(t, "c_contains.wasm", func(out string) *exec.Cmd {
		return exec.Command("make", "-s", "-C", "../../examples/wasm-c", "OUT="+out)
	})
}

// manifestFor pins path's sha256 in a manifest with the given limits.
func manifestFor(t testing.TB, path string, limits host.Limits) host.Manifest {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	name := strings.TrimSuffix(filepath.Base(path), ".wasm")
	return host.Manifest{Name: name, Runtime: host.RuntimeWASM, Artifact: path, SHA256: hex.EncodeToString(sum[:]),
		Limits: limits, Dir: filepath.Dir(path)}
}

// records is a slog handler that keeps every record, for assertions on logged output.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec.Clone())
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// find returns the attributes of the records whose message is msg.
func (r *records) find(msg string) []map[string]slog.Value {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]slog.Value
	for _, rec := range r.recs {
		if rec.Message != msg {
			continue
		}
		attrs := map[string]slog.Value{}
		rec.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value; return true })
		out = append(out, attrs)
	}
	return out
}

// newEngine returns an engine with the default compilation cache, so test runs after the
// first skip compiling the guests.
func newEngine(t testing.TB, log *records) *Engine {
	t.Helper()
	opts := Options{}
	if log != nil {
		opts.Logger = slog.New(log)
	}
	return newEngineWith(t, opts)
}

// newEngineWith is newEngine with opts.
func newEngineWith(t testing.TB, opts Options) *Engine {
	t.Helper()
	e, err := NewEngine(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

// open loads the artifact at path and opens its scorer called scorer for tenant.
func open(t testing.TB, e *Engine, path string, limits host.Limits, scorer, tenant string) *backend {
	t.Helper()
	ps, err := e.Load(context.Background(), manifestFor(t, path, limits))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Info().Name == scorer {
			b, err := p.Open(context.Background(), host.Tenant{Name: tenant}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close(context.Background()) })
			return b.(*backend)
		}
	}
	t.Fatalf("%s carries no scorer %q", path, scorer)
	return nil
}

// fakeJudge answers every prompt with "echo: " and the prompt.
type fakeJudge struct{}

func (fakeJudge) Complete(_ context.Context, reqs []sdk.CompletionRequest) ([]sdk.CompletionResponse, error) {
	out := make([]sdk.CompletionResponse, len(reqs))
	for i, r := range reqs {
		out[i].Content = "echo: " + r.Messages[len(r.Messages)-1].Content
	}
	return out, nil
}

func (fakeJudge) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = []float32{float32(len(s))}
	}
	return out, nil
}

// appendULEB appends v to b as a WebAssembly unsigned LEB128 number.
func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
