package wasm

import (
	"context"
	"errors"
	"fmt"
	"os"
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

// TestStackLimit: each scorer of stackdepth.wat recurses as deep as its config is long,
// through a function calling itself, two functions calling each other and call_indirect.
// The deepest that fits the limit scores and gives back every slot it took; one level
// more fails limit_exceeded. A tenant's lower limit applies the same way.
func TestStackLimit(t *testing.T) {
	path := watGuest(t, "stackdepth")
	bin, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	secs, err := splitSections(bin)
	if err != nil {
		t.Fatal(err)
	}
	g, err := readCallGraph(secs)
	if err != nil {
		t.Fatal(err)
	}
	charges := g.charges()
	// stackdepth.wat's functions: 0 $direct, 1 $ping, 2 $pong, 3 $viaTable, 7 score.
	const scoreFunc = 7
	levels := map[string][]int64{"direct": {charges[0]}, "mutual": {charges[1], charges[2]}, "indirect": {charges[3]}}
	for name, c := range levels {
		for _, v := range c {
			if v == 0 {
				t.Fatalf("%s: a recursing function is not charged: %v", name, charges)
			}
		}
	}
	// need is what a call of depth d takes: score's frame, then d+1 levels.
	need := func(scorer string, d int) int64 {
		n := charges[scoreFunc]
		for i := range d + 1 {
			n += levels[scorer][i%len(levels[scorer])]
		}
		return n
	}
	deepest := func(scorer string, kib int) int {
		d := 0
		for need(scorer, d+1) <= int64(stackSlots(kib)) {
			d++
		}
		return d
	}
	config := func(depth int) []byte { return []byte(`"` + strings.Repeat("a", depth-2) + `"`) }

	for _, tt := range []struct {
		name   string
		limits host.Limits // the manifest's
		tenant host.Limits
		kib    int // what applies
	}{
		{name: "manifest", limits: host.Limits{StackKiB: 8}, kib: 8},
		{name: "tenant lower than manifest", limits: host.Limits{StackKiB: 16}, tenant: host.Limits{StackKiB: 6}, kib: 6},
	} {
		e := newEngine(t, nil)
		ps, err := e.Load(context.Background(), manifestFor(t, path, tt.limits))
		if err != nil {
			t.Fatal(err)
		}
		for scorer := range levels {
			d := deepest(scorer, tt.kib)
			for _, c := range []struct {
				depth int
				fits  bool
			}{{d, true}, {d + 1, false}} {
				t.Run(fmt.Sprintf("%s/%s/depth %d fits %v", tt.name, scorer, c.depth, c.fits), func(t *testing.T) {
					hb, err := byName(t, ps, scorer).Open(context.Background(), host.Tenant{Name: fmt.Sprint(c.depth), Limits: tt.tenant}, config(c.depth))
					if err != nil {
						t.Fatal(err)
					}
					defer hb.Close(context.Background())
					b := hb.(*backend)
					res, se := score(t, b, "", nil)
					if !c.fits {
						wantCode(t, se, sdk.CodeLimitExceeded, fmt.Sprintf("call stack limit of %d KiB", tt.kib))
						return
					}
					wantScored(t, res, se)
					b.pool.mu.Lock()
					defer b.pool.mu.Unlock()
					if len(b.pool.idle) != 1 {
						t.Fatalf("%d idle instances, want the one that scored", len(b.pool.idle))
					}
					if left := int32(b.pool.idle[0].stackLeft.Get()); left != stackSlots(tt.kib) {
						t.Fatalf("the counter is %d after the call, want all %d slots given back", left, stackSlots(tt.kib))
					}
				})
			}
		}
	}
}

// TestStackLimitAtLoad: a start function that recurses without end fails the load
// limit_exceeded, and a manifest asking for a stack above the ceiling does not load.
func TestStackLimitAtLoad(t *testing.T) {
	e := newEngine(t, nil)
	_, err := e.Load(context.Background(), manifestFor(t, watGuest(t, "stackstart"), host.Limits{}))
	var se *sdk.Error
	if !errors.As(err, &se) || se.Code != sdk.CodeLimitExceeded || !strings.Contains(err.Error(), "the start function") ||
		!strings.Contains(se.Message, "call stack limit of") {
		t.Fatalf("Load: %v, want the start function failing limit_exceeded", err)
	}
	_, err = e.Load(context.Background(), manifestFor(t, watGuest(t, "ok"), host.Limits{StackKiB: MaxStackKiB + 1}))
	if !errors.Is(err, host.ErrOverCeiling) || !strings.Contains(err.Error(), fmt.Sprintf("limits.stack_kib is %d, the host allows at most %d", MaxStackKiB+1, MaxStackKiB)) {
		t.Fatalf("Load over the ceiling: %v, want %v naming limits.stack_kib", err, host.ErrOverCeiling)
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
