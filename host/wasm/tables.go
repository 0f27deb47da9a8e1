package wasm

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A guest's linear memory is bounded by its memory limit, which wazero enforces. What
// else an instance makes the host allocate, wazero leaves unbounded or bounds far above
// any limit the host sets: a table without a maximum grows to 2^32 entries of 8 bytes
// (one `table.grow` loop took the host past 3.6 GB), and tables, passive element segments
// and globals are allocated for every instance. boundModule reads those from the module
// before it is compiled, refuses a module that could never fit, and rewrites every
// table's maximum so that all of an instance's tables together hold at most
// MaxTableEntries: `table.grow` past it answers -1, as the specification lets a host
// answer when it runs out of room (RATIONALE.md, "Bounding what a guest makes the host
// allocate").
const (
	// maxTables, maxGlobals and maxLocals refuse at load a module declaring more than any
	// compiler emits; each is allocated per instance (locals per call frame). maxLocals
	// is the web engines' own limit (the JS API's implementation limits).
	maxTables  = 100
	maxGlobals = 65_536
	maxLocals  = 50_000
)

const (
	secTable   = 4
	secElement = 9
)

// tableBytes is the host memory n table entries take in wazero (a uintptr each).
func tableBytes(n int) int { return n * 8 }

// boundModule returns bin with every table's maximum lowered so that all tables together
// hold at most maxEntries, or an error naming what can never fit.
func boundModule(bin []byte, maxEntries int) ([]byte, error) {
	secs, err := splitSections(bin)
	if err != nil {
		return nil, err
	}
	changed := false
	for i, s := range secs {
		switch s.id {
		case secImport:
			if err := refuseImportedTables(s.payload); err != nil {
				return nil, err
			}
		case secTable:
			if secs[i].payload, err = boundTables(s.payload, maxEntries); err != nil {
				return nil, err
			}
			changed = true
		case secElement:
			if err := checkElements(s.payload, maxEntries); err != nil {
				return nil, err
			}
		case secGlobal:
			r := reader{b: s.payload}
			if n := r.u32(); n > maxGlobals {
				return nil, fmt.Errorf("%w: %d globals, at most %d", ErrTooLarge, n, maxGlobals)
			}
		case secCode:
			if err := checkLocals(s.payload); err != nil {
				return nil, err
			}
		}
	}
	if !changed {
		return bin, nil
	}
	return joinSections(secs, len(bin)+16), nil
}

// refuseImportedTables refuses a table import: no module the host links exports one, and
// the host bounds only tables the module defines.
func refuseImportedTables(payload []byte) error {
	r := reader{b: payload}
	for range r.u32() {
		mod := r.bytes(r.u32())
		name := r.bytes(r.u32())
		switch r.byte() {
		case 0x00:
			r.u32()
		case 0x01:
			return fmt.Errorf("%w: table %s.%s: a plugin must define its own tables", ErrForbiddenImport, mod, name)
		case 0x02:
			r.limits()
		case 0x03:
			r.byte()
			r.byte()
		}
		if r.err != nil {
			return fmt.Errorf("import section: %w", r.err)
		}
	}
	return r.err
}

// table is one entry of a table section: its bytes before the limits, its limits, its
// bytes after them (an initializer).
type table struct {
	head     []byte
	min, max uint32
	hasMax   bool
	tail     []byte
}

// boundTables rewrites a table section. Each table keeps its minimum and gets an equal
// share of what the minimums leave of maxEntries to grow into, or its own maximum if
// that is lower; so the maximums add up to maxEntries at most, whatever the guest does.
func boundTables(payload []byte, maxEntries int) ([]byte, error) {
	r := reader{b: payload}
	n := r.u32()
	if n > maxTables {
		return nil, fmt.Errorf("%w: %d tables, at most %d", ErrTooLarge, n, maxTables)
	}
	tables := make([]table, n)
	sumMin := uint64(0)
	for i := range tables {
		t := &tables[i]
		start := r.b
		if len(r.b) >= 2 && r.b[0] == 0x40 && r.b[1] == 0x00 { // a table with an initializer
			r.bytes(2)
		}
		r.byte() // reftype
		t.head = start[:len(start)-len(r.b)]
		switch flags := r.byte(); flags {
		case 0x00:
			t.min = r.u32()
		case 0x01:
			t.min, t.max, t.hasMax = r.u32(), r.u32(), true
		default:
			return nil, fmt.Errorf("table %d: limits flags 0x%02x: only 32-bit, unshared tables are supported", i, flags)
		}
		rest := r.b
		if t.head[0] == 0x40 {
			r.constExpr()
		}
		t.tail = rest[:len(rest)-len(r.b)]
		if r.err != nil {
			return nil, fmt.Errorf("table section: %w", r.err)
		}
		sumMin += uint64(t.min)
	}
	if !r.empty() {
		return nil, fmt.Errorf("table section: %d bytes after the last table", len(r.b))
	}
	if sumMin > uint64(maxEntries) {
		return nil, fmt.Errorf("%w: its tables start with %d entries, over the %d an instance may hold (%d MiB); raise wasm.Options.MaxTableEntries or declare smaller tables",
			ErrTooLarge, sumMin, maxEntries, tableBytes(maxEntries)>>20)
	}
	out := binary.AppendUvarint(make([]byte, 0, len(payload)+8*len(tables)), uint64(n))
	if n == 0 {
		return out, nil
	}
	share := (uint64(maxEntries) - sumMin) / uint64(n)
	for _, t := range tables {
		limit := uint64(t.min) + share
		if t.hasMax && uint64(t.max) < limit {
			limit = uint64(t.max)
		}
		out = append(out, t.head...)
		out = append(out, 0x01)
		out = binary.AppendUvarint(out, uint64(t.min))
		out = binary.AppendUvarint(out, limit)
		out = append(out, t.tail...)
	}
	return out, nil
}

// checkElements refuses element segments holding together more entries than an instance's
// tables may: passive segments are copied for every instance, active ones must fit a
// table.
func checkElements(payload []byte, maxEntries int) error {
	r := reader{b: payload}
	total := uint64(0)
	for i := range r.u32() {
		flags := r.u32()
		if flags > 7 {
			return fmt.Errorf("element segment %d: flags %d unknown", i, flags)
		}
		if flags&3 == 2 { // explicit table index
			r.u32()
		}
		if flags&1 == 0 { // active: an offset
			r.constExpr()
		}
		if flags&3 != 0 { // elemkind or reftype
			r.byte()
		}
		n := r.u32()
		for range n {
			if flags&4 != 0 {
				r.constExpr()
			} else {
				r.u32()
			}
			if r.err != nil {
				break
			}
		}
		if r.err != nil {
			return fmt.Errorf("element section: segment %d: %w", i, r.err)
		}
		total += uint64(n)
	}
	if total > uint64(maxEntries) {
		return fmt.Errorf("%w: element segments with %d entries, over the %d an instance's tables may hold; raise wasm.Options.MaxTableEntries",
			ErrTooLarge, total, maxEntries)
	}
	return r.err
}

// checkLocals refuses a function declaring more locals than maxLocals: each call's frame
// holds them.
func checkLocals(payload []byte) error {
	r := reader{b: payload}
	for i := range r.u32() {
		body := reader{b: r.bytes(r.u32())}
		sum := uint64(0)
		for range body.u32() {
			sum += uint64(body.u32())
			body.byte()
			if body.err != nil {
				break
			}
		}
		if r.err != nil || body.err != nil {
			return fmt.Errorf("code section: function %d: %w", i, errors.Join(r.err, body.err))
		}
		if sum > maxLocals {
			return fmt.Errorf("%w: function %d declares %d locals, at most %d", ErrTooLarge, i, sum, maxLocals)
		}
	}
	return r.err
}

// constExpr skips a constant expression and its end.
func (r *reader) constExpr() {
	for !r.empty() {
		op := r.byte()
		if op == 0x0b {
			return
		}
		if err := r.immediates(op); err != nil {
			r.fail(err)
		}
	}
	r.fail(errors.New("constant expression without end"))
}
