package wasm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// The host stops a guest at its deadline through checks it adds to the module before
// compiling it, instead of wazero's WithCloseOnContextDone. wazero implements that option
// by leaving native code for Go at the head of every loop iteration, which made a Go
// guest's calls 3-8x slower (RATIONALE.md, "Stopping a guest at its deadline"). Here a
// check costs a decrement and a branch. instrument adds two mutable i32 globals, a fuel
// counter and a stop flag (exported as exportFuel and exportStop), and inserts
//
//	global.get $fuel  i32.const 1  i32.sub  global.set $fuel
//	global.get $fuel  i32.eqz
//	if                                  ;; every checkPeriod checks
//	  i32.const checkPeriod  global.set $fuel
//	  i32.const 0  memory.grow  drop    ;; a call into the host's Go code
//	  global.get $stop
//	  if  unreachable  end
//	end
//
// at the head of every loop, at the entry of every function that does not begin with a
// loop, and after every straightLine instructions without one. A guest runs without bound
// only through a loop or a call (recursion), so no more than checkPeriod x straightLine
// instructions pass between two visits to Go code, where the Go scheduler can preempt
// the goroutine: native code cannot be preempted, and a guest that never left it would
// stall the host's garbage collector, and with it the host. When a call's context is
// done, the host sets $stop and empties $fuel; the guest traps at its next check and the
// host reports the deadline.
//
// A module's start function (WebAssembly's start section) would run inside instantiation,
// before the host holds the instance and so before it can stop it: instrument removes
// the start section and exports the function as exportStart, which the host calls right
// after instantiation, under a deadline, as instantiation would have.
const (
	exportStop  = hostExportPrefix + "stop"
	exportFuel  = hostExportPrefix + "fuel"
	exportStart = hostExportPrefix + "start"
	// hostExportPrefix starts the names the host adds; a guest may not export them.
	hostExportPrefix = "scorekit_host_"

	// checkPeriod is how many checks pass between visits to the host.
	checkPeriod = 4096
	// straightLine is the most instructions a function runs between two checks.
	straightLine = 1000
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

// instrument returns bin with the interrupt check and the stack bound added (see the
// comments above and in stack.go), and whether the module had a start function, now
// exported as exportStart.
func instrument(bin []byte) (out []byte, hasStart bool, err error) {
	return instrumentWith(bin, stackInstrumentation{})
}

// instrumentWith is instrument with the stack bound's instrumentation changed by o.
func instrumentWith(bin []byte, o stackInstrumentation) (out []byte, hasStart bool, err error) {
	secs, err := splitSections(bin)
	if err != nil {
		return nil, false, err
	}
	graph, err := readCallGraph(secs)
	if err != nil {
		return nil, false, err
	}
	charges := graph.charges()
	if o.off {
		clear(charges)
	}
	secs = slices.DeleteFunc(secs, func(s section) bool {
		// DWARF describes code offsets the checks move; drop it rather than lie.
		return s.id == secCustom && strings.HasPrefix(customName(s.payload), ".debug_")
	})

	importedGlobals, definedGlobals, hasMemory := 0, 0, false
	var globalEntries []byte // the global section after its count
	startFunc := uint32(0)
	var exports [][]byte
	for _, s := range secs {
		switch s.id {
		case secImport:
			var memories int
			if importedGlobals, memories, err = countImports(s.payload); err != nil {
				return nil, false, fmt.Errorf("import section: %w", err)
			}
			hasMemory = hasMemory || memories > 0
		case secMemory:
			r := reader{b: s.payload}
			hasMemory = hasMemory || r.u32() > 0
		case secGlobal:
			r := reader{b: s.payload}
			definedGlobals, globalEntries = int(r.u32()), r.b
			if r.err != nil {
				return nil, false, fmt.Errorf("global section: %w", r.err)
			}
		case secExport:
			if exports, err = exportEntries(s.payload); err != nil {
				return nil, false, fmt.Errorf("export section: %w", err)
			}
		case secStart:
			r := reader{b: s.payload}
			startFunc, hasStart = r.u32(), true
			if r.err != nil {
				return nil, false, fmt.Errorf("start section: %w", r.err)
			}
		}
	}
	fuel := uint32(importedGlobals + definedGlobals)
	st := stackCode{left: fuel + 2, low: fuel + 3, peak: o.peak}

	// The new globals, mutable i32s: the fuel, initialized to checkPeriod, the stop flag
	// and the stack counter, initialized to 0 (the host sets the counter to its limit
	// before any call), and for measurements the counter's lowest value.
	added := 3
	globals := appendSLEB128([]byte{0x7f, 0x01, 0x41}, checkPeriod)
	globals = append(globals, 0x0b, 0x7f, 0x01, 0x41, 0x00, 0x0b, 0x7f, 0x01, 0x41, 0x00, 0x0b)
	exports = append(exports, exportEntry(exportFuel, 0x03, fuel), exportEntry(exportStop, 0x03, fuel+1),
		exportEntry(exportStack, 0x03, st.left))
	if o.peak {
		added++
		globals = appendSLEB128(append(globals, 0x7f, 0x01, 0x41), math.MaxInt32)
		globals = append(globals, 0x0b)
		exports = append(exports, exportEntry(exportStackLow, 0x03, st.low))
	}
	if hasStart {
		exports = append(exports, exportEntry(exportStart, 0x00, startFunc))
	}
	blockTypes, extraTypes := graph.wrapTypes(charges)

	var kept []section
	for _, s := range secs {
		switch s.id {
		case secType:
			if len(extraTypes) > 0 {
				r := reader{b: s.payload}
				n := r.u32()
				s.payload = appendVec(nil, int(n)+len(extraTypes), r.b, slices.Concat(extraTypes...))
			}
		case secGlobal:
			s.payload = appendVec(nil, definedGlobals+added, globalEntries, globals)
		case secExport:
			s.payload = nil // rebuilt below
		case secStart:
			continue
		case secCode:
			if s.payload, err = instrumentCode(s.payload, checkCode(fuel, fuel+1, hasMemory), st, charges, blockTypes); err != nil {
				return nil, false, fmt.Errorf("code section: %w", err)
			}
		}
		kept = append(kept, s)
	}
	if !hasSection(secs, secGlobal) {
		kept = insertSection(kept, section{secGlobal, appendVec(nil, added, nil, globals)})
	}
	exportPayload := binary.AppendUvarint(nil, uint64(len(exports)))
	for _, e := range exports {
		exportPayload = append(exportPayload, e...)
	}
	if hasSection(kept, secExport) {
		for i := range kept {
			if kept[i].id == secExport {
				kept[i].payload = exportPayload
			}
		}
	} else {
		kept = insertSection(kept, section{secExport, exportPayload})
	}

	return joinSections(kept, len(bin)+len(bin)/16), hasStart, nil
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

// countImports counts the globals and memories a module imports.
func countImports(payload []byte) (globals, memories int, err error) {
	r := reader{b: payload}
	for range r.u32() {
		r.bytes(r.u32()) // module
		r.bytes(r.u32()) // name
		switch kind := r.byte(); kind {
		case 0x00: // func: type index
			r.u32()
		case 0x01: // table: reftype, limits
			r.byte()
			r.limits()
		case 0x02: // memory: limits
			r.limits()
			memories++
		case 0x03: // global: valtype, mutability
			r.byte()
			r.byte()
			globals++
		default:
			return 0, 0, fmt.Errorf("import kind 0x%02x unknown", kind)
		}
		if r.err != nil {
			return 0, 0, r.err
		}
	}
	return globals, memories, r.err
}

// exportEntries returns the raw entries of an export section, refusing names the host
// reserves.
func exportEntries(payload []byte) ([][]byte, error) {
	r := reader{b: payload}
	n := r.u32()
	out := make([][]byte, 0, n+2)
	for range n {
		start := len(r.b)
		name := string(r.bytes(r.u32()))
		r.byte()
		r.u32()
		if r.err != nil {
			return nil, r.err
		}
		if strings.HasPrefix(name, hostExportPrefix) {
			return nil, fmt.Errorf("%w %s: names starting with %s are the host's; rename the export", ErrReservedExport, name, hostExportPrefix)
		}
		out = append(out, payload[len(payload)-start:len(payload)-len(r.b)])
	}
	return out, nil
}

func exportEntry(name string, kind byte, index uint32) []byte {
	b := binary.AppendUvarint(nil, uint64(len(name)))
	b = append(b, name...)
	b = append(b, kind)
	return binary.AppendUvarint(b, uint64(index))
}

// checkCode is the check sequence (see the comment at the top of the file). A module
// without a memory cannot grow one; the host refuses such a module anyway.
func checkCode(fuel, stop uint32, hasMemory bool) []byte {
	get := func(b []byte, g uint32) []byte { return binary.AppendUvarint(append(b, 0x23), uint64(g)) }
	set := func(b []byte, g uint32) []byte { return binary.AppendUvarint(append(b, 0x24), uint64(g)) }
	b := get(nil, fuel)
	b = append(b, 0x41, 0x01, 0x6b) // i32.const 1, i32.sub
	b = set(b, fuel)
	b = get(b, fuel)
	b = append(b, 0x45, 0x04, 0x40) // i32.eqz, if
	b = appendSLEB128(append(b, 0x41), checkPeriod)
	b = set(b, fuel)
	if hasMemory {
		b = append(b, 0x41, 0x00, 0x40, 0x00, 0x1a) // i32.const 0, memory.grow 0, drop
	}
	b = get(b, stop)
	return append(b, 0x04, 0x40, 0x00, 0x0b, 0x0b) // if, unreachable, end, end
}

// instrumentCode rewrites every function body of a code section: function i gets the
// interrupt check, and a stack charge of charges[i] (none if 0) with its body in a block
// of type blockTypes[i].
func instrumentCode(payload, check []byte, st stackCode, charges []int64, blockTypes [][]byte) ([]byte, error) {
	r := reader{b: payload}
	n := r.u32()
	if int(n) != len(charges) {
		return nil, fmt.Errorf("%d bodies for %d functions", n, len(charges))
	}
	out := binary.AppendUvarint(make([]byte, 0, len(payload)+len(payload)/8), uint64(n))
	var body []byte
	for i := range n {
		size := r.u32()
		in := r.bytes(size)
		if r.err != nil {
			return nil, fmt.Errorf("function %d: %w", i, r.err)
		}
		st.charge, st.blockType = charges[i], blockTypes[i]
		var err error
		if body, err = instrumentBody(body[:0], in, check, st); err != nil {
			return nil, fmt.Errorf("function %d: %w", i, err)
		}
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
	}
	if !r.empty() {
		return nil, fmt.Errorf("%d bytes after the last function body", len(r.b))
	}
	return out, nil
}

// instrumentBody appends body to out with check at its entry (unless it begins with a
// loop, whose own check comes first), after every loop's block type, and after every
// straightLine instructions without a check. The check leaves the operand stack as it
// found it, so it is valid between any two instructions. With a stack charge, the body
// is wrapped as stack.go shows, and every return gives the charge back first.
func instrumentBody(out, body, check []byte, st stackCode) ([]byte, error) {
	r := reader{b: body}
	for range r.u32() { // local declarations: count, valtype
		r.u32()
		r.byte()
	}
	if r.err != nil {
		return nil, fmt.Errorf("locals: %w", r.err)
	}
	copied := len(body) - len(r.b) // body[:copied] is in out
	out = append(out, body[:copied]...)
	if st.charge > 0 {
		out = st.prologue(out)
		out = append(append(out, 0x02), st.blockType...)
	}
	if r.empty() || r.b[0] != 0x03 {
		out = append(out, check...)
	}
	since := 0 // instructions since the last check
	for !r.empty() {
		at := len(body) - len(r.b)
		op := r.byte()
		if op == 0x0f && st.charge > 0 { // return
			out = st.epilogue(append(out, body[copied:at]...))
			copied = at
		}
		if err := r.immediates(op); err != nil {
			return nil, fmt.Errorf("at byte %d (opcode 0x%02x): %w", len(body)-len(r.b), op, err)
		}
		since++
		if op == 0x03 || since >= straightLine && !r.empty() { // after a loop's block type, or a long run
			at := len(body) - len(r.b)
			out = append(append(out, body[copied:at]...), check...)
			copied, since = at, 0
		}
	}
	out = append(out, body[copied:]...)
	if st.charge > 0 { // the body's end closed the block
		out = append(st.epilogue(out), 0x0b)
	}
	return out, nil
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
