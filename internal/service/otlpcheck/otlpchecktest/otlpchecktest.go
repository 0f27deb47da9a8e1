// Package otlpchecktest builds OTLP export requests for tests of what a server takes:
// hostile ones (a value nested millions deep, a body of empty spans or attributes, each
// cheap to send and dear to decode) and a legitimate export of a given size.
package otlpchecktest

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of the OTLP messages these requests use.
const (
	requestResourceSpans = 1
	resourceSpansScope   = 2
	scopeSpansSpans      = 2
	spanTraceID          = 1
	spanSpanID           = 2
	spanName             = 5
	spanAttributes       = 9
	keyValueKey          = 1
	keyValueValue        = 2
	anyValueString       = 1
	anyValueArray        = 5
	arrayValueValues     = 1
)

// builder writes a protobuf message from the inside out, into a buffer filled from its
// end: each field's header is written once what it holds is written and its length is
// known, so a message nested millions deep costs one pass and one buffer.
type builder struct {
	buf []byte
	pos int
}

func newBuilder(size int) *builder { return &builder{buf: make([]byte, size), pos: size} }

func (b *builder) bytes() []byte { return b.buf[b.pos:] }

func (b *builder) raw(p []byte) {
	b.pos -= len(p)
	copy(b.buf[b.pos:], p)
}

func (b *builder) varint(v uint64) {
	var tmp [binaryMaxVarint]byte
	b.raw(protowire.AppendVarint(tmp[:0], v))
}

const binaryMaxVarint = 10

// wrap makes everything written so far field num of the message around it.
func (b *builder) wrap(num protowire.Number) {
	b.varint(uint64(len(b.buf) - b.pos))
	b.varint(protowire.EncodeTag(num, protowire.BytesType))
}

// field writes field num holding p before what is written.
func (b *builder) field(num protowire.Number, p []byte) {
	b.raw(p)
	b.varint(uint64(len(p)))
	b.varint(protowire.EncodeTag(num, protowire.BytesType))
}

var (
	traceID = []byte{0x5b, 0x8e, 0xff, 0xf7, 0x98, 0x03, 0x81, 0x03, 0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, 0x0c}
	spanID  = []byte{0xee, 0xe1, 0x9b, 0x7e, 0xc3, 0xc1, 0xb1, 0x74}
)

// spanAround makes what is written the attribute "k" of one span, in a request.
func (b *builder) spanAround() {
	b.wrap(keyValueValue)
	b.field(keyValueKey, []byte("k"))
	b.wrap(spanAttributes)
	b.field(spanName, []byte("nested"))
	b.field(spanSpanID, spanID)
	b.field(spanTraceID, traceID)
	b.request()
}

// request makes what is written the body of one ScopeSpans' spans, in a request.
func (b *builder) request() {
	b.wrap(scopeSpansSpans)
	b.wrap(resourceSpansScope)
	b.wrap(requestResourceSpans)
}

// NestedProtobuf is an ExportTraceServiceRequest of one span whose attribute "k" is an
// array holding an array ... depth values deep (a string at the bottom): 19.5 MB at two
// million.
func NestedProtobuf(depth int) []byte {
	b := newBuilder(12*depth + 256)
	b.field(anyValueString, []byte("x"))
	for range depth - 1 {
		b.wrap(arrayValueValues)
		b.wrap(anyValueArray)
	}
	b.spanAround()
	return b.bytes()
}

// NestedJSON is NestedProtobuf in OTLP JSON: 28 bytes a level.
func NestedJSON(depth int) []byte {
	var s strings.Builder
	s.Grow(28*depth + 256)
	s.WriteString(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"nested","attributes":[{"key":"k","value":`)
	for range depth - 1 {
		s.WriteString(`{"arrayValue":{"values":[`)
	}
	s.WriteString(`{"stringValue":"x"}`)
	for range depth - 1 {
		s.WriteString(`]}}`)
	}
	s.WriteString(`}]}]}]}]}`)
	return []byte(s.String())
}

// SpansProtobuf is an ExportTraceServiceRequest of n spans of one trace that hold only
// their ids: 30 bytes a span.
func SpansProtobuf(n int) []byte {
	var rec []byte
	b := newBuilder(32*n + 64)
	for i := range n {
		id := [8]byte{0xee, 0xe1, 0x9b, 0x7e, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}
		rec = protowire.AppendTag(rec[:0], spanTraceID, protowire.BytesType)
		rec = protowire.AppendBytes(rec, traceID)
		rec = protowire.AppendTag(rec, spanSpanID, protowire.BytesType)
		rec = protowire.AppendBytes(rec, id[:])
		b.field(scopeSpansSpans, rec)
	}
	b.wrap(resourceSpansScope)
	b.wrap(requestResourceSpans)
	return b.bytes()
}

// SpansJSON is n spans in OTLP JSON, each empty: 3 bytes a span.
func SpansJSON(n int) []byte {
	return []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[` + strings.Repeat(`{},`, n-1) + `{}]}]}]}`)
}

// AttributesProtobuf is an ExportTraceServiceRequest of one span with n empty
// attributes: 2 bytes an attribute.
func AttributesProtobuf(n int) []byte {
	b := newBuilder(2*n + 256)
	attr := []byte{byte(protowire.EncodeTag(spanAttributes, protowire.BytesType)), 0}
	for range n {
		b.raw(attr)
	}
	b.field(spanSpanID, spanID)
	b.field(spanTraceID, traceID)
	b.request()
	return b.bytes()
}

// AttributesJSON is AttributesProtobuf in OTLP JSON: 3 bytes an attribute.
func AttributesJSON(n int) []byte {
	return []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","attributes":[` +
		strings.Repeat(`{},`, n-1) + `{}]}]}]}]}`)
}

// Export is what an exporter sends: spans spans (in traces of 8, each with its agent
// span, as an instrumented agent records them), each with attrs attributes (about 35
// bytes each in protobuf), the GenAI attributes among them. A Collector's batch of 8192
// spans of 50 attributes is 15 MiB.
func Export(spans, attrs int) ptrace.Traces { return Batch(0, spans, attrs) }

// Batch is Export's batch number n: its traces' ids are its own, so each batch makes new
// runs.
func Batch(n, spans, attrs int) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "trip-service")
	rs.Resource().Attributes().PutStr("telemetry.sdk.language", "go")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("agent-framework")
	ss.Scope().SetVersion("1.4.2")
	for i := range spans {
		sp := ss.Spans().AppendEmpty()
		t := i / 8
		trace := pcommon.TraceID{byte(t >> 24), byte(t >> 16), byte(t >> 8), byte(t), byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n), 1, 2, 3, 4, 5, 6, 7, 8}
		sp.SetTraceID(trace)
		sp.SetSpanID(pcommon.SpanID{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i), 1, 2, 3, 4})
		agent := i%8 == 7
		if !agent {
			sp.SetParentSpanID(pcommon.SpanID{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i | 7), 1, 2, 3, 4})
		}
		sp.SetStartTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)*1_000_000))
		sp.SetEndTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)*1_000_000 + 500_000))
		sp.SetKind(ptrace.SpanKindInternal)
		at := sp.Attributes()
		at.EnsureCapacity(attrs)
		switch {
		case agent:
			sp.SetName("invoke_agent planner")
			at.PutStr("gen_ai.operation.name", "invoke_agent")
			at.PutStr("gen_ai.agent.name", "planner")
			at.PutStr("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Plan a day in Lyon."}]}]`)
			at.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"Morning at the Musée des Confluences."}],"finish_reason":"stop"}]`)
		default:
			sp.SetName("chat gpt-4o")
			at.PutStr("gen_ai.operation.name", "chat")
			at.PutStr("gen_ai.request.model", "gpt-4o")
			at.PutInt("gen_ai.usage.input_tokens", 1200)
			at.PutInt("gen_ai.usage.output_tokens", 85)
		}
		for j := at.Len(); j < attrs; j++ {
			at.PutStr(fmt.Sprintf("app.attribute_%02d", j), fmt.Sprintf("value-%d-%d", i, j))
		}
	}
	return td
}

// ExportProtobuf and ExportJSON are Export encoded as an exporter sends it.
func ExportProtobuf(spans, attrs int) []byte {
	b, err := ptraceotlp.NewExportRequestFromTraces(Export(spans, attrs)).MarshalProto()
	if err != nil {
		panic(err) // pdata encodes what it built
	}
	return b
}

// ExportJSON is Export in OTLP JSON.
func ExportJSON(spans, attrs int) []byte {
	b, err := ptraceotlp.NewExportRequestFromTraces(Export(spans, attrs)).MarshalJSON()
	if err != nil {
		panic(err)
	}
	return b
}
