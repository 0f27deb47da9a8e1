package wasm

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
)

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
	height   int64 // the operand stack's height
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
	w.frames = append(w.frames, frame{results: int64(len(t.results))})
	w.mergeVals = int64(len(t.results))
	for !r.empty() && len(w.frames) > 0 {
		at := len(body) - len(r.b)
		if err := w.step(g, &r, at, ref); err != nil {
			return err
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

// step reads the instruction at byte at of the body and applies its effect: on the
// operand stack's height, the open blocks, the locals written, and the calls made.
func (w *walker) step(g *callGraph, r *reader, at int, ref func(uint32)) error {
	op := r.byte()
	w.n++
	switch op {
	case 0x00, 0x0c, 0x0f: // unreachable, br, return
		if op == 0x0c {
			r.u32()
		}
		w.halt()
	case 0x02, 0x03, 0x04: // block, loop, if
		if op == 0x04 {
			w.pop(r, 1)
		}
		params, results, vector, err := g.blockType(r)
		if err != nil {
			return fmt.Errorf("at byte %d: %w", at, err)
		}
		w.vector = w.vector || vector
		w.pop(r, params)
		w.frames = append(w.frames, frame{opened: w.n, base: w.height, params: params, results: results})
		w.mergeVals += params + results
		w.push(params)
	case 0x05: // else
		f := &w.frames[len(w.frames)-1]
		w.height, f.unreachable = f.base, false
		w.push(f.params)
	case 0x0b: // end
		f := w.frames[len(w.frames)-1]
		w.frames = w.frames[:len(w.frames)-1]
		w.height = f.base
		w.push(f.results)
	case 0x0d: // br_if
		r.u32()
		w.pop(r, 1)
	case 0x0e: // br_table
		if err := r.immediates(op); err != nil {
			return err
		}
		w.pop(r, 1)
		w.halt()
	case 0x10: // call
		f := r.u32()
		if int(f) >= len(g.typeOf) {
			return fmt.Errorf("at byte %d: call of function %d, of %d", at, f, len(g.typeOf))
		}
		if !w.seenCall[f] {
			w.seenCall[f] = true
			w.calls = append(w.calls, f)
		}
		w.call(r, g.types[g.typeOf[f]])
	case 0x11: // call_indirect
		ti := r.u32()
		r.u32()
		if int(ti) >= len(g.types) {
			return fmt.Errorf("at byte %d: call_indirect of type %d, of %d", at, ti, len(g.types))
		}
		if !slices.Contains(w.indirect, ti) {
			w.indirect = append(w.indirect, ti)
		}
		w.pop(r, 1)
		w.call(r, g.types[ti])
	case 0x20: // local.get
		r.u32()
		w.push(1)
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
			w.pop(r, 1)
		}
	case 0xd2: // ref.func
		ref(r.u32())
		w.push(1)
		w.defs++
	default:
		pops, pushes, vector, err := stackEffect(op, r)
		if err != nil {
			return fmt.Errorf("at byte %d (opcode 0x%02x): %w", at, op, err)
		}
		w.vector = w.vector || vector
		w.pop(r, pops)
		w.push(pushes)
		w.defs += pushes
	}
	return nil
}

// pop takes n values off the operand stack; below the block's start it fails r, unless
// the rest of the block is unreachable (the stack is polymorphic there).
func (w *walker) pop(r *reader, n int64) {
	f := &w.frames[len(w.frames)-1]
	w.height -= n
	if w.height < f.base {
		if !f.unreachable {
			r.fail(errors.New("operand stack underflow"))
		}
		w.height = f.base
	}
}

// push puts n values on the operand stack.
func (w *walker) push(n int64) {
	w.height += n
	w.maxHeight = max(w.maxHeight, w.height)
}

// halt marks the rest of the block unreachable.
func (w *walker) halt() {
	f := &w.frames[len(w.frames)-1]
	w.height, f.unreachable = f.base, true
}

// call takes a call's arguments off the operand stack and puts its results on.
func (w *walker) call(r *reader, t funcType) {
	w.pop(r, int64(len(t.params)))
	w.push(int64(len(t.results)))
	w.defs += int64(len(t.results))
	w.outgoing = max(w.outgoing, slots(t.params)+slots(t.results))
	w.vector = w.vector || strings.IndexByte(t.params+t.results, 0x7b) >= 0
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
