package host

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/scorekit/scorekit/sdk"
)

// The fast path of DecodeRun reads a line once, as tokens, straight into an sdk.Run. It
// accepts a strict subset of what the run schema and sdk.Run.UnmarshalJSON accept, and
// gives up (ok false) on anything else: then the slow path validates the line against the
// schema, for the message that names the field, and decodes it with encoding/json. So the
// slow path stays the authority on what a run is; the fast path only has to agree with it
// on the lines it accepts, which a fuzz test holds it to.
//
// It gives up on: invalid JSON, invalid UTF-8 or a duplicate name (jsontext refuses them;
// encoding/json replaces or keeps the last), a name with an escape or one that differs
// from a field's only by case (encoding/json matches names case-insensitively), a value
// of the wrong type, null where a string belongs, a time encoding/json would refuse.
//
// A conversation and tool calls in the form a run is written in (encoding/json's of
// sdk.Run: "conversation" and "tool_calls" fields of turns and calls whose values are
// strings, as a stored run and a run sent on to a plugin hold them) are read here too, in
// the same read; in any other form (content parts, OpenAI's "function" object, arguments
// as an object) the line goes to the slow path. Chat messages given as "input" or
// "output", and citation audits, are decoded by sdk.Run.UnmarshalJSON itself, so the
// rules that normalize them live in one place.

// fastDecoder is a reusable token decoder; pooled because each costs a few KB of buffers.
type fastDecoder struct {
	buf bytes.Buffer
	dec jsontext.Decoder
}

var fastDecoders = sync.Pool{New: func() any { return new(fastDecoder) }}

// runFields are the names the fast path knows; an unknown name that equals one of them
// but for case sends the line to the slow path.
var runFields = [...]string{"id", "agent", "input", "conversation", "output", "tool_calls", "context", "expected", "expected_tool_calls", "citation_audit", "time", "metadata"}

func decodeRunFast(line []byte) (sdk.Run, bool) {
	fd := fastDecoders.Get().(*fastDecoder)
	defer fastDecoders.Put(fd)
	fd.buf.Reset()
	fd.buf.Write(line)
	fd.dec.Reset(&fd.buf)
	return fd.run()
}

// chatParts holds the raw values the fast path hands to sdk.Run.UnmarshalJSON.
type chatParts struct {
	input, output, audit []byte
}

func (fd *fastDecoder) run() (sdk.Run, bool) {
	var (
		r         sdk.Run
		hasOutput bool
		chat      chatParts
		needChat  bool
		// typed: the conversation and tool calls were read in the written form
		typedConv, typedCalls bool
	)
	d := &fd.dec
	read := fd.object(func(name []byte) (ok bool) {
		switch string(name) { // no allocation: the compiler compares the bytes
		case "id":
			r.ID, ok = fd.idValue()
		case "agent":
			r.Agent, ok = fd.str()
		case "input":
			if d.PeekKind() == '[' {
				chat.input, ok = fd.raw()
				needChat = true
			} else {
				r.Input, ok = fd.str()
			}
		case "output":
			hasOutput = true
			if k := d.PeekKind(); k == '[' || k == '{' {
				chat.output, ok = fd.raw()
				needChat = true
			} else {
				r.Output, ok = fd.str()
			}
		case "conversation":
			r.Conversation, ok = fd.turns()
			typedConv = true
		case "tool_calls":
			r.ToolCalls, ok = fd.toolCalls()
			typedCalls = true
		case "citation_audit":
			chat.audit, ok = fd.raw()
			needChat = true
		case "context":
			r.Context, ok = fd.context()
		case "expected":
			r.Expected, ok = fd.str()
		case "expected_tool_calls":
			// Rare (datasets that grade tool use) and free-form inside: the schema checks them.
			return false
		case "time":
			v, err := d.ReadValue()
			if err != nil || v.Kind() != '"' {
				return false
			}
			var t time.Time
			if err := t.UnmarshalJSON(v); err != nil {
				return false
			}
			r.Time, ok = &t, true
		case "metadata":
			ok = d.PeekKind() == '{' && jsonv2.UnmarshalDecode(d, &r.Metadata) == nil
		default:
			ok = fd.skip(name, runFields[:])
		}
		return ok
	})
	if !read {
		return r, false
	}
	if _, err := d.ReadToken(); err != io.EOF { // trailing data
		return r, false
	}
	if !hasOutput {
		return r, false
	}
	// Both the field and a chat input (or output) carrying it: sdk.Run.UnmarshalJSON
	// refuses the line, and says why.
	if typedConv && chat.input != nil || typedCalls && chat.output != nil {
		return r, false
	}
	if needChat && !chat.decode(&r) {
		return r, false
	}
	r.NumberContext()
	return r, true
}

// decode lets sdk.Run.UnmarshalJSON normalize the chat-shaped parts of a run and copies
// what it made of them into r.
func (c *chatParts) decode(r *sdk.Run) bool {
	var b bytes.Buffer
	b.WriteByte('{')
	sep := ""
	for _, f := range [...]struct {
		name string
		v    []byte
	}{{"input", c.input}, {"output", c.output}, {"citation_audit", c.audit}} {
		if f.v == nil {
			continue
		}
		b.WriteString(sep + `"` + f.name + `":`)
		b.Write(f.v)
		sep = ","
	}
	b.WriteByte('}')
	var q sdk.Run
	if err := json.Unmarshal(b.Bytes(), &q); err != nil {
		return false
	}
	if c.input != nil {
		r.Conversation, r.Input = q.Conversation, q.Input
	}
	if c.output != nil {
		r.Output, r.ToolCalls = q.Output, q.ToolCalls
	}
	r.CitationAudit = q.CitationAudit
	return true
}

// name reads an object member's name, valid until the next read; a name with an escape
// gives up.
func (fd *fastDecoder) name() ([]byte, bool) {
	v, err := fd.dec.ReadValue()
	if err != nil || v.Kind() != '"' || bytes.IndexByte(v, '\\') >= 0 {
		return nil, false
	}
	return v[1 : len(v)-1], true
}

// str reads a string value.
func (fd *fastDecoder) str() (string, bool) {
	v, err := fd.dec.ReadValue()
	if err != nil || v.Kind() != '"' {
		return "", false
	}
	return unquote(v)
}

func unquote(v jsontext.Value) (string, bool) {
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1]), true
	}
	b, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// idValue reads an id: a string, or a number kept as written.
func (fd *fastDecoder) idValue() (string, bool) {
	v, err := fd.dec.ReadValue()
	if err != nil {
		return "", false
	}
	switch v.Kind() {
	case '"':
		return unquote(v)
	case '0':
		return string(v), true
	}
	return "", false
}

// raw copies the next value.
func (fd *fastDecoder) raw() ([]byte, bool) {
	v, err := fd.dec.ReadValue()
	if err != nil {
		return nil, false
	}
	return bytes.Clone(v), true
}

// context reads the passages: strings or {id, text} objects.
func (fd *fastDecoder) context() ([]sdk.Passage, bool) {
	return readArray(fd, func(fd *fastDecoder) (sdk.Passage, bool) {
		switch fd.dec.PeekKind() {
		case '"':
			s, ok := fd.str()
			return sdk.Passage{Text: s}, ok
		case '{':
			return fd.passage()
		}
		return sdk.Passage{}, false
	})
}

// passageFields are the names sdk.Passage.UnmarshalJSON reads.
var passageFields = [...]string{"id", "text"}

func (fd *fastDecoder) passage() (sdk.Passage, bool) {
	var p sdk.Passage
	hasText := false
	read := fd.object(func(name []byte) (ok bool) {
		switch string(name) {
		case "id":
			p.ID, ok = fd.idValue()
		case "text":
			p.Text, ok = fd.str()
			hasText = true
		default:
			ok = fd.skip(name, passageFields[:])
		}
		return ok
	})
	return p, read && hasText
}

// turns reads a conversation in the form sdk.Run is written in: an array of turns whose
// values are strings (tool calls aside). Anything else gives up.
func (fd *fastDecoder) turns() ([]sdk.Turn, bool) {
	return readArray(fd, (*fastDecoder).turn)
}

// turnFields are the names sdk.Turn.UnmarshalJSON reads.
var turnFields = [...]string{"role", "content", "name", "tool_calls", "tool_call_id", "refusal"}

func (fd *fastDecoder) turn() (sdk.Turn, bool) {
	var (
		t       sdk.Turn
		refusal string
	)
	read := fd.object(func(name []byte) (ok bool) {
		switch string(name) {
		case "role":
			t.Role, ok = fd.str()
		case "content":
			t.Content, ok = fd.str()
		case "name":
			t.Name, ok = fd.str()
		case "tool_calls":
			t.ToolCalls, ok = fd.toolCalls()
		case "tool_call_id":
			t.ToolCallID, ok = fd.idValue()
		case "refusal":
			refusal, ok = fd.str()
		default:
			ok = fd.skip(name, turnFields[:])
		}
		return ok
	})
	if t.Content == "" {
		t.Content = refusal
	}
	return t, read
}

// toolCalls reads tool calls in the form sdk.Run is written in: an array of flat calls
// whose values are strings. Anything else (OpenAI's "function" object, arguments as an
// object) gives up.
func (fd *fastDecoder) toolCalls() ([]sdk.ToolCall, bool) {
	return readArray(fd, (*fastDecoder).toolCall)
}

// callFields are the names sdk.ToolCall.UnmarshalJSON reads.
var callFields = [...]string{"id", "name", "arguments", "result", "function"}

func (fd *fastDecoder) toolCall() (sdk.ToolCall, bool) {
	var c sdk.ToolCall
	read := fd.object(func(name []byte) (ok bool) {
		switch string(name) {
		case "id":
			c.ID, ok = fd.idValue()
		case "name":
			c.Name, ok = fd.str()
		case "arguments":
			c.Arguments, ok = fd.str()
		case "result":
			c.Result, ok = fd.str()
		default: // "function" among them: OpenAI's shape is the slow path's
			ok = fd.skip(name, callFields[:])
		}
		return ok
	})
	return c, read
}

// object reads an object, the value of each member by member, which is handed the
// member's name and returns false to give up.
func (fd *fastDecoder) object(member func(name []byte) bool) bool {
	d := &fd.dec
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return false
	}
	for d.PeekKind() != '}' {
		name, ok := fd.name()
		if !ok || !member(name) {
			return false
		}
	}
	_, err := d.ReadToken()
	return err == nil
}

// readArray reads an array, each element by elem; an empty array gives an empty slice, as
// encoding/json has it.
func readArray[T any](fd *fastDecoder, elem func(*fastDecoder) (T, bool)) ([]T, bool) {
	d := &fd.dec
	if t, err := d.ReadToken(); err != nil || t.Kind() != '[' {
		return nil, false
	}
	out := []T{}
	for d.PeekKind() != ']' {
		v, ok := elem(fd)
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, false
	}
	return out, true
}

// skip skips the value of a member the reader does not read; a name known, or equal to
// one of known but for case (encoding/json would read it), gives up.
func (fd *fastDecoder) skip(name []byte, known []string) bool {
	for _, f := range known {
		if bytes.EqualFold(name, []byte(f)) {
			return false
		}
	}
	return fd.dec.SkipValue() == nil
}
