package wasm

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// The host bounds a guest's call stack through the module, as it bounds its running time
// (interrupt.go): wazero's compiler grows the stack of a call into the guest, a Go slice,
// by doubling it up to a fixed ceiling of about 400 MB, with no setting, so a function
// that calls itself without end took the host's RSS past 1 GB per call before it trapped,
// and the Go heap kept most of it. After Parity's stack-height limiter (wasm-instrument,
// for Substrate's contracts), each function gets a weight, a bound on the stack its call
// takes, and a counter of what the guest may still use, a mutable i32 global the host
// sets to the limit, is charged in the function's prologue, checked, and given back when
// the function returns:
//
//	global.get $left  i32.const -charge  i32.add  global.set $left
//	global.get $left  i32.const 0  i32.lt_s
//	if  unreachable  end
//	block (result ...)    ;; the body; a branch to the function's label lands here
//	  ...                 ;; every return is preceded by the give-back below
//	end
//	global.get $left  i32.const charge  i32.add  global.set $left
//
// The sequences leave the operand stack as they found it. A trap leaves the counter
// spent, which does not matter: an instance that trapped is discarded. The counter going
// below zero is what tells this trap from the guest's own traps and the deadline's.
//
// Weights are in slots of 8 bytes, and bound what wazero's compiler can make a frame
// take (walker.weight): Parity's weight, the locals and the deepest operand stack, does
// not, because wazero gives every value it spills a slot of its own
// (TestStackWeightsBoundFrames; RATIONALE.md, "Bounding a guest's call stack").
//
// Only functions that can be part of a recursion pay at run time: a function that is in
// no cycle of the call graph (call_indirect reaches every function of its type a table
// may hold) and that the host does not call itself (an export or the start function) is
// left as it is, and its weight, with the deepest chain of such functions it can call,
// is added to the charge of each charged function that can call it. The charges thus add
// up to at least the weights of every frame on the stack, whatever path the guest takes.
const (
	exportStack    = hostExportPrefix + "stack"
	exportStackLow = hostExportPrefix + "stack_low"

	// slotBytes is the unit of the weights and of the limit.
	slotBytes = 8
	// frameSlots is what every call frame takes besides its values: the return address
	// and the caller's frame pointer.
	frameSlots = 2
	// maxCharge caps a charge: one over it exceeds any limit the host accepts, so the
	// call traps all the same, and charges never overflow the counter.
	maxCharge = math.MaxInt32 / 2

	secType     = 1
	secFunction = 3
)

// funcType is a function type: its parameters' and results' value types.
type funcType struct{ params, results string }

// slots is the stack a vector of value types takes.
func slots(types string) int64 {
	n := int64(len(types))
	for i := range len(types) {
		if types[i] == 0x7b { // v128
			n++
		}
	}
	return n
}

// callGraph is what the stack bound needs to know of a module: its functions' types, its
// entries, and for each function defined in it, its weight and the calls it makes.
type callGraph struct {
	types    []funcType
	imported uint32   // functions imported; they come first in the index space
	typeOf   []uint32 // each function's type index
	entries  []uint32 // functions the host calls: exports and the start function
	refs     []uint32 // functions a table may hold (named in elements, globals, exports or ref.func)
	weight   []int64  // each defined function's weight
	calls    [][]uint32
	indirect [][]uint32 // type indexes each defined function's call_indirect name
}

// readCallGraph reads secs' types, imports, functions, exports, start, elements, globals
// and bodies.
func readCallGraph(secs []section) (*callGraph, error) {
	g := &callGraph{}
	seen := map[uint32]bool{}
	ref := func(f uint32) {
		if !seen[f] {
			seen[f] = true
			g.refs = append(g.refs, f)
		}
	}
	var code []byte
	for _, s := range secs {
		r := reader{b: s.payload}
		var err error
		switch s.id {
		case secType:
			err = g.readTypes(&r)
		case secImport:
			err = g.readImports(&r)
		case secFunction:
			for range r.u32() {
				g.typeOf = append(g.typeOf, r.u32())
			}
		case secExport:
			for range r.u32() {
				r.bytes(r.u32())
				kind, index := r.byte(), r.u32()
				if kind == 0x00 {
					g.entries = append(g.entries, index)
					ref(index)
				}
			}
		case secStart:
			g.entries = append(g.entries, r.u32())
		case secElement:
			err = readElementFuncs(&r, ref)
		case secGlobal:
			for range r.u32() {
				r.byte()
				r.byte()
				r.constFuncs(ref)
			}
		case secCode:
			code = s.payload
		}
		if err == nil {
			err = r.err
		}
		if err != nil {
			return nil, fmt.Errorf("section %d: %w", s.id, err)
		}
	}
	for _, t := range g.typeOf {
		if int(t) >= len(g.types) {
			return nil, fmt.Errorf("function of type %d: the module declares %d types", t, len(g.types))
		}
	}
	if err := g.readBodies(code, ref); err != nil {
		return nil, fmt.Errorf("code section: %w", err)
	}
	if int(g.imported)+len(g.weight) != len(g.typeOf) {
		return nil, fmt.Errorf("%d function bodies for %d functions", len(g.weight), len(g.typeOf)-int(g.imported))
	}
	for _, f := range append(g.refs, g.entries...) {
		if int(f) >= len(g.typeOf) {
			return nil, fmt.Errorf("function %d named, of %d", f, len(g.typeOf))
		}
	}
	return g, nil
}

func (g *callGraph) readTypes(r *reader) error {
	for range r.u32() {
		if form := r.byte(); form != 0x60 {
			return fmt.Errorf("type form 0x%02x: only function types are supported", form)
		}
		params := r.bytes(r.u32())
		results := r.bytes(r.u32())
		g.types = append(g.types, funcType{string(params), string(results)})
	}
	return r.err
}

func (g *callGraph) readImports(r *reader) error {
	for range r.u32() {
		r.bytes(r.u32())
		r.bytes(r.u32())
		switch kind := r.byte(); kind {
		case 0x00:
			g.typeOf = append(g.typeOf, r.u32())
			g.imported++
		case 0x01:
			r.byte()
			r.limits()
		case 0x02:
			r.limits()
		case 0x03:
			r.byte()
			r.byte()
		default:
			return fmt.Errorf("import kind 0x%02x unknown", kind)
		}
	}
	return r.err
}

// readElementFuncs calls ref with every function an element section names.
func readElementFuncs(r *reader, ref func(uint32)) error {
	for i := range r.u32() {
		flags := r.u32()
		if flags > 7 {
			return fmt.Errorf("element segment %d: flags %d unknown", i, flags)
		}
		if flags&3 == 2 {
			r.u32()
		}
		if flags&1 == 0 {
			r.constFuncs(ref)
		}
		if flags&3 != 0 {
			r.byte()
		}
		for range r.u32() {
			if flags&4 != 0 {
				r.constFuncs(ref)
			} else {
				ref(r.u32())
			}
			if r.err != nil {
				break
			}
		}
	}
	return r.err
}

// constFuncs skips a constant expression and its end, calling ref with the function of
// each ref.func in it.
func (r *reader) constFuncs(ref func(uint32)) {
	for !r.empty() {
		op := r.byte()
		switch op {
		case 0x0b:
			return
		case 0xd2:
			ref(r.u32())
			continue
		}
		if err := r.immediates(op); err != nil {
			r.fail(err)
		}
	}
	r.fail(errors.New("constant expression without end"))
}

// readBodies weighs every body of a code section and lists the calls it makes.
func (g *callGraph) readBodies(payload []byte, ref func(uint32)) error {
	r := reader{b: payload}
	n := r.u32()
	if r.err != nil {
		return r.err
	}
	g.weight = make([]int64, 0, n)
	g.calls = make([][]uint32, 0, n)
	g.indirect = make([][]uint32, 0, n)
	var w walker
	for i := range n {
		body := r.bytes(r.u32())
		if r.err != nil {
			return fmt.Errorf("function %d: %w", i, r.err)
		}
		f := g.imported + i
		if int(f) >= len(g.typeOf) {
			return fmt.Errorf("function %d has a body but no type", i)
		}
		if err := w.walk(g, body, g.types[g.typeOf[f]], ref); err != nil {
			return fmt.Errorf("function %d: %w", i, err)
		}
		g.weight = append(g.weight, w.weight())
		g.calls = append(g.calls, slices.Clone(w.calls))
		g.indirect = append(g.indirect, slices.Clone(w.indirect))
	}
	if !r.empty() {
		return fmt.Errorf("%d bytes after the last function body", len(r.b))
	}
	return nil
}

// A walker reads a function body for its weight and its calls. It follows the operand
// stack's height (WebAssembly's validation algorithm, without the types: each
// instruction pops and pushes a known number of values, a block starts at the height its
// parameters leave, and after an unconditional branch the stack is polymorphic, never
// below its block's start), and counts the values wazero's compiler may have to keep in
// the frame.
type walker struct {
	params    int64 // values
	locals    int64 // values declared
	maxHeight int64
	vector    bool // the body holds a v128 value or instruction
	// defs counts the values instructions define (local.get and local.tee define none);
	// phis, for each block, the locals written inside it (a block's end or a loop's head
	// needs a value for each); mergeVals the values blocks take and leave.
	defs, phis, mergeVals int64
	// outgoing is the most values one call passes and returns.
	outgoing int64
	calls    []uint32
	indirect []uint32

	n        int64 // instructions read so far
	frames   []frame
	written  []int64 // each local's last write, as n; -1 for none
	seenCall map[uint32]bool
}

type frame struct {
	opened      int64 // n when the block started
	base        int64 // the height below the block's parameters
	params      int64
	results     int64
	unreachable bool
}

// calleeSaved is the most registers a frame saves for its caller (arm64: 9 integer and
// 14 vector registers), two slots each.
const calleeSaved = 23

// weight bounds, in slots, the frame of the function walk read. wazero's compiler gives
// every value it spills a slot of its own, without sharing slots between values that
// are never live together, so the bound counts every value the function may hold: its
// parameters, locals, the values its instructions define and those its blocks merge, two
// slots each if any may be a v128; with the deepest operand stack as the least it counts
// (the weight of Parity's limiter). To that come the return address and frame pointer,
// the registers saved for the caller and the arguments and results of its largest call.
func (w *walker) weight() int64 {
	values := max(w.maxHeight, w.defs+w.phis+w.mergeVals)
	all := w.params + w.locals + values
	saved := 2 * min(all, calleeSaved)
	if w.vector {
		all *= 2
	}
	return min(frameSlots+all+saved+w.outgoing, maxCharge)
}

func (w *walker) walk(g *callGraph, body []byte, t funcType, ref func(uint32)) error {
	*w = walker{calls: w.calls[:0], indirect: w.indirect[:0], frames: w.frames[:0], written: w.written[:0], seenCall: w.seenCall}
	if w.seenCall == nil {
		w.seenCall = map[uint32]bool{}
	}
	clear(w.seenCall)
	w.params = int64(len(t.params))
	r := reader{b: body}
	for range r.u32() {
		n, typ := r.u32(), r.byte()
		w.locals += int64(n)
		if w.locals > maxLocals {
			return fmt.Errorf("%w: more than %d locals", ErrTooLarge, maxLocals)
		}
		w.vector = w.vector || typ == 0x7b
	}
	if r.err != nil {
		return fmt.Errorf("locals: %w", r.err)
	}
	for range w.params + w.locals {
		w.written = append(w.written, -1)
	}
	w.vector = w.vector || strings.IndexByte(t.params+t.results, 0x7b) >= 0
	h := int64(0)
	w.frames = append(w.frames, frame{results: int64(len(t.results))})
	w.mergeVals = int64(len(t.results))
	pop := func(n int64) {
		f := &w.frames[len(w.frames)-1]
		h -= n
		if h < f.base {
			if !f.unreachable {
				r.fail(errors.New("operand stack underflow"))
			}
			h = f.base
		}
	}
	push := func(n int64) {
		h += n
		w.maxHeight = max(w.maxHeight, h)
	}
	halt := func() { // the rest of the block is unreachable
		f := &w.frames[len(w.frames)-1]
		h, f.unreachable = f.base, true
	}
	call := func(t funcType) {
		pop(int64(len(t.params)))
		push(int64(len(t.results)))
		w.defs += int64(len(t.results))
		w.outgoing = max(w.outgoing, slots(t.params)+slots(t.results))
		w.vector = w.vector || strings.IndexByte(t.params+t.results, 0x7b) >= 0
	}
	for !r.empty() && len(w.frames) > 0 {
		at := len(body) - len(r.b)
		op := r.byte()
		w.n++
		switch op {
		case 0x00, 0x0c, 0x0f: // unreachable, br, return
			if op == 0x0c {
				r.u32()
			}
			halt()
		case 0x02, 0x03, 0x04: // block, loop, if
			if op == 0x04 {
				pop(1)
			}
			params, results, vector, err := g.blockType(&r)
			if err != nil {
				return fmt.Errorf("at byte %d: %w", at, err)
			}
			w.vector = w.vector || vector
			pop(params)
			w.frames = append(w.frames, frame{opened: w.n, base: h, params: params, results: results})
			w.mergeVals += params + results
			push(params)
		case 0x05: // else
			f := &w.frames[len(w.frames)-1]
			h, f.unreachable = f.base, false
			push(f.params)
		case 0x0b: // end
			f := w.frames[len(w.frames)-1]
			w.frames = w.frames[:len(w.frames)-1]
			h = f.base
			push(f.results)
		case 0x0d: // br_if
			r.u32()
			pop(1)
		case 0x0e: // br_table
			if err := r.immediates(op); err != nil {
				return err
			}
			pop(1)
			halt()
		case 0x10: // call
			f := r.u32()
			if int(f) >= len(g.typeOf) {
				return fmt.Errorf("at byte %d: call of function %d, of %d", at, f, len(g.typeOf))
			}
			if !w.seenCall[f] {
				w.seenCall[f] = true
				w.calls = append(w.calls, f)
			}
			call(g.types[g.typeOf[f]])
		case 0x11: // call_indirect
			ti := r.u32()
			r.u32()
			if int(ti) >= len(g.types) {
				return fmt.Errorf("at byte %d: call_indirect of type %d, of %d", at, ti, len(g.types))
			}
			if !slices.Contains(w.indirect, ti) {
				w.indirect = append(w.indirect, ti)
			}
			pop(1)
			call(g.types[ti])
		case 0x20: // local.get
			r.u32()
			push(1)
		case 0x21, 0x22: // local.set, local.tee
			x := r.u32()
			if int64(x) >= int64(len(w.written)) {
				return fmt.Errorf("at byte %d: local %d, of %d", at, x, len(w.written))
			}
			// The blocks opened since x was last written are counted now, and they are
			// the top of the stack.
			last := w.written[x]
			i, _ := slices.BinarySearchFunc(w.frames, last+1, func(f frame, n int64) int { return cmp.Compare(f.opened, n) })
			w.phis += int64(len(w.frames) - i)
			w.written[x] = w.n
			if op == 0x21 {
				pop(1)
			}
		case 0xd2: // ref.func
			ref(r.u32())
			push(1)
			w.defs++
		default:
			pops, pushes, vector, err := stackEffect(op, &r)
			if err != nil {
				return fmt.Errorf("at byte %d (opcode 0x%02x): %w", at, op, err)
			}
			w.vector = w.vector || vector
			pop(pops)
			push(pushes)
			w.defs += pushes
		}
		if r.err != nil {
			return fmt.Errorf("at byte %d: %w", at, r.err)
		}
	}
	if len(w.frames) > 0 || !r.empty() {
		return errors.New("body does not end where its bytes do")
	}
	return nil
}

// blockType reads a block type and returns how many values the block takes and leaves,
// and whether any is a v128.
func (g *callGraph) blockType(r *reader) (params, results int64, vector bool, err error) {
	if len(r.b) == 0 {
		return 0, 0, false, errors.New("unexpected end")
	}
	switch c := r.b[0]; {
	case c == 0x40:
		r.byte()
		return 0, 0, false, nil
	case c&0xc0 == 0x40: // a one-byte negative s33: a value type
		r.byte()
		return 0, 1, c == 0x7b, nil
	}
	v, n := binary.Uvarint(r.b) // a non-negative s33 below 2^32 reads as its unsigned LEB128
	if n <= 0 || n > 5 || v >= uint64(len(g.types)) || r.b[n-1]&0x40 != 0 {
		return 0, 0, false, errors.New("bad block type")
	}
	r.b = r.b[n:]
	t := g.types[v]
	return int64(len(t.params)), int64(len(t.results)), strings.IndexByte(t.params+t.results, 0x7b) >= 0, nil
}

// stackEffect reads the immediates of op and returns how many values it pops and pushes,
// and whether it handles v128 values.
func stackEffect(op byte, r *reader) (pops, pushes int64, vector bool, err error) {
	switch {
	case op == 0x01: // nop
	case op == 0x1a: // drop
		pops = 1
	case op == 0x1b: // select
		pops, pushes = 3, 1
	case op == 0x1c: // select t*
		types := r.bytes(r.u32())
		return 3, 1, slices.Contains(types, 0x7b), r.err
	case op == 0x23: // global.get
		pushes = 1
	case op == 0x24: // global.set
		pops = 1
	case op == 0x25: // table.get
		pops, pushes = 1, 1
	case op == 0x26: // table.set
		pops = 2
	case op >= 0x28 && op <= 0x35: // loads
		pops, pushes = 1, 1
	case op >= 0x36 && op <= 0x3e: // stores
		pops = 2
	case op == 0x3f: // memory.size
		pushes = 1
	case op == 0x40: // memory.grow
		pops, pushes = 1, 1
	case op >= 0x41 && op <= 0x44: // constants
		pushes = 1
	case op == 0x45, op == 0x50, // eqz
		op >= 0x67 && op <= 0x69, op >= 0x79 && op <= 0x7b, // clz, ctz, popcnt
		op >= 0x8b && op <= 0x91, op >= 0x99 && op <= 0x9f, // float unary
		op >= 0xa7 && op <= 0xc4, // conversions, sign extension
		op == 0xd1:               // ref.is_null
		pops, pushes = 1, 1
	case op >= 0x46 && op <= 0x4f, op >= 0x51 && op <= 0x66, // comparisons
		op >= 0x6a && op <= 0x78, op >= 0x7c && op <= 0x8a, // integer binary
		op >= 0x92 && op <= 0x98, op >= 0xa0 && op <= 0xa6: // float binary
		pops, pushes = 2, 1
	case op == 0xd0: // ref.null
		pushes = 1
	case op == 0xfc:
		pops, pushes, err = effectFC(r)
		return pops, pushes, false, err
	case op == 0xfd:
		pops, pushes, err = effectFD(r)
		return pops, pushes, true, err
	default:
		return 0, 0, false, fmt.Errorf("%w: opcode 0x%02x", errUnsupportedInstruction, op)
	}
	return pops, pushes, false, r.immediates(op)
}

// effectFC is stackEffect for the 0xfc prefix.
func effectFC(r *reader) (pops, pushes int64, err error) {
	sub, n := binary.Uvarint(r.b)
	if n <= 0 {
		return 0, 0, errors.New("bad 0xfc opcode")
	}
	switch {
	case sub <= 7: // trunc_sat
		pops, pushes = 1, 1
	case sub == 9, sub == 13: // data.drop, elem.drop
	case sub == 8, sub == 10, sub == 11, sub == 12, sub == 14, sub == 17: // init, copy, fill
		pops = 3
	case sub == 15: // table.grow
		pops, pushes = 2, 1
	case sub == 16: // table.size
		pushes = 1
	}
	return pops, pushes, r.prefixFC()
}

// effectFD is stackEffect for the 0xfd prefix (SIMD): a v128 counts as one value here
// and the weight doubles every value of a body that holds any.
func effectFD(r *reader) (pops, pushes int64, err error) {
	sub, n := binary.Uvarint(r.b)
	if n <= 0 {
		return 0, 0, errors.New("bad 0xfd opcode")
	}
	switch {
	case sub <= 0x0a, sub == 0x5c, sub == 0x5d: // loads
		pops, pushes = 1, 1
	case sub == 0x0b: // v128.store
		pops = 2
	case sub == 0x0c: // v128.const
		pushes = 1
	case sub >= 0x54 && sub <= 0x57: // load_lane
		pops, pushes = 2, 1
	case sub >= 0x58 && sub <= 0x5b: // store_lane
		pops = 2
	case sub == 0x52: // v128.bitselect
		pops, pushes = 3, 1
	case sub >= 0x0f && sub <= 0x14, // splat
		sub == 0x15, sub == 0x16, sub == 0x18, sub == 0x19, sub == 0x1b, sub == 0x1d, sub == 0x1f, sub == 0x21, // extract_lane
		sub == 0x4d, sub == 0x53, sub == 0x5e, sub == 0x5f: // not, any_true, demote, promote
		pops, pushes = 1, 1
	case simdUnary(sub):
		pops, pushes = 1, 1
	default: // every other SIMD instruction takes two operands and leaves one
		pops, pushes = 2, 1
	}
	return pops, pushes, r.prefixFD()
}

// simdUnary reports whether SIMD instruction sub (0x60 and up) takes one operand: the
// integer and float lane-wise unary operations, all_true, bitmask, extend, extadd and the
// conversions.
func simdUnary(sub uint64) bool {
	switch sub {
	case 0x60, 0x61, 0x62, 0x63, 0x64, // i8x16 abs, neg, popcnt, all_true, bitmask
		0x67, 0x68, 0x69, 0x6a, // f32x4 ceil, floor, trunc, nearest
		0x74, 0x75, 0x7a, // f64x2 ceil, floor, trunc
		0x7c, 0x7d, 0x7e, 0x7f, // extadd_pairwise
		0x80, 0x81, 0x83, 0x84, // i16x8 abs, neg, all_true, bitmask
		0x87, 0x88, 0x89, 0x8a, // i16x8 extend
		0x94,                   // f64x2 nearest
		0xa0, 0xa1, 0xa3, 0xa4, // i32x4 abs, neg, all_true, bitmask
		0xa7, 0xa8, 0xa9, 0xaa, // i32x4 extend
		0xc0, 0xc1, 0xc3, 0xc4, // i64x2 abs, neg, all_true, bitmask
		0xc7, 0xc8, 0xc9, 0xca, // i64x2 extend
		0xe0, 0xe1, 0xe3, // f32x4 abs, neg, sqrt
		0xec, 0xed, 0xef, // f64x2 abs, neg, sqrt
		0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff: // conversions
		return true
	}
	return false
}

// charges returns the charge of each function defined in the module: 0 for one left
// uncharged (see the comment at the top of the file).
func (g *callGraph) charges() []int64 {
	n := uint32(len(g.typeOf))
	// Nodes: the functions, then one per function type that call_indirect names, which
	// leads to the functions of that type (compared by structure, as call_indirect
	// does) that a table may hold.
	typeNode := map[funcType]uint32{}
	var typeSucc [][]uint32
	node := func(t funcType) uint32 {
		v, ok := typeNode[t]
		if !ok {
			v = n + uint32(len(typeSucc))
			typeNode[t] = v
			typeSucc = append(typeSucc, nil)
		}
		return v
	}
	succ := make([][]uint32, len(g.weight))
	for i := range g.weight {
		succ[i] = append(succ[i], g.calls[i]...)
		for _, ti := range g.indirect[i] {
			succ[i] = append(succ[i], node(g.types[ti]))
		}
	}
	for _, f := range g.refs {
		if v, ok := typeNode[g.types[g.typeOf[f]]]; ok {
			typeSucc[v-n] = append(typeSucc[v-n], f)
		}
	}
	edges := func(v uint32) []uint32 {
		switch {
		case v < g.imported:
			return nil
		case v < n:
			return succ[v-g.imported]
		default:
			return typeSucc[v-n]
		}
	}
	entry := make([]bool, n)
	for _, f := range g.entries {
		entry[f] = true
	}

	// deep[v]: the stack that v and the uncharged functions it can call may take, beyond
	// what charges count: 0 for a charged function.
	deep := make([]int64, int(n)+len(typeSucc))
	charged := make([]bool, n)
	for _, scc := range stronglyConnected(int(n)+len(typeSucc), edges) {
		cycle := len(scc) > 1 || slices.Contains(edges(scc[0]), scc[0])
		for _, v := range scc {
			switch {
			case v < g.imported: // a host function: its arguments and results
				t := g.types[g.typeOf[v]]
				deep[v] = frameSlots + slots(t.params) + slots(t.results)
			case v < n:
				charged[v] = cycle || entry[v]
			}
		}
		for _, v := range scc { // successors within scc are charged, or type nodes
			if v < g.imported || v < n && charged[v] {
				continue
			}
			d := int64(0)
			for _, s := range edges(v) {
				d = max(d, deep[s])
			}
			if v < n {
				d += g.weight[v-g.imported]
			}
			deep[v] = min(d, maxCharge)
		}
	}
	out := make([]int64, len(g.weight))
	for i := range g.weight {
		f := g.imported + uint32(i)
		if !charged[f] {
			continue
		}
		d := int64(0)
		for _, s := range succ[i] {
			d = max(d, deep[s])
		}
		out[i] = min(g.weight[i]+d, maxCharge)
	}
	return out
}

// stronglyConnected returns the strongly connected components of a graph of n nodes,
// each successor before its predecessors (Tarjan's algorithm, without recursion: a
// module's call chains can be deeper than a goroutine's stack should be).
func stronglyConnected(n int, edges func(uint32) []uint32) [][]uint32 {
	const unvisited = -1
	index := make([]int32, n)
	low := make([]int32, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = unvisited
	}
	var stack []uint32
	var out [][]uint32
	type visit struct {
		v    uint32
		next int // the next successor to look at
	}
	var work []visit
	next := int32(0)
	for root := range uint32(n) {
		if index[root] != unvisited {
			continue
		}
		work = append(work, visit{v: root})
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(work) > 0 {
			top := &work[len(work)-1]
			es := edges(top.v)
			if top.next < len(es) {
				w := es[top.next]
				top.next++
				switch {
				case index[w] == unvisited:
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					work = append(work, visit{v: w})
				case onStack[w]:
					low[top.v] = min(low[top.v], index[w])
				}
				continue
			}
			v := top.v
			work = work[:len(work)-1]
			if len(work) > 0 {
				p := work[len(work)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] == index[v] {
				var scc []uint32
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					scc = append(scc, w)
					if w == v {
						break
					}
				}
				out = append(out, scc)
			}
		}
	}
	return out
}

// stackInstrumentation changes what instrument adds for the stack bound, for tests and
// benchmarks: peak also keeps the counter's lowest value in a global exported as
// exportStackLow (instance.stackPeak); off charges nothing, to measure what the bound
// costs.
type stackInstrumentation struct{ peak, off bool }

// stackCode writes the stack counter's sequences for one function.
type stackCode struct {
	left, low uint32 // the counter's global, and the lowest value's (with peak)
	peak      bool
	charge    int64
	blockType []byte // the type of the block around the body: the function's results
}

// prologue charges the counter and traps if it went below zero.
func (s stackCode) prologue(b []byte) []byte {
	b = s.add(b, -s.charge)
	if s.peak { // if left < low { low = left }
		b = s.get(s.get(b, s.left), s.low)
		b = append(b, 0x48, 0x04, 0x40) // i32.lt_s, if
		b = s.set(s.get(b, s.left), s.low)
		b = append(b, 0x0b)
	}
	b = append(s.get(b, s.left), 0x41, 0x00, 0x48) // i32.const 0, i32.lt_s
	return append(b, 0x04, 0x40, 0x00, 0x0b)       // if, unreachable, end
}

// epilogue gives the charge back.
func (s stackCode) epilogue(b []byte) []byte { return s.add(b, s.charge) }

// add adds v to the counter: global.get, i32.const v, i32.add, global.set.
func (s stackCode) add(b []byte, v int64) []byte {
	b = appendSLEB128(append(s.get(b, s.left), 0x41), v)
	return s.set(append(b, 0x6a), s.left)
}

func (stackCode) get(b []byte, g uint32) []byte {
	return binary.AppendUvarint(append(b, 0x23), uint64(g))
}

func (stackCode) set(b []byte, g uint32) []byte {
	return binary.AppendUvarint(append(b, 0x24), uint64(g))
}

// wrapTypes returns the block type that wraps each charged function's body, its results,
// and the types the module must add for them: a function with more than one result needs
// a type of no parameters and those results.
func (g *callGraph) wrapTypes(charges []int64) (blockTypes, extra [][]byte) {
	blockTypes = make([][]byte, len(charges))
	index := map[string]uint32{}
	for i := len(g.types) - 1; i >= 0; i-- {
		if t := g.types[i]; t.params == "" {
			index[t.results] = uint32(i)
		}
	}
	for i, c := range charges {
		if c == 0 {
			continue
		}
		results := g.types[g.typeOf[g.imported+uint32(i)]].results
		switch len(results) {
		case 0:
			blockTypes[i] = []byte{0x40}
		case 1:
			blockTypes[i] = []byte{results[0]}
		default:
			ti, ok := index[results]
			if !ok {
				ti = uint32(len(g.types) + len(extra))
				index[results] = ti
				t := binary.AppendUvarint([]byte{0x60, 0x00}, uint64(len(results)))
				extra = append(extra, append(t, results...))
			}
			blockTypes[i] = appendSLEB128(nil, int64(ti))
		}
	}
	return blockTypes, extra
}

// DefaultStackKiB is the call stack a guest's call may use when neither the manifest nor
// the engine's Options.Limits set limits.stack_kib; MaxStackKiB is its ceiling when the
// engine's Options.Ceilings set none.
const (
	DefaultStackKiB = 4096
	MaxStackKiB     = 16384
)

// stackSlots is the counter's starting value for a limit of kib.
func stackSlots(kib int) int32 {
	return int32(min(int64(kib)*1024/slotBytes, maxCharge))
}

// stackLimitError is the failure of a call that went past the limit of kib.
func stackLimitError(kib int) *sdk.Error {
	return &sdk.Error{Code: sdk.CodeLimitExceeded, Message: fmt.Sprintf(
		"call stack limit of %d KiB reached (a recursion too deep); raise limits.stack_kib in the manifest, within the host's ceiling, or recurse less deeply", kib)}
}

// isStackOverflow reports whether err is wazero's own stack overflow, which the counter
// should always come before.
func isStackOverflow(err error) bool {
	return err != nil && strings.Contains(err.Error(), "wasm error: stack overflow")
}

// stackHostBytes is the most host memory the stack of a call under a limit of kib keeps:
// wazero grows the stack, a Go slice, to twice its length and a frame when a call needs
// more, so it ends below twice the limit and a frame; the next call reuses it.
func stackHostBytes(kib int) int64 { return 2 * int64(kib) << 10 }
