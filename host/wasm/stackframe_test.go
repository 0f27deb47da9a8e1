package wasm

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// frameShapes are functions built to make wazero's compiler give a frame as large as it
// can for their weight: many parameters, locals and operand values live across the call,
// a value defined per instruction (each spilled to a slot of its own), a local written in
// many nested loops (a merged value per loop and local), v128 values, many results, a
// large call from inside the recursion. Each module exports f(depth) -> i64, which
// recurses depth times through $r (and $s, for two functions in the cycle).
func frameShapes() map[string]string {
	repeat := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(f(i))
		}
		return b.String()
	}
	const base = `(if (result i64) (i64.eqz (local.get 0)) (then (i64.const 0)) (else %s))`
	recurse := `(call $r (i64.sub (local.get 0) (i64.const 1)))`
	sumAfter := func(n, first int, inner string) string { // local.get first..first+n-1 added to inner
		return repeat(n, func(i int) string { return fmt.Sprintf("(i64.add (local.get %d) ", first+i) }) + inner + strings.Repeat(")", n)
	}
	entry := `(func (export "f") (param i64) (result i64) (call $r (local.get 0)))`
	return map[string]string{
		"minimal": `(module (func $r (param i64) (result i64) ` + fmt.Sprintf(base, recurse) + `) ` + entry + `)`,
		"params": `(module (func $r (param i64) ` + strings.Repeat("(param i64) ", 64) + `(result i64) ` +
			fmt.Sprintf(base, sumAfter(64, 1, `(call $r (i64.sub (local.get 0) (i64.const 1)) `+repeat(64, func(i int) string { return fmt.Sprintf("(local.get %d)", i+1) })+`)`)) + `)
			(func (export "f") (param i64) (result i64) (call $r (local.get 0) ` + strings.Repeat("(i64.const 1)", 64) + `)))`,
		"locals": `(module (func $r (param i64) (result i64) (local ` + strings.Repeat("i64 ", 256) + `)` +
			repeat(256, func(i int) string {
				return fmt.Sprintf("(local.set %d (i64.mul (local.get 0) (i64.const %d)))", i+1, i+3)
			}) +
			fmt.Sprintf(base, sumAfter(256, 1, recurse)) + `) ` + entry + `)`,
		"operands": `(module (func $r (param i64) (result i64) ` +
			fmt.Sprintf(base, repeat(256, func(i int) string { return fmt.Sprintf("(i64.mul (local.get 0) (i64.const %d))", i+3) })+recurse+strings.Repeat(" i64.add", 256)) + `) ` + entry + `)`,
		"spills": `(module (func $g (param i64) (result i64) (local.get 0))
			(func $r (param i64) (result i64) (local i64 i64) (local.set 1 (local.get 0)) ` +
			repeat(1000, func(i int) string {
				return fmt.Sprintf("(local.set 1 (i64.add (local.get 1) (i64.const %d))) (local.set 2 (i64.add (local.get 2) (call $g (local.get 1))))", i+1)
			}) +
			fmt.Sprintf(base, `(i64.add (local.get 2) (i64.add (local.get 1) `+recurse+`))`) + `) ` + entry + `)`,
		"loops": `(module (func $g (param i64) (result i64) (local.get 0))
			(func $r (param i64) (result i64) (local ` + strings.Repeat("i64 ", 40) + `)` +
			repeat(40, func(k int) string { return fmt.Sprintf("(loop $l%d (drop (call $g (local.get 0)))", k) }) +
			repeat(40, func(i int) string {
				return fmt.Sprintf("(local.set %d (i64.add (local.get %d) (i64.const 1)))", i+1, i+1)
			}) +
			repeat(40, func(k int) string { return fmt.Sprintf("(br_if $l%d (i64.eqz (local.get %d))))", 39-k, 1+(39-k)) }) +
			fmt.Sprintf(base, sumAfter(40, 1, recurse)) + `) ` + entry + `)`,
		"vectors": `(module (func $r (param i64) (result i64) (local ` + strings.Repeat("v128 ", 64) + `)` +
			repeat(64, func(i int) string {
				return fmt.Sprintf("(local.set %d (i64x2.splat (i64.mul (local.get 0) (i64.const %d))))", i+1, i+3)
			}) +
			fmt.Sprintf(base, repeat(64, func(i int) string { return fmt.Sprintf("(i64.add (i64x2.extract_lane 0 (local.get %d)) ", i+1) })+recurse+strings.Repeat(")", 64)) + `) ` + entry + `)`,
		"results": `(module (type $res (func (result ` + strings.Repeat("i64 ", 64) + `)))
			(func $r (param i64) (result ` + strings.Repeat("i64 ", 64) + `)
			  (if (type $res) (i64.eqz (local.get 0)) (then ` + strings.Repeat("(i64.const 0)", 64) + `)
			    (else (call $r (i64.sub (local.get 0) (i64.const 1))))))
			(func (export "f") (param i64) (result i64) (call $r (local.get 0)) ` + strings.Repeat("i64.add ", 63) + `))`,
		"memory and division": `(module (memory 1) (func $r (param i64) (result i64) (local ` + strings.Repeat("i64 ", 128) + `)` +
			repeat(128, func(i int) string {
				return fmt.Sprintf("(local.set %d (i64.div_s (i64.load offset=%d (i32.const 0)) (i64.or (local.get 0) (i64.const 1))))", i+1, 8*i)
			}) +
			fmt.Sprintf(base, sumAfter(128, 1, `(select `+recurse+` (i64.const 1) (i32.wrap_i64 (local.get 0)))`)) + `) ` + entry + `)`,
		"block results": `(module (type $res (func (result ` + strings.Repeat("i64 ", 16) + `)))
			(func $g (param i64) (result i64) (local.get 0))
			(func $r (param i64) (result i64) ` +
			repeat(24, func(k int) string { return "(block (type $res) (drop (call $g (local.get 0))) " }) +
			strings.Repeat("(i64.mul (local.get 0) (i64.const 7)) ", 16) + strings.Repeat(")", 24) +
			fmt.Sprintf(base, recurse) + strings.Repeat(" i64.add", 16) + `) ` + entry + `)`,
		"table": `(module (type $t (func (param i64) (result i64))) (table 1 funcref) (elem (i32.const 0) $r)
			(func $r (param i64) (result i64) (local i64 i64) (local.set 1 (i64.mul (local.get 0) (i64.const 3)))
			  ` + fmt.Sprintf(base, `(i64.add (local.get 1) (call_indirect (type $t) (i64.sub (local.get 0) (i64.const 1)) (i32.const 0)))`) + `) ` + entry + `)`,
		"wide call": `(module (func $g (param ` + strings.Repeat("i64 ", 200) + `) (result i64) (local.get 0))
			(func $r (param i64) (result i64) (drop (call $g ` + strings.Repeat("(local.get 0)", 200) + `)) ` + fmt.Sprintf(base, recurse) + `) ` + entry + `)`,
		"two functions": `(module (func $r (param i64) (result i64) (local i64 i64 i64) ` +
			`(local.set 1 (i64.mul (local.get 0) (i64.const 3))) ` + fmt.Sprintf(base, `(i64.add (local.get 1) (call $s (i64.sub (local.get 0) (i64.const 1))))`) + `)
			(func $s (param i64) (result i64) ` + fmt.Sprintf(base, recurse) + `) ` + entry + `)`,
	}
}

// TestStackWeightsBoundFrames measures the frames wazero's compiler gives the shapes
// above, unmodified, and checks that each is within its weight (stack.go): the bound on
// host memory that limits.stack_kib means rests on it. A frame's size is found from the
// depths at which the call's stack (a Go slice wazero doubles) grows; its length is read
// by reflection, since wazero shows it nowhere else (github.com/tetratelabs/wazero at the
// version go.mod names: internal/engine/wazevo's callEngine.stack).
func TestStackWeightsBoundFrames(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer rt.Close(ctx)
	for name, text := range frameShapes() {
		t.Run(name, func(t *testing.T) {
			bin := watBytes(t, text)
			secs, err := splitSections(bin)
			if err != nil {
				t.Fatal(err)
			}
			g, err := readCallGraph(secs)
			if err != nil {
				t.Fatal(err)
			}
			weight := recursionWeight(t, g)
			mod, err := rt.Instantiate(ctx, bin)
			if err != nil {
				t.Fatal(err)
			}
			defer mod.Close(ctx)
			frame := frameBytes(t, mod)
			t.Logf("%s: %.0f bytes a level, weight %d slots (%d bytes): %.2f bytes a slot", name, frame, weight, weight*slotBytes, frame/float64(weight))
			if frame > float64(weight*slotBytes) {
				t.Errorf("a level of the recursion takes %.0f bytes of wazero's stack, over its weight of %d slots (%d bytes)", frame, weight, weight*slotBytes)
			}
		})
	}
}

// recursionWeight is the weight of one level of a shape's recursion: the functions in
// its cycle.
func recursionWeight(t *testing.T, g *callGraph) int64 {
	n := uint32(len(g.typeOf))
	sum := int64(0)
	edges := func(v uint32) []uint32 { // call_indirect: any function a table holds
		if v < g.imported {
			return nil
		}
		if len(g.indirect[v-g.imported]) > 0 {
			return append(slices.Clone(g.calls[v-g.imported]), g.refs...)
		}
		return g.calls[v-g.imported]
	}
	for _, scc := range stronglyConnected(int(n), edges) {
		if len(scc) > 1 || slices.Contains(edges(scc[0]), scc[0]) {
			for _, f := range scc {
				sum += g.weight[f-g.imported]
			}
		}
	}
	if sum == 0 {
		t.Fatal("the shape does not recurse")
	}
	return sum
}

// frameBytes finds the bytes of wazero's stack one level of mod's recursion takes, from
// the depths at which the stack's length changes: the k-th growth comes at the depth
// where the frames outgrow the length before it.
func frameBytes(t *testing.T, mod api.Module) float64 {
	lengthAt := func(depth uint64) int {
		fn := mod.ExportedFunction("f") // a new call engine, with a new stack
		if _, err := fn.Call(context.Background(), depth); err != nil {
			t.Fatalf("f(%d): %v", depth, err)
		}
		v := reflect.ValueOf(fn).Elem().FieldByName("stack")
		if !v.IsValid() || v.Kind() != reflect.Slice {
			t.Fatalf("%T has no stack slice: wazero changed; see how it keeps a call's stack now", fn)
		}
		return v.Len()
	}
	type growth struct {
		depth  uint64
		length int
	}
	var steps []growth
	depth, length := uint64(1), lengthAt(1)
	for len(steps) < 3 {
		lo, hi := depth, depth
		for lengthAt(hi) == length {
			lo, hi = hi, hi*2
		}
		for lo+1 < hi {
			if mid := (lo + hi) / 2; lengthAt(mid) == length {
				lo = mid
			} else {
				hi = mid
			}
		}
		depth, length = hi, lengthAt(hi)
		steps = append(steps, growth{depth, length})
	}
	// The second growth comes when the levels fill the first growth's length, the third
	// when they fill the second's: the levels between took the difference.
	return float64(steps[1].length-steps[0].length) / float64(steps[2].depth-steps[1].depth)
}
