package wasm

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/scorekit/scorekit/host"
)

// watBytes compiles a module given as WebAssembly text with wabt's wat2wasm.
func watBytes(t *testing.T, text string) []byte {
	t.Helper()
	if _, err := exec.LookPath("wat2wasm"); err != nil {
		t.Fatalf("wat2wasm not found (%v): install it with: apt-get install wabt", err)
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "m.wat"), filepath.Join(dir, "m.wasm")
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("wat2wasm", in, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBoundModule: what a module may make an instance allocate, in allowed/denied pairs.
// Where the module loads, its exported "grow" function asks for more table entries
// than the bound leaves, and then for exactly what it leaves: the first must answer -1,
// the second succeed, on wazero itself.
func TestBoundModule(t *testing.T) {
	const limit = 1000
	tests := []struct {
		name string
		wat  string
		// want is the error; empty: the module loads.
		want string
		// room is how many entries table 0 may still grow by under the bound.
		room uint64
	}{
		{name: "allowed: table without a maximum gets the whole bound",
			wat: `(table 10 funcref)`, room: limit - 10},
		{name: "allowed: a lower maximum of its own is kept",
			wat: `(table 10 20 funcref)`, room: 10},
		{name: "allowed: a higher maximum is lowered to the bound",
			wat: `(table 10 100000 funcref)`, room: limit - 10},
		{name: "allowed: two tables share what their minimums leave",
			wat: `(table 100 funcref) (table 300 funcref)`, room: (limit - 400) / 2},
		{name: "allowed: element segments within the bound",
			wat: `(table 4 funcref) (func $f) (elem (i32.const 0) $f $f $f $f) (elem $p func $f $f)`, room: limit - 4},
		{name: "denied: a table starting over the bound",
			wat: `(table 1001 funcref)`, want: "its tables start with 1001 entries, over the 1000"},
		{name: "denied: tables starting over the bound together",
			wat: `(table 600 funcref) (table 600 externref)`, want: "its tables start with 1200 entries"},
		{name: "denied: passive element segments over the bound",
			wat: `(func $f) (elem $p func ` + strings.Repeat("$f ", limit+1) + `)`, want: "element segments with 1001 entries"},
		{name: "denied: an imported table",
			wat: `(import "env" "t" (table 1 funcref))`, want: "table env.t: a plugin must define its own tables"},
		{name: "denied: too many locals",
			wat: `(func (local ` + strings.Repeat("i64 ", maxLocals+1) + `))`, want: "declares 50001 locals, at most 50000"},
	}
	rt := wazero.NewRuntime(context.Background())
	defer rt.Close(context.Background())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := "(module " + tt.wat
			if tt.want == "" {
				text += ` (func (export "grow") (param i32) (result i32) (table.grow 0 (ref.null func) (local.get 0)))`
			}
			out, err := boundModule(watBytes(t, text+")"), limit)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("boundModule: %v, want an error containing %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("boundModule: %v", err)
			}
			mod, err := rt.Instantiate(context.Background(), out)
			if err != nil {
				t.Fatalf("wazero refuses the bounded module: %v", err)
			}
			defer mod.Close(context.Background())
			grow := mod.ExportedFunction("grow")
			for _, step := range []struct {
				by   uint64
				want uint32
			}{{tt.room + 1, 0xffffffff}, {tt.room, 0}} {
				res, err := grow.Call(context.Background(), step.by)
				if err != nil {
					t.Fatal(err)
				}
				if got := uint32(res[0]); (got == 0xffffffff) != (step.want == 0xffffffff) {
					t.Errorf("table.grow by %d answered %d; want -1 only past the bound's room of %d", step.by, int32(got), tt.room)
				}
			}
		})
	}
}

// TestTableLimitAtLoad: an engine refuses, naming the limit and its option, a plugin whose
// tables could never fit, and loads one that grows them past it.
func TestTableLimitAtLoad(t *testing.T) {
	e := newEngine(t, nil)
	t.Run("denied: a table starting over MaxTableEntries", func(t *testing.T) {
		_, err := e.Load(context.Background(), manifestFor(t, watGuest(t, "bigtable"), host.Limits{}))
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "wasm.Options.MaxTableEntries") {
			t.Fatalf("Load: %v, want ErrTooLarge naming wasm.Options.MaxTableEntries", err)
		}
	})
	t.Run("allowed: a table growing past it", func(t *testing.T) {
		b := open(t, e, watGuest(t, "tablebomb"), host.Limits{}, "tablebomb", "t")
		res, se := score(t, b, "", nil)
		wantScored(t, res, se)
	})
}
