package wasm

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// errUnsupportedInstruction is wrapped when a body holds an instruction outside
// WebAssembly 2.0 (the features wazero enables by default); wazero would refuse it too.
var errUnsupportedInstruction = errors.New("instruction outside WebAssembly 2.0")

// Section ids, in the order a module must give them (custom sections, id 0, go anywhere).
const (
	secCustom    = 0
	secImport    = 2
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secCode      = 10
	secDataCount = 12
)

// sectionRank is a section's place in the required order.
func sectionRank(id byte) int {
	switch id {
	case secDataCount: // between element (9) and code (10)
		return 95
	default:
		return int(id) * 10
	}
}

type section struct {
	id      byte
	payload []byte
}

// wasmHeader is the magic and version every module this host runs starts with.
const wasmHeader = "\x00asm\x01\x00\x00\x00"

// splitSections returns a module's sections in order.
func splitSections(bin []byte) ([]section, error) {
	if len(bin) < len(wasmHeader) || string(bin[:len(wasmHeader)]) != wasmHeader {
		return nil, errors.New("not a WebAssembly 1.0 binary (bad magic or version)")
	}
	r := reader{b: bin[len(wasmHeader):]}
	var secs []section
	for !r.empty() {
		id := r.byte()
		payload := r.bytes(r.u32())
		if r.err != nil {
			return nil, fmt.Errorf("section %d: %w", id, r.err)
		}
		secs = append(secs, section{id, payload})
	}
	return secs, nil
}

// joinSections is the module made of secs.
func joinSections(secs []section, size int) []byte {
	out := make([]byte, 0, size)
	out = append(out, wasmHeader...)
	for _, s := range secs {
		out = append(out, s.id)
		out = binary.AppendUvarint(out, uint64(len(s.payload)))
		out = append(out, s.payload...)
	}
	return out
}

func hasSection(secs []section, id byte) bool {
	for _, s := range secs {
		if s.id == id {
			return true
		}
	}
	return false
}

// insertSection puts s before the first non-custom section that must follow it.
func insertSection(secs []section, s section) []section {
	for i, t := range secs {
		if t.id != secCustom && sectionRank(t.id) > sectionRank(s.id) {
			return append(secs[:i], append([]section{s}, secs[i:]...)...)
		}
	}
	return append(secs, s)
}

// appendVec appends a vector of n entries: the count, then rest (the existing entries),
// then extra.
func appendVec(b []byte, n int, rest, extra []byte) []byte {
	b = binary.AppendUvarint(b, uint64(n))
	return append(append(b, rest...), extra...)
}

func customName(payload []byte) string {
	r := reader{b: payload}
	name := r.bytes(r.u32())
	if r.err != nil {
		return ""
	}
	return string(name)
}

// reader reads a WebAssembly binary; the first error sticks and later reads return zeros.
type reader struct {
	b   []byte
	err error
}

func (r *reader) empty() bool { return len(r.b) == 0 || r.err != nil }

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.b = nil
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.fail(errors.New("unexpected end"))
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) bytes(n uint32) []byte {
	if uint64(n) > uint64(len(r.b)) {
		r.fail(fmt.Errorf("length %d exceeds the %d bytes left", n, len(r.b)))
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// u32 reads an unsigned LEB128 of at most 32 bits.
func (r *reader) u32() uint32 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || n > 5 || v > 1<<32-1 {
		r.fail(errors.New("bad unsigned LEB128"))
		return 0
	}
	r.b = r.b[n:]
	return uint32(v)
}

// sleb skips a signed LEB128 of at most maxBytes bytes.
func (r *reader) sleb(maxBytes int) {
	for i := range maxBytes {
		if i >= len(r.b) {
			break
		}
		if r.b[i]&0x80 == 0 {
			r.b = r.b[i+1:]
			return
		}
	}
	r.fail(errors.New("bad signed LEB128"))
}

func (r *reader) limits() {
	flags := r.byte()
	r.u32()
	if flags&1 != 0 {
		r.u32()
	}
}

func (r *reader) memarg() {
	align := r.u32()
	if align&0x40 != 0 { // multi-memory: a memory index follows
		r.u32()
	}
	r.u32() // offset
}

// immediates skips the immediates of opcode op.
func (r *reader) immediates(op byte) error {
	switch {
	case op == 0x02 || op == 0x03 || op == 0x04: // block, loop, if: block type (s33)
		r.sleb(5)
	case op == 0x0c || op == 0x0d: // br, br_if
		r.u32()
	case op == 0x0e: // br_table
		for range r.u32() {
			r.u32()
		}
		r.u32()
	case op == 0x10: // call
		r.u32()
	case op == 0x11: // call_indirect: type, table
		r.u32()
		r.u32()
	case op == 0x1c: // select t*
		r.bytes(r.u32())
	case op >= 0x20 && op <= 0x26: // local.*, global.*, table.get/set
		r.u32()
	case op >= 0x28 && op <= 0x3e: // loads and stores
		r.memarg()
	case op == 0x3f || op == 0x40: // memory.size, memory.grow
		r.u32()
	case op == 0x41:
		r.sleb(5)
	case op == 0x42:
		r.sleb(10)
	case op == 0x43:
		r.bytes(4)
	case op == 0x44:
		r.bytes(8)
	case op == 0xd0: // ref.null reftype
		r.byte()
	case op == 0xd2: // ref.func
		r.u32()
	case op == 0xfc:
		return r.prefixFC()
	case op == 0xfd:
		return r.prefixFD()
	case op <= 0x01, op == 0x05, op == 0x0b, op == 0x0f, op == 0x1a, op == 0x1b,
		op >= 0x45 && op <= 0xc4, op == 0xd1:
		// no immediates
	default:
		return fmt.Errorf("%w: opcode 0x%02x", errUnsupportedInstruction, op)
	}
	return r.err
}

// prefixFC skips a bulk-memory, table or saturating-truncation instruction.
func (r *reader) prefixFC() error {
	switch sub := r.u32(); {
	case sub <= 7: // trunc_sat
	case sub == 8: // memory.init data, mem
		r.u32()
		r.u32()
	case sub == 9, sub == 11, sub == 13, sub == 15, sub == 16, sub == 17: // one index
		r.u32()
	case sub == 10, sub == 12, sub == 14: // two indexes
		r.u32()
		r.u32()
	default:
		return fmt.Errorf("%w: opcode 0xfc %d", errUnsupportedInstruction, sub)
	}
	return r.err
}

// prefixFD skips a SIMD instruction.
func (r *reader) prefixFD() error {
	switch sub := r.u32(); {
	case sub <= 0x0b, sub == 0x5c, sub == 0x5d: // v128 loads and stores
		r.memarg()
	case sub == 0x0c, sub == 0x0d: // v128.const, i8x16.shuffle
		r.bytes(16)
	case sub >= 0x15 && sub <= 0x22: // extract_lane, replace_lane
		r.byte()
	case sub >= 0x54 && sub <= 0x5b: // load_lane, store_lane
		r.memarg()
		r.byte()
	case sub <= 0xff:
		// no immediates
	default:
		return fmt.Errorf("%w: opcode 0xfd %d", errUnsupportedInstruction, sub)
	}
	return r.err
}

// appendSLEB128 appends v in signed LEB128, as i32.const takes it (Go's varint is
// zigzag-encoded, which WebAssembly reads as another number).
func appendSLEB128(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
