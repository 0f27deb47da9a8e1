package wasm

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
)

func TestAppendSLEB128(t *testing.T) {
	tests := []struct {
		v    int64
		want []byte
	}{
		{0, []byte{0x00}}, {1, []byte{0x01}}, {63, []byte{0x3f}}, {64, []byte{0xc0, 0x00}},
		{-1, []byte{0x7f}}, {-64, []byte{0x40}}, {-65, []byte{0xbf, 0x7f}},
		{checkPeriod, []byte{0x80, 0x20}}, // 4096: the fuel a module starts with
	}
	for _, tt := range tests {
		if got := appendSLEB128(nil, tt.v); !bytes.Equal(got, tt.want) {
			t.Errorf("appendSLEB128(%d) = % x, want % x", tt.v, got, tt.want)
		}
	}
}

// TestInstrument checks what instrument writes with wabt's own reader and with wazero's
// compiler, on every kind of guest the project has.
func TestInstrument(t *testing.T) {
	for _, tool := range []string{"wasm-validate", "wasm2wat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found (%v): install it with: apt-get install wabt", tool, err)
		}
	}
	guests := map[string]string{
		"go":        goGuest(t, "goguest", goGuestPkg),
		"c":         cGuest(t),
		"loop":      watGuest(t, "loop"),
		"loopstart": watGuest(t, "loopstart"),
		"recurse":   watGuest(t, "recurse"),
	}
	// The engine's settings and cache: the engine tests compile the same modules.
	e := newEngine(t, nil)
	rt := wazero.NewRuntimeWithConfig(context.Background(), wazero.NewRuntimeConfig().WithCloseOnContextDone(false).WithCompilationCache(e.cache))
	defer rt.Close(context.Background())
	for name, path := range guests {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			out, hasStart, err := instrument(in)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), name+".wasm")
			if err := os.WriteFile(file, out, 0o644); err != nil {
				t.Fatal(err)
			}
			if b, err := exec.Command("wasm-validate", file).CombinedOutput(); err != nil {
				t.Fatalf("wasm-validate: %v\n%s", err, b)
			}
			if _, err := rt.CompileModule(context.Background(), out); err != nil {
				t.Fatalf("wazero refuses the instrumented module: %v", err)
			}
			wat, err := exec.Command("wasm2wat", file).Output()
			if err != nil {
				t.Fatal(err)
			}
			text := string(wat)
			if hasStart != (name == "loopstart") || strings.Contains(text, "(start") != false {
				t.Errorf("hasStart %v; the start section must be gone and exported instead:\n%.2000s", hasStart, text)
			}
			if hasStart && !strings.Contains(text, `(export "`+exportStart+`" (func`) {
				t.Errorf("the start function is not exported as %s", exportStart)
			}
			loops, checks := strings.Count(text, " loop"), strings.Count(text, "i32.eqz\n")
			for _, g := range []string{exportFuel, exportStop, exportStack} {
				if !strings.Contains(text, `(export "`+g+`" (global`) {
					t.Errorf("no exported global %s", g)
				}
			}
			if checks < loops || checks == 0 {
				t.Errorf("%d checks for %d loops, want one at least per loop", checks, loops)
			}
		})
	}
}

func TestInstrumentRefuses(t *testing.T) {
	// A function body holding an atomic instruction (threads, not WebAssembly 2.0).
	atomic := []byte("\x00asm\x01\x00\x00\x00" +
		"\x01\x04\x01\x60\x00\x00" + // type: () -> ()
		"\x03\x02\x01\x00" + // one function of type 0
		"\x05\x03\x01\x00\x01" + // memory 1 page
		"\x0a\x09\x01\x07\x00\x41\x00\xfe\x00\x02\x0b") // body: i32.const 0, 0xfe ...
	if _, _, err := instrument(atomic); !errors.Is(err, errUnsupportedInstruction) {
		t.Errorf("instrument of an atomic instruction: %v, want %v", err, errUnsupportedInstruction)
	}
	if _, _, err := instrument([]byte("\x00asm\x02\x00\x00\x00")); err == nil {
		t.Error("instrument accepted a binary of another version")
	}
	if _, _, err := instrument(append([]byte("\x00asm\x01\x00\x00\x00"), 0x0a, 0x05, 0x01)); err == nil {
		t.Error("instrument accepted a truncated section")
	}
}
