package wasm

import (
	"encoding/binary"
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

	m, err := readSectionFacts(secs)
	if err != nil {
		return nil, false, err
	}
	exports := m.exports
	fuel := uint32(m.importedGlobals + m.definedGlobals)
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
	if m.hasStart {
		exports = append(exports, exportEntry(exportStart, 0x00, m.startFunc))
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
			s.payload = appendVec(nil, m.definedGlobals+added, m.globalEntries, globals)
		case secExport:
			s.payload = nil // rebuilt below
		case secStart:
			continue
		case secCode:
			if s.payload, err = instrumentCode(s.payload, checkCode(fuel, fuel+1, m.hasMemory), st, charges, blockTypes); err != nil {
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

	return joinSections(kept, len(bin)+len(bin)/16), m.hasStart, nil
}

// sectionFacts is what instrumentWith reads of a module's sections before it rewrites
// them.
type sectionFacts struct {
	importedGlobals, definedGlobals int
	globalEntries                   []byte // the global section after its count
	hasMemory                       bool
	startFunc                       uint32
	hasStart                        bool
	exports                         [][]byte // the export section's entries
}

// readSectionFacts reads the globals and memories secs import and define, their exports
// and their start function.
func readSectionFacts(secs []section) (sectionFacts, error) {
	var m sectionFacts
	for _, s := range secs {
		switch s.id {
		case secImport:
			globals, memories, err := countImports(s.payload)
			if err != nil {
				return m, fmt.Errorf("import section: %w", err)
			}
			m.importedGlobals = globals
			m.hasMemory = m.hasMemory || memories > 0
		case secMemory:
			r := reader{b: s.payload}
			m.hasMemory = m.hasMemory || r.u32() > 0
		case secGlobal:
			r := reader{b: s.payload}
			m.definedGlobals, m.globalEntries = int(r.u32()), r.b
			if r.err != nil {
				return m, fmt.Errorf("global section: %w", r.err)
			}
		case secExport:
			exports, err := exportEntries(s.payload)
			if err != nil {
				return m, fmt.Errorf("export section: %w", err)
			}
			m.exports = exports
		case secStart:
			r := reader{b: s.payload}
			m.startFunc, m.hasStart = r.u32(), true
			if r.err != nil {
				return m, fmt.Errorf("start section: %w", r.err)
			}
		}
	}
	return m, nil
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
