package otlpcheck

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// rootLevels is the most messages the schema nests above a value: a request, a resource's
// or scope's list, a record, an event or link, a KeyValue. Each level of a value adds at
// most three (AnyValue, KeyValueList, KeyValue).
const rootLevels = 6

// initialFrames is the stack a walk starts with: what a request whose values nest a few
// levels takes. A deeper one grows it (by doubling: a few allocations a request, none an
// element), up to what Limits.MaxDepth allows.
const initialFrames = 32

// pframe is a message the protobuf walk is inside.
type pframe struct {
	// f is the field it came through (nil for the request), idx its index there when f
	// repeats.
	f          *field
	start, end int
	// key is a KeyValue's key, once read: its offset and length in the body.
	key, keyLen int
	// last is the repeated field the last message entered came through, next the index the
	// next one of it has.
	last   *field
	next   int32
	idx    int32
	vdepth int32
	k      kind
}

// Protobuf walks body, an OTLP export request of sig in protobuf, within l, and counts
// what decoding it allocates. It returns a *DepthError for a value nested past
// l.MaxDepth, a *SyntaxError for wire data that is not the request.
func Protobuf(body []byte, sig Signal, l Limits) (Counts, error) {
	var c Counts
	root, err := sig.root()
	if err != nil {
		return c, err
	}
	limit := int32(l.maxDepth())
	maxFrames := rootLevels + 3*int(limit) + 1
	stack := make([]pframe, 1, min(maxFrames, initialFrames))
	stack[0] = pframe{k: root, end: len(body)}
	c.message(root)
	pos := 0
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if pos == top.end {
			stack = stack[:len(stack)-1]
			continue
		}
		b := body[pos:top.end]
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return c, protoErr(body, stack, pos, "a field's tag: %v", protowire.ParseError(n))
		}
		pos += n
		b = b[n:]
		m := &schema[top.k]
		f := m.lookup(num)
		if f == nil {
			c.skipped++
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return c, protoErr(body, stack, pos, "field %d of %s: %v", num, m.name, protowire.ParseError(n))
			}
			pos += n
			continue
		}
		if typ != f.typ {
			return c, protoErr(body, stack, pos, "field %s (%d) of %s has wire type %d; OTLP has %d", f.camel, num, m.name, typ, f.typ)
		}
		switch typ {
		case bytesT:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return c, protoErr(body, stack, pos, "field %s of %s: %v", f.camel, m.name, protowire.ParseError(n))
			}
			c.field(f, len(v))
			at := pos + n - len(v)
			pos += n
			if f.msg == unknown {
				if top.k == keyValue && f.num == 1 {
					top.key, top.keyLen = at, len(v)
				}
				continue
			}
			child := pframe{f: f, k: f.msg, start: at, end: pos, vdepth: top.vdepth}
			if f.repeated {
				if top.last != f {
					top.last, top.next = f, 0
				}
				child.idx = top.next
				top.next++
			}
			c.message(f.msg)
			if f.msg == anyValue {
				child.vdepth++
				c.Depth = max(c.Depth, int(child.vdepth))
			}
			pos = at
			if child.vdepth > limit || len(stack) >= maxFrames {
				stack = append(stack, child)
				return c, &DepthError{Limit: int(limit), Path: protoPath(body, stack)}
			}
			stack = append(stack, child)
		case varintT:
			c.field(f, 0)
			if _, n = protowire.ConsumeVarint(b); n < 0 {
				return c, protoErr(body, stack, pos, "field %s of %s: %v", f.camel, m.name, protowire.ParseError(n))
			}
			pos += n
		case fixed32T:
			c.field(f, 0)
			if _, n = protowire.ConsumeFixed32(b); n < 0 {
				return c, protoErr(body, stack, pos, "field %s of %s: %v", f.camel, m.name, protowire.ParseError(n))
			}
			pos += n
		case fixed64T:
			c.field(f, 0)
			if _, n = protowire.ConsumeFixed64(b); n < 0 {
				return c, protoErr(body, stack, pos, "field %s of %s: %v", f.camel, m.name, protowire.ParseError(n))
			}
			pos += n
		}
	}
	return c, nil
}

func protoErr(body []byte, stack []pframe, pos int, format string, args ...any) error {
	return &SyntaxError{Offset: pos, Path: protoPath(body, stack), Msg: fmt.Sprintf(format, args...)}
}

// protoPath is the path of the messages on the stack. A KeyValue's key may come after
// its value (pdata writes it so): a KeyValue whose key the walk has not met yet is read
// for it.
func protoPath(body []byte, stack []pframe) string {
	steps := make([]step, 0, len(stack))
	for _, f := range stack[1:] {
		s := step{name: f.f.camel, list: f.f.repeated, index: f.idx}
		switch {
		case f.keyLen > 0:
			s.key = body[f.key : f.key+f.keyLen]
		case f.k == keyValue:
			s.key = keyOf(body[f.start:f.end])
		}
		steps = append(steps, s)
	}
	return pathOf(steps)
}

// keyOf returns the key of kv, a KeyValue, or nil.
func keyOf(kv []byte) []byte {
	for len(kv) > 0 {
		num, typ, n := protowire.ConsumeTag(kv)
		if n < 0 {
			return nil
		}
		kv = kv[n:]
		if num == 1 && typ == bytesT {
			v, _ := protowire.ConsumeBytes(kv)
			return v
		}
		if n = protowire.ConsumeFieldValue(num, typ, kv); n < 0 {
			return nil
		}
		kv = kv[n:]
	}
	return nil
}
