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
// Conversations, tool calls and citation audits are decoded by sdk.Run.UnmarshalJSON
// itself, so the rules that normalize them live in one place.

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
	input, output, conversation, toolCalls, audit []byte
}

func (fd *fastDecoder) run() (sdk.Run, bool) {
	var (
		r         sdk.Run
		hasOutput bool
		chat      chatParts
		needChat  bool
	)
	d := &fd.dec
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return r, false
	}
	for d.PeekKind() != '}' {
		name, ok := fd.name()
		if !ok {
			return r, false
		}
		switch string(name) { // no allocation: the compiler compares the bytes
		case "id":
			if r.ID, ok = fd.idValue(); !ok {
				return r, false
			}
		case "agent":
			if r.Agent, ok = fd.str(); !ok {
				return r, false
			}
		case "input":
			if d.PeekKind() == '[' {
				if chat.input, ok = fd.raw(); !ok {
					return r, false
				}
				needChat = true
				continue
			}
			if r.Input, ok = fd.str(); !ok {
				return r, false
			}
		case "output":
			hasOutput = true
			if k := d.PeekKind(); k == '[' || k == '{' {
				if chat.output, ok = fd.raw(); !ok {
					return r, false
				}
				needChat = true
				continue
			}
			if r.Output, ok = fd.str(); !ok {
				return r, false
			}
		case "conversation", "tool_calls", "citation_audit":
			dst := chat.field(string(name)) // before the read: name is then overwritten
			if *dst, ok = fd.raw(); !ok {
				return r, false
			}
			needChat = true
		case "context":
			if r.Context, ok = fd.context(); !ok {
				return r, false
			}
		case "expected":
			if r.Expected, ok = fd.str(); !ok {
				return r, false
			}
		case "expected_tool_calls":
			// Rare (datasets that grade tool use) and free-form inside: the schema checks them.
			return r, false
		case "time":
			v, err := d.ReadValue()
			if err != nil || v.Kind() != '"' {
				return r, false
			}
			var t time.Time
			if err := t.UnmarshalJSON(v); err != nil {
				return r, false
			}
			r.Time = &t
		case "metadata":
			if d.PeekKind() != '{' {
				return r, false
			}
			if err := jsonv2.UnmarshalDecode(d, &r.Metadata); err != nil {
				return r, false
			}
		default:
			for _, f := range runFields {
				if bytes.EqualFold(name, []byte(f)) {
					return r, false
				}
			}
			if d.SkipValue() != nil {
				return r, false
			}
		}
	}
	if _, err := d.ReadToken(); err != nil { // }
		return r, false
	}
	if _, err := d.ReadToken(); err != io.EOF { // trailing data
		return r, false
	}
	if !hasOutput {
		return r, false
	}
	if needChat && !chat.decode(&r) {
		return r, false
	}
	r.NumberContext()
	return r, true
}

// field returns where the raw value of the run field called name goes.
func (c *chatParts) field(name string) *[]byte {
	switch name {
	case "conversation":
		return &c.conversation
	case "tool_calls":
		return &c.toolCalls
	}
	return &c.audit
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
	}{{"input", c.input}, {"output", c.output}, {"conversation", c.conversation}, {"tool_calls", c.toolCalls}, {"citation_audit", c.audit}} {
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
	if c.input != nil || c.conversation != nil {
		r.Conversation = q.Conversation
	}
	if c.input != nil {
		r.Input = q.Input
	}
	if c.output != nil {
		r.Output = q.Output
	}
	if c.output != nil || c.toolCalls != nil {
		r.ToolCalls = q.ToolCalls
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
	d := &fd.dec
	if t, err := d.ReadToken(); err != nil || t.Kind() != '[' {
		return nil, false
	}
	var out []sdk.Passage
	for d.PeekKind() != ']' {
		switch d.PeekKind() {
		case '"':
			s, ok := fd.str()
			if !ok {
				return nil, false
			}
			out = append(out, sdk.Passage{Text: s})
		case '{':
			p, ok := fd.passage()
			if !ok {
				return nil, false
			}
			out = append(out, p)
		default:
			return nil, false
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return nil, false
	}
	if out == nil {
		out = []sdk.Passage{}
	}
	return out, true
}

func (fd *fastDecoder) passage() (sdk.Passage, bool) {
	d := &fd.dec
	var p sdk.Passage
	if _, err := d.ReadToken(); err != nil {
		return p, false
	}
	hasText := false
	for d.PeekKind() != '}' {
		name, ok := fd.name()
		if !ok {
			return p, false
		}
		switch string(name) {
		case "id":
			if p.ID, ok = fd.idValue(); !ok {
				return p, false
			}
		case "text":
			if p.Text, ok = fd.str(); !ok {
				return p, false
			}
			hasText = true
		default:
			if bytes.EqualFold(name, []byte("id")) || bytes.EqualFold(name, []byte("text")) || d.SkipValue() != nil {
				return p, false
			}
		}
	}
	if _, err := d.ReadToken(); err != nil {
		return p, false
	}
	return p, hasText
}
