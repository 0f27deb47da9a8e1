package otlpcheck

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"unicode/utf8"
)

// jframe is an object or array the JSON walk is inside.
type jframe struct {
	// f is the field it is the value of (nil for the request and a skipped value); idx its
	// index there when it is an element of an array.
	f *field
	// key is a KeyValue's key, once read: its offset and length in the body.
	key, keyLen int
	// n is an array's next index.
	n      int32
	idx    int32
	vdepth int32
	// skipped counts how deep a skipped value is.
	skipped int32
	// k is an object's message, or the message of an array's elements (unknown: scalars,
	// or skipped).
	k     kind
	arr   bool
	elem  bool
	skip  bool
	fresh bool
}

// JSON walks body, an OTLP export request of sig in OTLP JSON, within l, and counts what
// decoding it allocates. It returns a *DepthError for a value nested past l.MaxDepth, a
// *SyntaxError for text that is not JSON, or not the request's shape (an object where
// the request has an array, and so on). What follows the request is not read, as the
// decoder does not read it.
func JSON(body []byte, sig Signal, l Limits) (Counts, error) {
	var c Counts
	root, err := sig.root()
	if err != nil {
		return c, err
	}
	limit := int32(l.maxDepth())
	// Above a value: an object and an array per level of the request down to an event's
	// attribute; then at most four per level of a value, and the levels of a skipped one.
	// The stack starts at what the schema's own levels take and grows to that at most.
	maxFrames := 2*rootLevels + 5*int(limit) + 2
	stack := make([]jframe, 0, min(maxFrames, initialFrames))
	pos := 0
	// What the next value is: the message it holds (unknown: a scalar), the field it is
	// the value (or, elem, an element) of; skip: a value the schema does not name, or
	// inside one.
	var (
		vk    = root
		vf    *field
		vidx  int32
		velem bool
		vskip bool
	)
	for {
		// A value.
		pos = space(body, pos)
		if pos >= len(body) {
			return c, jsonErr(body, stack, pos, "the body ends where a value should be")
		}
		list := !vskip && vf != nil && vf.repeated && !velem
		isMsg := !vskip && vk != unknown && !list
		if !vskip && vf != nil && !list {
			c.alloc += vf.alloc
		}
		switch ch := body[pos]; ch {
		case '{', '[':
			arr := ch == '['
			switch {
			case vskip:
			case arr && !list:
				return c, jsonErr(body, stack, pos, "%s", mismatch(vk, vf, velem, "an array"))
			case !arr && !isMsg:
				return c, jsonErr(body, stack, pos, "%s", mismatch(vk, vf, velem, "an object"))
			}
			fr := jframe{f: vf, idx: vidx, k: vk, arr: arr, elem: velem, skip: vskip, fresh: true}
			if len(stack) > 0 {
				parent := &stack[len(stack)-1]
				fr.vdepth = parent.vdepth
				if vskip {
					fr.skipped = parent.skipped + 1
				}
			}
			if isMsg {
				c.message(vk)
				if vk == anyValue {
					fr.vdepth++
					c.Depth = max(c.Depth, int(fr.vdepth))
				}
			}
			pos++
			if fr.vdepth > limit || fr.skipped > limit || len(stack) >= maxFrames {
				stack = append(stack, fr)
				return c, &DepthError{Limit: int(limit), Path: jsonPath(body, stack)}
			}
			stack = append(stack, fr)
		case '"':
			if isMsg || list {
				return c, jsonErr(body, stack, pos, "%s", mismatch(vk, vf, velem, "a string"))
			}
			start := pos + 1
			end := str(body, pos)
			if end < 0 {
				pos = len(body)
				return c, jsonErr(body, stack, pos, "a string that starts at byte %d does not end", start-1)
			}
			pos = end + 1
			if !vskip && vf != nil && vf.copied {
				c.Strings++
				c.StringBytes += int64(end - start)
				c.alloc += heapSize(end - start)
				if top := &stack[len(stack)-1]; top.k == keyValue && vf.num == 1 {
					top.key, top.keyLen = start, end-start
				}
			}
		case 'n':
			if isMsg {
				c.message(vk) // the decoder makes it, empty
			}
			if !bytes.HasPrefix(body[pos:], []byte("null")) {
				return c, jsonErr(body, stack, pos, "want null")
			}
			pos += 4
		case 't', 'f':
			if isMsg || list {
				return c, jsonErr(body, stack, pos, "%s", mismatch(vk, vf, velem, "true or false"))
			}
			lit := "true"
			if ch == 'f' {
				lit = "false"
			}
			if !bytes.HasPrefix(body[pos:], []byte(lit)) {
				return c, jsonErr(body, stack, pos, "want %s", lit)
			}
			pos += len(lit)
		default:
			if ch != '-' && (ch < '0' || ch > '9') {
				return c, jsonErr(body, stack, pos, "want a value, not %q", ch)
			}
			if isMsg || list {
				return c, jsonErr(body, stack, pos, "%s", mismatch(vk, vf, velem, "a number"))
			}
			start := pos
			for pos < len(body) && numeric(body[pos]) {
				pos++
			}
			if pos == start+1 && ch == '-' {
				return c, jsonErr(body, stack, pos, "want a number")
			}
		}

		// What comes after it: the end of objects and arrays, and the next value.
	next:
		for {
			if len(stack) == 0 {
				return c, nil
			}
			top := &stack[len(stack)-1]
			pos = space(body, pos)
			if pos >= len(body) {
				return c, jsonErr(body, stack, pos, "the body ends inside an object or array")
			}
			ch := body[pos]
			if top.arr {
				if ch == ']' {
					pos++
					stack = stack[:len(stack)-1]
					continue
				}
				if !top.fresh {
					if ch != ',' {
						return c, jsonErr(body, stack, pos, "want , or ] after an element of an array, not %q", ch)
					}
					pos++
				}
				top.fresh = false
				vk, vf, vidx, velem, vskip = top.k, top.f, top.n, true, top.skip
				top.n++
				break next
			}
			if ch == '}' {
				pos++
				stack = stack[:len(stack)-1]
				continue
			}
			if !top.fresh {
				if ch != ',' {
					return c, jsonErr(body, stack, pos, "want , or } after a member of an object, not %q", ch)
				}
				pos = space(body, pos+1)
			}
			top.fresh = false
			// A member's name, and its colon.
			if pos >= len(body) || body[pos] != '"' {
				return c, jsonErr(body, stack, pos, "want a member's name in quotes")
			}
			end := str(body, pos)
			if end < 0 {
				return c, jsonErr(body, stack, pos, "a name that starts at byte %d does not end", pos)
			}
			name := body[pos+1 : end]
			pos = space(body, end+1)
			if pos >= len(body) || body[pos] != ':' {
				return c, jsonErr(body, stack, pos, "want : after a member's name")
			}
			pos++
			vk, vf, vidx, velem, vskip = unknown, nil, 0, false, true
			if top.skip {
				break next
			}
			var buf [32]byte
			if bytes.IndexByte(name, '\\') >= 0 {
				name = unescape(buf[:0], name) // nil: no name of the schema
			}
			if f := schema[top.k].named(name); f != nil {
				vk, vf, vskip = f.msg, f, false
			} else {
				c.skipped++
			}
			break next
		}
	}
}

func jsonErr(body []byte, stack []jframe, pos int, format string, args ...any) error {
	return &SyntaxError{Offset: pos, Path: jsonPath(body, stack), Msg: fmt.Sprintf(format, args...)}
}

// mismatch says a value is of the wrong JSON type for its field.
func mismatch(k kind, f *field, elem bool, got string) string {
	want := "a value"
	switch {
	case f != nil && f.repeated && !elem:
		want = "an array"
	case k != unknown:
		want = "an object"
	}
	name := "the request"
	if f != nil {
		name = f.camel
	}
	return fmt.Sprintf("%s is %s; OTLP JSON has %s there", name, got, want)
}

// jsonPath is the path of the objects on the stack (an array is named by its elements).
func jsonPath(body []byte, stack []jframe) string {
	steps := make([]step, 0, len(stack))
	for _, f := range stack {
		if f.arr || f.f == nil {
			continue
		}
		s := step{name: f.f.camel, list: f.elem, index: f.idx}
		if f.keyLen > 0 {
			s.key = body[f.key : f.key+f.keyLen]
		}
		steps = append(steps, s)
	}
	return pathOf(steps)
}

// str returns the offset of the quote that ends the string whose opening quote is at
// pos, or -1.
func str(b []byte, pos int) int {
	i := pos + 1
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		// An odd run of backslashes escapes the quote.
		k := i
		for k > pos+1 && b[k-1] == '\\' {
			k--
		}
		if (i-k)%2 == 0 {
			return i
		}
		i++
	}
}

func numeric(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

func space(b []byte, pos int) int {
	for pos < len(b) {
		switch b[pos] {
		case ' ', '\t', '\n', '\r':
			pos++
			continue
		}
		return pos
	}
	return pos
}

// unescape appends s, a string's text with escapes, to dst as the decoder reads it; nil
// when it does not fit dst's capacity (no name of the schema is that long) or does not
// unescape.
func unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			if i++; i >= len(s) {
				return nil
			}
			switch s[i] {
			case '"', '\\', '/':
				c = s[i]
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'u':
				if i+4 >= len(s) {
					return nil
				}
				var u [2]byte
				if _, err := hex.Decode(u[:], s[i+1:i+5]); err != nil {
					return nil
				}
				i += 4
				if u[0] != 0 || u[1] >= utf8.RuneSelf {
					return nil // the schema's names are ASCII
				}
				c = u[1]
			default:
				return nil
			}
		}
		if len(dst) == cap(dst) {
			return nil
		}
		dst = append(dst, c)
	}
	return dst
}
