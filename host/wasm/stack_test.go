package wasm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// TestStackBomb: a function that calls itself without end (the repro: before the bound,
// wazero grew the call's stack to about 400 MB and the call failed `trap`) fails
// limit_exceeded naming limits.stack_kib, its instance is discarded, and the next call
// gets a new one that fails the same way.
func TestStackBomb(t *testing.T) {
	e := newEngine(t, nil)
	b := open(t, e, watGuest(t, "stackbomb"), host.Limits{}, "stackbomb", "t")
	for i := range 2 {
		_, se := score(t, b, "", nil)
		wantCode(t, se, sdk.CodeLimitExceeded, fmt.Sprintf("call stack limit of %d KiB", DefaultStackKiB))
		wantCode(t, se, sdk.CodeLimitExceeded, "raise limits.stack_kib")
		if st := b.Stats(); st.Discarded != i+1 || st.Idle != 0 {
			t.Fatalf("after call %d: %+v, want the instance discarded", i+1, st)
		}
	}
}

// TestStackLimitAtLoad: a start function that recurses without end fails the load
// limit_exceeded.
func TestStackLimitAtLoad(t *testing.T) {
	e := newEngine(t, nil)
	_, err := e.Load(context.Background(), manifestFor(t, watGuest(t, "stackstart"), host.Limits{}))
	var se *sdk.Error
	if !errors.As(err, &se) || se.Code != sdk.CodeLimitExceeded || !strings.Contains(err.Error(), "the start function") ||
		!strings.Contains(se.Message, "call stack limit of") {
		t.Fatalf("Load: %v, want the start function failing limit_exceeded", err)
	}
}

// TestWazeroStackOverflowIsTheLimit: should wazero's own stack overflow ever come first,
// it is the stack limit too. wazero's interpreter overflows at a depth of a few thousand,
// which makes the error without taking the compiler's 400 MB.
func TestWazeroStackOverflowIsTheLimit(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	mod, err := rt.Instantiate(ctx, watBytes(t, `(module (func $f (export "f") (call $f)))`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = mod.ExportedFunction("f").Call(ctx)
	if !isStackOverflow(err) {
		t.Fatalf("wazero's overflow %v is not recognised", err)
	}
	if isStackOverflow(errors.New("wasm error: unreachable")) {
		t.Fatal("an unreachable trap is taken for a stack overflow")
	}
}

// TestStackCounterGivesBack: a function's charge is given back however it returns (at
// its end, by return, by a branch or a br_table to its own label, with several results):
// the instrumented module answers as the original does and leaves the counter where the
// host set it; with too small a limit, the call traps with the counter below zero.
func TestStackCounterGivesBack(t *testing.T) {
	ctx := context.Background()
	bin := watBytes(t, `(module (memory 1)
	  (func $multi (export "multi") (param i32) (result i32 i32)
	    (if (i32.eqz (local.get 0)) (then (return (i32.const 1) (i32.const 2))))
	    (call $multi (i32.sub (local.get 0) (i32.const 1)))
	    (i32.add (i32.const 1)))
	  (func $br (export "br") (param i32) (result i32)
	    (block
	      (br_if 0 (local.get 0))
	      (br 1 (i32.const 100)))
	    (i32.add (call $br (i32.sub (local.get 0) (i32.const 1))) (i32.const 1)))
	  (func $table (export "table") (param i32) (result i32)
	    (block (result i32)
	      (br_table 0 1 (i32.const 200) (i32.eqz (local.get 0))))
	    (drop)
	    (i32.add (call $table (i32.sub (local.get 0) (i32.const 1))) (i32.const 1))))`)
	out, _, err := instrument(bin)
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(false))
	defer rt.Close(ctx)
	plain, err := rt.InstantiateWithConfig(ctx, bin, wazero.NewModuleConfig().WithName("plain"))
	if err != nil {
		t.Fatal(err)
	}
	counted, err := rt.InstantiateWithConfig(ctx, out, wazero.NewModuleConfig().WithName("counted"))
	if err != nil {
		t.Fatal(err)
	}
	left := counted.ExportedGlobal(exportStack).(api.MutableGlobal)
	for _, name := range []string{"multi", "br", "table"} {
		left.Set(1 << 20)
		want, err := plain.ExportedFunction(name).Call(ctx, 5)
		if err != nil {
			t.Fatal(err)
		}
		got, err := counted.ExportedFunction(name).Call(ctx, 5)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("%s(5) = %v, %v; want %v as the original answers", name, got, err, want)
		}
		if v := left.Get(); v != 1<<20 {
			t.Fatalf("%s(5) left the counter at %d, want %d", name, v, 1<<20)
		}
		left.Set(40)
		if _, err := counted.ExportedFunction(name).Call(ctx, 1000); err == nil || int32(left.Get()) >= 0 {
			t.Fatalf("%s(1000) under 40 slots: %v, counter %d; want a trap with the counter below zero", name, err, int32(left.Get()))
		}
	}
}
