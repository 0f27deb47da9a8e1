package wasmabi

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"
	"unsafe"

	"github.com/scorekit/scorekit/sdk"
)

// The binary codec is ABI v1's optional fast payload: a guest whose scorekit_v1_codecs
// export sets CodecBinary, at the host's CodecRevision, gets runs and returns results in
// it when the host sets FlagBinary. It exists because a sandboxed guest pays for every loop iteration, so
// JSON's byte-by-byte scanning dominated a call; here a string is a length and a copy,
// and every field is typed, free-form ones (metadata, telemetry nodes) included, so the
// guest never runs encoding/json. docs/ABI.md specifies the layout:
//
//	str    = u32 length, bytes (UTF-8)
//	strs   = u32 n, n x str
//	value  = u8 tag, then by tag: 0 null, 1 false, 2 true, 3 f64, 4 str,
//	         5 u32 n, n x value (array), 6 u32 n, n x (str key, value) (object)
//	audit  = u8 present, then i64 citations, i64 sentences, i64 uncited_sentences,
//	         strs invalid_citations, strs unsupported_citations, u8 hallucination_detected
//	run    = str id, str agent, str input, str output, str expected,
//	         u32 n, n x (str id, str text),              context
//	         audit citation_audit, str time (RFC 3339, empty when absent),
//	         value metadata (an object, or null when absent),
//	         u32 n, n x turn,                            conversation
//	         u32 n, n x call,                            tool calls
//	         u32 n, n x expect                           expected tool calls
//	turn   = str role, str content, str name, str tool_call_id, u32 n, n x call
//	call   = str id, str name, str arguments, str result
//	expect = str name, str arguments, str arguments_schema
//	result = str status, u32 has (bit 0 score, bit 1 passed, bit 2 passed is true), f64 score,
//	         u32 n, n x (str name, f64 value),            dimensions
//	         u32 n, n x (str name, str reason),           skipped dimensions
//	         str reason, strs flags, strs suggestions,
//	         u32 n, n x (str name, str prompt, str output JSON),  steps
//	         u32 n, n x (str rule, str target, f64 from, f64 to),  adjustments
//	         audit citation_audit,
//	         f64 duration_ms, str runtime, str replaced, i64 judge_calls, i64 cache_hits, i64 retries,
//	         i64 prompt_tokens, i64 completion_tokens, strs judge_limits,
//	         u32 n, n x value (objects),                  telemetry nodes
//	         str error code, str error message
//
// Integers are little endian; f64 is an IEEE 754 double, little endian.
const (
	// ExportCodecs is codecs() -> i32: the payload codecs the guest speaks besides JSON,
	// as a bit set. Optional.
	ExportCodecs = "scorekit_v1_codecs"
	// CodecBinary is the binary codec's bit in codecs(). Bit 0 (value 1) named an earlier
	// layout that carried metadata as JSON; the host speaks JSON to a guest offering only
	// that bit.
	CodecBinary = 2
	// CodecRevision is the revision of the binary layout below, which a guest reports in
	// bits 8-15 of codecs(). The layout follows the contract's fields, so a field added to
	// sdk.Run or sdk.Result changes it and this number (TestCodecRevision holds the two
	// together); the host speaks JSON to a guest of another revision rather than misread
	// it.
	CodecRevision = 2
	// CodecRevisionShift is where the revision sits in codecs().
	CodecRevisionShift = 8
	// FlagBinary in score's flags says the run is binary-encoded and the result must be.
	FlagBinary = 2
)

// Tags of a binary-encoded value.
const (
	tagNull = iota
	tagFalse
	tagTrue
	tagNumber
	tagString
	tagArray
	tagObject
)

// maxDepth bounds the nesting of a decoded value, so a hostile payload cannot exhaust the
// stack. encoding/json refuses deeper documents too.
const maxDepth = 10000

// ErrCodec is wrapped by every decoding error of the binary codec.
var ErrCodec = errors.New("binary codec")

// AppendRun appends r's binary encoding to b. It fails only on metadata that does not
// encode as JSON either.
func AppendRun(b []byte, r *sdk.Run) ([]byte, error) {
	for _, s := range [...]string{r.ID, r.Agent, r.Input, r.Output, r.Expected} {
		b = appendStr(b, s)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Context)))
	for _, p := range r.Context {
		b = appendStr(appendStr(b, p.ID), p.Text)
	}
	b = appendAudit(b, r.CitationAudit)
	var t string
	if r.Time != nil {
		t = r.Time.Format(time.RFC3339Nano)
	}
	b = appendStr(b, t)
	var err error
	if r.Metadata == nil {
		b = append(b, tagNull)
	} else if b, err = appendValue(b, r.Metadata, 0); err != nil {
		return b, err
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Conversation)))
	for i := range r.Conversation {
		t := &r.Conversation[i]
		b = appendStr(appendStr(appendStr(appendStr(b, t.Role), t.Content), t.Name), t.ToolCallID)
		b = appendCalls(b, t.ToolCalls)
	}
	b = appendCalls(b, r.ToolCalls)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.ExpectedToolCalls)))
	for _, c := range r.ExpectedToolCalls {
		b = appendStr(appendStr(appendStr(b, c.Name), c.Arguments), c.ArgumentsSchema)
	}
	return b, nil
}

func appendCalls(b []byte, calls []sdk.ToolCall) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(calls)))
	for _, c := range calls {
		b = appendStr(appendStr(appendStr(appendStr(b, c.ID), c.Name), c.Arguments), c.Result)
	}
	return b
}

func (d *decoder) calls() []sdk.ToolCall {
	n := d.count(16)
	if n == 0 {
		return nil
	}
	out := make([]sdk.ToolCall, n)
	for i := range out {
		out[i] = sdk.ToolCall{ID: d.str(), Name: d.str(), Arguments: d.str(), Result: d.str()}
	}
	return out
}

// ReadRun decodes a run AppendRun encoded. The strings of the run share one copy of b.
func ReadRun(b []byte) (sdk.Run, error) {
	d := newDecoder(b)
	var r sdk.Run
	r.ID, r.Agent, r.Input, r.Output, r.Expected = d.str(), d.str(), d.str(), d.str(), d.str()
	if n := d.count(8); n > 0 {
		r.Context = make([]sdk.Passage, n)
		for i := range r.Context {
			r.Context[i] = sdk.Passage{ID: d.str(), Text: d.str()}
		}
	}
	r.CitationAudit = d.audit()
	if s := d.str(); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			d.fail("time: %v", err)
		}
		r.Time = &t
	}
	switch v := d.value(0).(type) {
	case nil:
	case map[string]any:
		r.Metadata = v
	default:
		d.fail("metadata: want an object, got %T", v)
	}
	if n := d.count(20); n > 0 {
		r.Conversation = make([]sdk.Turn, n)
		for i := range r.Conversation {
			r.Conversation[i] = sdk.Turn{Role: d.str(), Content: d.str(), Name: d.str(), ToolCallID: d.str(), ToolCalls: d.calls()}
		}
	}
	r.ToolCalls = d.calls()
	if n := d.count(12); n > 0 {
		r.ExpectedToolCalls = make([]sdk.ExpectedToolCall, n)
		for i := range r.ExpectedToolCalls {
			r.ExpectedToolCalls[i] = sdk.ExpectedToolCall{Name: d.str(), Arguments: d.str(), ArgumentsSchema: d.str()}
		}
	}
	return r, d.done()
}

// AppendResult appends r's binary encoding to b. It fails only on telemetry nodes that do
// not encode as JSON either.
func AppendResult(b []byte, r *sdk.Result) ([]byte, error) {
	b = appendStr(b, string(r.Status))
	var has uint32
	var score float64
	if r.Score != nil {
		has, score = has|1, *r.Score
	}
	if r.Passed != nil {
		has |= 2
		if *r.Passed {
			has |= 4
		}
	}
	b = binary.LittleEndian.AppendUint32(b, has)
	b = appendF64(b, score)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Dimensions)))
	for k, v := range r.Dimensions {
		b = appendF64(appendStr(b, k), v)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.SkippedDimensions)))
	for k, v := range r.SkippedDimensions {
		b = appendStr(appendStr(b, k), v)
	}
	b = appendStr(b, r.Reason)
	b = appendStrs(b, r.Flags)
	b = appendStrs(b, r.Suggestions)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Steps)))
	for _, s := range r.Steps {
		b = appendStr(appendStr(appendStr(b, s.Name), s.Prompt), string(s.Output))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Adjustments)))
	for _, a := range r.Adjustments {
		b = appendF64(appendF64(appendStr(appendStr(b, a.Rule), a.Target), a.From), a.To)
	}
	b = appendAudit(b, r.CitationAudit)
	t := &r.Telemetry
	b = appendStr(appendStr(appendF64(b, t.DurationMS), t.Runtime), t.Replaced)
	for _, n := range [...]int{t.JudgeCalls, t.CacheHits, t.Retries, t.PromptTokens, t.CompletionTokens} {
		b = binary.LittleEndian.AppendUint64(b, uint64(int64(n)))
	}
	b = appendStrs(b, t.JudgeLimits)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(t.Nodes)))
	for _, n := range t.Nodes {
		var err error
		if b, err = appendValue(b, n, 0); err != nil {
			return b, err
		}
	}
	if r.Error != nil {
		return appendStr(appendStr(b, r.Error.Code), r.Error.Message), nil
	}
	return appendStr(appendStr(b, ""), ""), nil
}

// ReadResult decodes a result AppendResult encoded. It checks the encoding, including
// that step outputs are valid JSON, not the result's meaning (see sdk.Result.Validate).
// The strings of the result share one copy of b, so b may be reused afterwards.
func ReadResult(b []byte) (sdk.Result, error) {
	d := newDecoder(b)
	var r sdk.Result
	r.Status = sdk.Status(d.str())
	has := d.u32()
	score := d.f64()
	if has&1 != 0 {
		r.Score = &score
	}
	if has&2 != 0 {
		passed := has&4 != 0
		r.Passed = &passed
	}
	if n := d.count(12); n > 0 {
		r.Dimensions = make(map[string]float64, n)
		for range n {
			k := d.str()
			r.Dimensions[k] = d.f64()
		}
	}
	if n := d.count(8); n > 0 {
		r.SkippedDimensions = make(map[string]string, n)
		for range n {
			k := d.str()
			r.SkippedDimensions[k] = d.str()
		}
	}
	r.Reason = d.str()
	r.Flags = d.strs()
	r.Suggestions = d.strs()
	if n := d.count(12); n > 0 {
		r.Steps = make([]sdk.Step, n)
		for i := range r.Steps {
			r.Steps[i] = sdk.Step{Name: d.str(), Prompt: d.str()}
			if out := d.bytes(); len(out) > 0 {
				if !json.Valid(out) {
					d.fail("step %q output is not valid JSON", r.Steps[i].Name)
				}
				r.Steps[i].Output = json.RawMessage(out)
			}
		}
	}
	if n := d.count(24); n > 0 {
		r.Adjustments = make([]sdk.Adjustment, n)
		for i := range r.Adjustments {
			r.Adjustments[i] = sdk.Adjustment{Rule: d.str(), Target: d.str(), From: d.f64(), To: d.f64()}
		}
	}
	r.CitationAudit = d.audit()
	t := &r.Telemetry
	t.DurationMS, t.Runtime, t.Replaced = d.f64(), d.str(), d.str()
	for _, n := range [...]*int{&t.JudgeCalls, &t.CacheHits, &t.Retries, &t.PromptTokens, &t.CompletionTokens} {
		*n = d.int()
	}
	t.JudgeLimits = d.strs()
	if n := d.count(1); n > 0 {
		t.Nodes = make([]map[string]any, n)
		for i := range t.Nodes {
			node, ok := d.value(0).(map[string]any)
			if !ok {
				d.fail("telemetry node %d: want an object", i)
			}
			t.Nodes[i] = node
		}
	}
	if code, msg := d.str(), d.str(); code != "" || msg != "" {
		r.Error = &sdk.Error{Code: code, Message: msg}
	}
	return r, d.done()
}

func appendStr(b []byte, s string) []byte {
	return append(binary.LittleEndian.AppendUint32(b, uint32(len(s))), s...)
}

func appendStrs(b []byte, ss []string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ss)))
	for _, s := range ss {
		b = appendStr(b, s)
	}
	return b
}

func appendF64(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

func appendAudit(b []byte, a *sdk.CitationAudit) []byte {
	if a == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	for _, n := range [...]int{a.Citations, a.Sentences, a.UncitedSentences} {
		b = binary.LittleEndian.AppendUint64(b, uint64(int64(n)))
	}
	b = appendStrs(appendStrs(b, a.InvalidCitations), a.UnsupportedCitations)
	if a.HallucinationDetected {
		return append(b, 1)
	}
	return append(b, 0)
}

// appendValue encodes a free-form value as encoding/json would see it: the JSON types
// directly, anything else through a JSON round trip (so a json.Number, an int or a struct
// arrives as the guest would have decoded it from JSON).
func appendValue(b []byte, v any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return b, fmt.Errorf("%w: encode: nested deeper than %d", ErrCodec, maxDepth)
	}
	switch v := v.(type) {
	case nil:
		return append(b, tagNull), nil
	case bool:
		if v {
			return append(b, tagTrue), nil
		}
		return append(b, tagFalse), nil
	case float64:
		return appendF64(append(b, tagNumber), v), nil
	case string:
		return appendStr(append(b, tagString), v), nil
	case []any:
		b = binary.LittleEndian.AppendUint32(append(b, tagArray), uint32(len(v)))
		var err error
		for _, e := range v {
			if b, err = appendValue(b, e, depth+1); err != nil {
				return b, err
			}
		}
		return b, nil
	case map[string]any:
		b = binary.LittleEndian.AppendUint32(append(b, tagObject), uint32(len(v)))
		// Sorted keys keep the encoding of a value stable, as encoding/json's is.
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var err error
		for _, k := range keys {
			if b, err = appendValue(appendStr(b, k), v[k], depth+1); err != nil {
				return b, err
			}
		}
		return b, nil
	}
	j, err := json.Marshal(v)
	if err != nil {
		return b, fmt.Errorf("%w: encode: %w", ErrCodec, err)
	}
	var plain any
	if err := json.Unmarshal(j, &plain); err != nil {
		return b, fmt.Errorf("%w: encode: %w", ErrCodec, err)
	}
	return appendValue(b, plain, depth)
}

// decoder reads the binary codec from its own copy of the payload, whose bytes the
// decoded strings share (they are never written again). The first error sticks and later
// reads return zeros.
type decoder struct {
	b   []byte
	err error
}

func newDecoder(b []byte) decoder {
	return decoder{b: append([]byte(nil), b...)}
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: "+format, append([]any{ErrCodec}, args...)...)
	}
	d.b = nil
}

// take returns the next n bytes; when fewer are left, it fails and returns n zeros.
func (d *decoder) take(n int) []byte {
	if len(d.b) < n {
		d.truncated(n)
		return make([]byte, n)
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) truncated(n int) {
	unit := "bytes"
	if n == 1 {
		unit = "byte"
	}
	d.fail("truncated: want %d more %s, have %d", n, unit, len(d.b))
}

func (d *decoder) byte() byte { return d.take(1)[0] }

func (d *decoder) u32() uint32 { return binary.LittleEndian.Uint32(d.take(4)) }

func (d *decoder) u64() uint64 { return binary.LittleEndian.Uint64(d.take(8)) }

func (d *decoder) f64() float64 { return math.Float64frombits(d.u64()) }

func (d *decoder) int() int {
	v := int64(d.u64())
	if int64(int(v)) != v {
		d.fail("integer %d does not fit an int", v)
		return 0
	}
	return int(v)
}

// count reads an element count, refusing one that cannot fit in what is left (each
// element takes at least min bytes), so a hostile count cannot make us allocate.
func (d *decoder) count(min int) int {
	n := d.u32()
	if uint64(n)*uint64(min) > uint64(len(d.b)) {
		d.fail("count %d exceeds the %d bytes left", n, len(d.b))
		return 0
	}
	return int(n)
}

func (d *decoder) bytes() []byte {
	n := d.u32()
	if uint64(n) > uint64(len(d.b)) {
		d.fail("string of %d bytes exceeds the %d bytes left", n, len(d.b))
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

// str returns the next string, sharing the decoder's copy of the payload.
func (d *decoder) str() string {
	b := d.bytes()
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func (d *decoder) strs() []string {
	n := d.count(4)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *decoder) audit() *sdk.CitationAudit {
	switch d.byte() {
	case 0:
		return nil
	case 1:
	default:
		d.fail("citation_audit: bad presence byte")
		return nil
	}
	a := &sdk.CitationAudit{Citations: d.int(), Sentences: d.int(), UncitedSentences: d.int()}
	a.InvalidCitations = d.strs()
	a.UnsupportedCitations = d.strs()
	switch d.byte() {
	case 0:
	case 1:
		a.HallucinationDetected = true
	default:
		d.fail("citation_audit: bad hallucination_detected byte")
	}
	return a
}

// value decodes a free-form value into the types encoding/json decodes into an any.
func (d *decoder) value(depth int) any {
	if depth > maxDepth {
		d.fail("value nested deeper than %d", maxDepth)
		return nil
	}
	switch tag := d.byte(); tag {
	case tagNull:
		return nil
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagNumber:
		return d.f64()
	case tagString:
		return d.str()
	case tagArray:
		n := d.count(1)
		out := make([]any, n)
		for i := range out {
			out[i] = d.value(depth + 1)
		}
		return out
	case tagObject:
		n := d.count(5)
		out := make(map[string]any, n)
		for range n {
			k := d.str()
			out[k] = d.value(depth + 1)
		}
		return out
	default:
		d.fail("unknown value tag %d", tag)
		return nil
	}
}

func (d *decoder) done() error {
	if d.err == nil && len(d.b) > 0 {
		d.fail("%d bytes left after the last field", len(d.b))
	}
	return d.err
}
