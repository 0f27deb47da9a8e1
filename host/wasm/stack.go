package wasm

import (
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
