package otlpcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/scorekit/scorekit/internal/service/otlpcheck/otlpchecktest"
)

// encodings are the two OTLP/HTTP encodings, each with its walk and pdata's decoder.
var encodings = []struct {
	name   string
	walk   func([]byte, Signal, Limits) (Counts, error)
	traces func(ptrace.Traces) []byte
	logs   func(plog.Logs) []byte
	decode func([]byte, Signal) (any, error)
}{
	{"protobuf", Protobuf,
		func(td ptrace.Traces) []byte { return must(ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()) },
		func(ld plog.Logs) []byte { return must(plogotlp.NewExportRequestFromLogs(ld).MarshalProto()) },
		func(b []byte, s Signal) (any, error) {
			if s == Logs {
				r := plogotlp.NewExportRequest()
				return r, r.UnmarshalProto(b)
			}
			r := ptraceotlp.NewExportRequest()
			return r, r.UnmarshalProto(b)
		}},
	{"json", JSON,
		func(td ptrace.Traces) []byte { return must(ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()) },
		func(ld plog.Logs) []byte { return must(plogotlp.NewExportRequestFromLogs(ld).MarshalJSON()) },
		func(b []byte, s Signal) (any, error) {
			if s == Logs {
				r := plogotlp.NewExportRequest()
				return r, r.UnmarshalJSON(b)
			}
			r := ptraceotlp.NewExportRequest()
			return r, r.UnmarshalJSON(b)
		}},
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// fill puts a value of every type in m, a map and an array among them, nested depth deep.
func fill(m pcommon.Map, depth int) {
	m.PutStr("s", "text")
	m.PutStr("empty", "")
	m.PutInt("i", -42)
	m.PutDouble("d", 0.5)
	m.PutBool("b", true)
	m.PutEmptyBytes("bytes").FromRaw([]byte{1, 2, 3})
	m.PutEmpty("nil")
	sl := m.PutEmptySlice("array")
	sl.AppendEmpty().SetStr("one")
	sl.AppendEmpty().SetInt(2)
	if depth > 1 {
		fill(m.PutEmptyMap("map"), depth-1)
		fill(sl.AppendEmpty().SetEmptyMap(), depth-1)
	}
}

// fullTraces sets every field pdata encodes, each message at least twice.
func fullTraces() ptrace.Traces {
	td := ptrace.NewTraces()
	for r := range 2 {
		rs := td.ResourceSpans().AppendEmpty()
		rs.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
		fill(rs.Resource().Attributes(), 2)
		rs.Resource().SetDroppedAttributesCount(1)
		for s := range 2 {
			ss := rs.ScopeSpans().AppendEmpty()
			ss.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
			ss.Scope().SetName("lib")
			ss.Scope().SetVersion("1.0")
			ss.Scope().SetDroppedAttributesCount(2)
			fill(ss.Scope().Attributes(), 1)
			for i := range 3 {
				sp := ss.Spans().AppendEmpty()
				sp.SetTraceID(pcommon.TraceID{byte(r), byte(s), byte(i), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
				sp.SetSpanID(pcommon.SpanID{byte(r), byte(s), byte(i), 1, 2, 3, 4, 5})
				sp.SetParentSpanID(pcommon.SpanID{9, 9, 9, 9, 9, 9, 9, 9})
				sp.TraceState().FromRaw("vendor=1")
				sp.SetFlags(1)
				sp.SetName("chat gpt-4o")
				sp.SetKind(ptrace.SpanKindClient)
				sp.SetStartTimestamp(1)
				sp.SetEndTimestamp(2)
				fill(sp.Attributes(), 3)
				sp.SetDroppedAttributesCount(3)
				sp.SetDroppedEventsCount(4)
				sp.SetDroppedLinksCount(5)
				sp.Status().SetCode(ptrace.StatusCodeError)
				sp.Status().SetMessage("timed out")
				for range 2 {
					ev := sp.Events().AppendEmpty()
					ev.SetName("exception")
					ev.SetTimestamp(3)
					ev.SetDroppedAttributesCount(1)
					fill(ev.Attributes(), 2)
					ln := sp.Links().AppendEmpty()
					ln.SetTraceID(pcommon.TraceID{1})
					ln.SetSpanID(pcommon.SpanID{2})
					ln.TraceState().FromRaw("a=b")
					ln.SetFlags(1)
					ln.SetDroppedAttributesCount(1)
					fill(ln.Attributes(), 1)
				}
			}
		}
	}
	return td
}

// fullLogs sets every field of a log record pdata encodes.
func fullLogs() plog.Logs {
	ld := plog.NewLogs()
	for range 2 {
		rl := ld.ResourceLogs().AppendEmpty()
		rl.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
		fill(rl.Resource().Attributes(), 1)
		for range 2 {
			sl := rl.ScopeLogs().AppendEmpty()
			sl.SetSchemaUrl("x")
			sl.Scope().SetName("lib")
			fill(sl.Scope().Attributes(), 1)
			for i := range 3 {
				lr := sl.LogRecords().AppendEmpty()
				lr.SetTimestamp(1)
				lr.SetObservedTimestamp(2)
				lr.SetSeverityNumber(plog.SeverityNumberWarn)
				lr.SetSeverityText("WARN")
				lr.SetEventName("gen_ai.client.inference.operation.details")
				fill(lr.Body().SetEmptyMap(), 3)
				fill(lr.Attributes(), 2)
				lr.SetDroppedAttributesCount(1)
				lr.SetFlags(1)
				lr.SetTraceID(pcommon.TraceID{byte(i), 1})
				lr.SetSpanID(pcommon.SpanID{byte(i), 2})
			}
		}
	}
	return ld
}

// want counts what a request holds, from pdata's own model.
type want struct{ records, attributes, values, depth int }

func (w *want) value(v pcommon.Value, depth int) {
	w.values++
	w.depth = max(w.depth, depth)
	switch v.Type() {
	case pcommon.ValueTypeMap:
		w.attrs(v.Map(), depth)
	case pcommon.ValueTypeSlice:
		for _, e := range v.Slice().All() {
			w.value(e, depth+1)
		}
	}
}

func (w *want) attrs(m pcommon.Map, depth int) {
	for _, v := range m.All() {
		w.attributes++
		w.value(v, depth+1)
	}
}

func wantTraces(td ptrace.Traces) want {
	var w want
	for _, rs := range td.ResourceSpans().All() {
		w.attrs(rs.Resource().Attributes(), 0)
		for _, ss := range rs.ScopeSpans().All() {
			w.attrs(ss.Scope().Attributes(), 0)
			for _, sp := range ss.Spans().All() {
				w.records++
				w.attrs(sp.Attributes(), 0)
				for _, ev := range sp.Events().All() {
					w.attrs(ev.Attributes(), 0)
				}
				for _, ln := range sp.Links().All() {
					w.attrs(ln.Attributes(), 0)
				}
			}
		}
	}
	return w
}

func wantLogs(ld plog.Logs) want {
	var w want
	for _, rl := range ld.ResourceLogs().All() {
		w.attrs(rl.Resource().Attributes(), 0)
		for _, sl := range rl.ScopeLogs().All() {
			w.attrs(sl.Scope().Attributes(), 0)
			for _, lr := range sl.LogRecords().All() {
				w.records++
				w.attrs(lr.Attributes(), 0)
				w.value(lr.Body(), 1)
			}
		}
	}
	return w
}

// TestSchemaMatchesPdata: a request with every field pdata encodes, in both encodings,
// is walked without a field the schema does not know, and the walk counts what the
// request holds.
func TestSchemaMatchesPdata(t *testing.T) {
	for _, enc := range encodings {
		for _, tc := range []struct {
			name string
			sig  Signal
			body []byte
			want want
		}{
			{"traces", Traces, enc.traces(fullTraces()), wantTraces(fullTraces())},
			{"logs", Logs, enc.logs(fullLogs()), wantLogs(fullLogs())},
		} {
			t.Run(enc.name+"/"+tc.name, func(t *testing.T) {
				c, err := enc.walk(tc.body, tc.sig, Limits{})
				if err != nil {
					t.Fatal(err)
				}
				if c.skipped != 0 {
					t.Errorf("%d fields skipped: the schema misses a field pdata encodes", c.skipped)
				}
				got := want{int(c.Records), int(c.Attributes), int(c.Values), c.Depth}
				if got != tc.want {
					t.Errorf("counted %+v; the request holds %+v", got, tc.want)
				}
				if c.Strings == 0 || c.StringBytes == 0 {
					t.Errorf("no strings counted: %+v", c)
				}
			})
		}
	}
}

// TestBothEncodingsCountAlike: protobuf and JSON of one request count the same messages;
// JSON's strings are as long or longer (escapes, base64).
func TestBothEncodingsCountAlike(t *testing.T) {
	td := fullTraces()
	pc, err := Protobuf(encodings[0].traces(td), Traces, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	jc, err := JSON(encodings[1].traces(td), Traces, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if pc.messages != jc.messages || pc.Strings != jc.Strings || jc.StringBytes < pc.StringBytes {
		t.Fatalf("protobuf %+v\njson %+v", pc, jc)
	}
}

// TestEntityRefsJSON: a resource's entity refs (which pdata's public API does not set)
// are known to the walk, in both encodings.
func TestEntityRefs(t *testing.T) {
	js := `{"resourceSpans":[{"resource":{"entityRefs":[{"schemaUrl":"u","type":"service","idKeys":["service.name","service.namespace"],"description_keys":["d"]}]}}]}`
	var ref []byte
	ref = protowire.AppendTag(ref, 1, protowire.BytesType)
	ref = protowire.AppendString(ref, "u")
	ref = protowire.AppendTag(ref, 2, protowire.BytesType)
	ref = protowire.AppendString(ref, "service")
	for _, k := range []string{"service.name", "service.namespace"} {
		ref = protowire.AppendTag(ref, 3, protowire.BytesType)
		ref = protowire.AppendString(ref, k)
	}
	ref = protowire.AppendTag(ref, 4, protowire.BytesType)
	ref = protowire.AppendString(ref, "d")
	res := protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), ref)
	rs := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), res)
	pb := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), rs)
	for i, body := range [][]byte{pb, []byte(js)} {
		enc := encodings[i]
		if _, err := enc.decode(body, Traces); err != nil {
			t.Fatalf("%s: pdata: %v", enc.name, err)
		}
		c, err := enc.walk(body, Traces, Limits{})
		if err != nil || c.skipped != 0 || c.messages[entityRef] != 1 || c.Strings != 5 {
			t.Fatalf("%s: %+v %v; want one entity ref of 5 strings, nothing skipped", enc.name, c, err)
		}
	}
}

// nested is a request whose span has one attribute nested depth deep, through arrays
// (kv false) or maps.
func nested(depth int, kv bool) ptrace.Traces {
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{1})
	sp.SetSpanID(pcommon.SpanID{1})
	sp.Attributes().PutStr("first", "x")
	v := sp.Attributes().PutEmpty("deep")
	for range depth - 1 {
		if kv {
			v = v.SetEmptyMap().PutEmpty("k")
		} else {
			v = v.SetEmptySlice().AppendEmpty()
		}
	}
	v.SetStr("bottom")
	return td
}

func nestedLog(depth int) plog.Logs {
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	v := lr.Body()
	for range depth - 1 {
		v = v.SetEmptyMap().PutEmpty("k")
	}
	v.SetStr("bottom")
	return ld
}

// TestDepth: a value nested to the limit is taken, one level more is refused, through
// arrays and maps, in an attribute and in a log body, in both encodings; the error says
// where.
func TestDepth(t *testing.T) {
	const limit = 8
	for _, enc := range encodings {
		for _, tc := range []struct {
			name string
			sig  Signal
			body func(depth int) []byte
			path string
		}{
			{"arrays", Traces, func(d int) []byte { return enc.traces(nested(d, false)) }, `resourceSpans[0].scopeSpans[0].spans[0].attributes[1] (key "deep").value`},
			{"maps", Traces, func(d int) []byte { return enc.traces(nested(d, true)) }, `resourceSpans[0].scopeSpans[0].spans[0].attributes[1] (key "deep").value`},
			{"log body", Logs, func(d int) []byte { return enc.logs(nestedLog(d)) }, `resourceLogs[0].scopeLogs[0].logRecords[0].body`},
		} {
			t.Run(enc.name+"/"+tc.name, func(t *testing.T) {
				c, err := enc.walk(tc.body(limit), tc.sig, Limits{MaxDepth: limit})
				if err != nil || c.Depth != limit {
					t.Fatalf("at the limit: depth %d, %v", c.Depth, err)
				}
				_, err = enc.walk(tc.body(limit+1), tc.sig, Limits{MaxDepth: limit})
				var de *DepthError
				if !errors.As(err, &de) || de.Limit != limit {
					t.Fatalf("past the limit: %v; want a DepthError", err)
				}
				if de.Path != tc.path || !strings.Contains(err.Error(), "more than 8 levels") {
					t.Fatalf("error %q, path %q; want the path %q", err, de.Path, tc.path)
				}
			})
		}
	}
}

// TestDepthCeiling: a limit past DepthCeiling is taken as DepthCeiling, as far as pdata
// may recurse.
func TestDepthCeiling(t *testing.T) {
	var de *DepthError
	if _, err := Protobuf(otlpchecktest.NestedProtobuf(DepthCeiling), Traces, Limits{MaxDepth: 1 << 30}); err != nil {
		t.Fatalf("at the ceiling: %v", err)
	}
	if _, err := Protobuf(otlpchecktest.NestedProtobuf(DepthCeiling+1), Traces, Limits{MaxDepth: 1 << 30}); !errors.As(err, &de) || de.Limit != DepthCeiling {
		t.Fatalf("past the ceiling: %v; want a DepthError at %d", err, DepthCeiling)
	}
}

// TestUnknownFieldDepth: a field the schema does not name is skipped, within the same
// depth bound (JSON; protobuf skips a field without looking inside it).
func TestUnknownFieldDepth(t *testing.T) {
	body := func(depth int) []byte {
		return []byte(`{"resourceSpans":[{"extra":` + strings.Repeat(`[`, depth) + strings.Repeat(`]`, depth) + `}]}`)
	}
	c, err := JSON(body(8), Traces, Limits{MaxDepth: 8})
	if err != nil || c.skipped != 1 {
		t.Fatalf("at the limit: %+v %v", c, err)
	}
	var de *DepthError
	if _, err := JSON(body(9), Traces, Limits{MaxDepth: 8}); !errors.As(err, &de) {
		t.Fatalf("past the limit: %v; want a DepthError", err)
	}
}

// TestRepro: the requests that took the server down (an attribute nested two million
// deep in 19.5 MB of protobuf; 700,000 deep in 19.6 MB of JSON) stop the walk at the
// limit, without its stack or its memory growing with the nesting.
func TestRepro(t *testing.T) {
	for _, tc := range []struct {
		name string
		body []byte
		walk func([]byte, Signal, Limits) (Counts, error)
	}{
		{"protobuf", otlpchecktest.NestedProtobuf(2_000_000), Protobuf},
		{"json", otlpchecktest.NestedJSON(700_000), JSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var de *DepthError
			allocs := testing.AllocsPerRun(1, func() {
				if _, err := tc.walk(tc.body, Traces, Limits{}); !errors.As(err, &de) {
					t.Fatalf("%d bytes: %v; want a DepthError", len(tc.body), err)
				}
			})
			if de.Limit != DefaultMaxDepth || de.Path != `resourceSpans[0].scopeSpans[0].spans[0].attributes[0] (key "k").value` {
				t.Fatalf("%+v", de)
			}
			// The stack, once; the error and its path.
			if allocs > 20 {
				t.Fatalf("%v allocations", allocs)
			}
		})
	}
}

// TestMalformed: what is not the request is refused where the walk finds it, and pdata
// refuses it too (the walk is no stricter than the decoder it guards).
func TestMalformed(t *testing.T) {
	tag := func(num protowire.Number, typ protowire.Type) []byte { return protowire.AppendTag(nil, num, typ) }
	spanBody := func(b []byte) []byte {
		sp := protowire.AppendBytes(tag(2, protowire.BytesType), b)
		ss := protowire.AppendBytes(tag(2, protowire.BytesType), sp)
		return protowire.AppendBytes(tag(1, protowire.BytesType), ss)
	}
	for _, tc := range []struct {
		name string
		enc  int
		body []byte
		says string
	}{
		{"truncated length", 0, []byte{0x0a, 0x05, 0x01}, "unexpected EOF"},
		{"bad tag", 0, []byte{0x00}, "tag"},
		{"varint overflow", 0, append([]byte{0x10}, bytes.Repeat([]byte{0xff}, 11)...), "overflow"},
		{"wrong wire type", 0, []byte{0x08, 0x01}, "resourceSpans (1) of ExportTraceServiceRequest has wire type 0"},
		{"span field of wrong type", 0, spanBody(append(tag(5, protowire.VarintType), 1)), "name (5) of Span has wire type 0"},
		{"end group alone", 0, tag(7, protowire.EndGroupType), "end group"},
		{"json truncated", 1, []byte(`{"resourceSpans": [`), "ends"},
		{"json not an object", 1, []byte(`[1]`), "the request is an array"},
		{"json spans an object", 1, []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":{}}]}]}`), "spans is an object; OTLP JSON has an array there"},
		{"json span a string", 1, []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":["x"]}]}]}`), "spans is a string; OTLP JSON has an object there"},
		{"json attribute value an array", 1, []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":[{"key":"k","value":[]}]}]}]}]}`), "value is an array"},
		{"json string unterminated", 1, []byte(`{"resourceSpans":[{"schemaUrl":"abc\"}]}`), "does not end"},
		{"json bad literal", 1, []byte(`{"resourceSpans":nul}`), "want null"},
		{"json missing comma", 1, []byte(`{"resourceSpans":[] "x":1}`), "want , or }"},
		{"json trailing comma", 1, []byte(`{"resourceSpans":[{},]}`), "want a value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc := encodings[tc.enc]
			_, err := enc.walk(tc.body, Traces, Limits{})
			var se *SyntaxError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("%v; want a SyntaxError that says %q", err, tc.says)
			}
			if _, err := enc.decode(tc.body, Traces); err == nil {
				t.Fatalf("pdata takes it; the walk refused it: %v", se)
			}
		})
	}
}

// TestEscapedNames: JSON names with escapes are read as the decoder reads them.
func TestEscapedNames(t *testing.T) {
	body := []byte(`{"resource\u0053pans":[{"scope\u0053pans":[{"sp\u0061ns":[{},{}]}]}]}`)
	c, err := JSON(body, Traces, Limits{})
	if err != nil || c.Records != 2 || c.skipped != 0 {
		t.Fatalf("%+v %v; want 2 spans", c, err)
	}
	r, err := encodings[1].decode(body, Traces)
	if err != nil || r.(ptraceotlp.ExportRequest).Traces().SpanCount() != 2 {
		t.Fatalf("pdata: %v", err)
	}
}

// keptBytes is what v, made by decode, holds on the heap: the heap after a collection
// with it, less the heap after one without it.
func keptBytes(decode func() any) int64 {
	heap := func() int64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC() // and the pools' victims
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	v := decode()
	with := heap()
	runtime.KeepAlive(v)
	v = nil
	return with - heap()
}

// shapes are requests of one kind of element each, and an exporter's.
var shapes = []struct {
	name string
	sig  Signal
	make func(n int) any // ptrace.Traces or plog.Logs
}{
	{"spans", Traces, func(n int) any {
		td := ptrace.NewTraces()
		ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
		for i := range n {
			sp := ss.Spans().AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{byte(i), 1})
			sp.SetSpanID(pcommon.SpanID{byte(i), 1})
		}
		return td
	}},
	{"attributes", Traces, func(n int) any {
		td := ptrace.NewTraces()
		at := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes()
		for i := range n {
			at.PutStr(fmt.Sprint("key.", i), strings.Repeat("v", i%300))
		}
		return td
	}},
	{"array values", Traces, func(n int) any {
		td := ptrace.NewTraces()
		sl := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes().PutEmptySlice("a")
		for i := range n {
			sl.AppendEmpty().SetInt(int64(i))
		}
		return td
	}},
	{"nested", Traces, func(n int) any {
		td := ptrace.NewTraces()
		at := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().Attributes()
		for i := range n / 32 {
			v := at.PutEmpty(fmt.Sprint(i))
			for j := range 31 {
				if j%2 == 0 {
					v = v.SetEmptySlice().AppendEmpty()
				} else {
					v = v.SetEmptyMap().PutEmpty("k")
				}
			}
			v.SetBool(true)
		}
		return td
	}},
	{"events and links", Traces, func(n int) any {
		td := ptrace.NewTraces()
		ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
		for i := range n / 4 {
			sp := ss.Spans().AppendEmpty()
			sp.Events().AppendEmpty().SetName(fmt.Sprint(i))
			sp.Links().AppendEmpty().SetTraceID(pcommon.TraceID{1})
		}
		return td
	}},
	{"resources", Traces, func(n int) any {
		td := ptrace.NewTraces()
		for range n / 4 {
			td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Scope().SetName("s")
		}
		return td
	}},
	{"export", Traces, func(n int) any { return otlpchecktest.Export(max(1, n/50), 50) }},
	{"log records", Logs, func(n int) any {
		ld := plog.NewLogs()
		sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
		for i := range n / 4 {
			lr := sl.LogRecords().AppendEmpty()
			lr.Body().SetStr(fmt.Sprint("record ", i))
			lr.Attributes().PutInt("n", int64(i))
		}
		return ld
	}},
}

func encode(enc int, v any) []byte {
	if td, ok := v.(ptrace.Traces); ok {
		return encodings[enc].traces(td)
	}
	return encodings[enc].logs(v.(plog.Logs))
}

// TestDecodedBytesCovers: for requests of each kind of element, of sizes that leave
// slices from nearly full to half empty, the estimate is at least what pdata keeps once
// it has decoded the request, in both encodings. Small requests are decoded many times
// over, so the heap's noise is small beside what is measured.
func TestDecodedBytesCovers(t *testing.T) {
	for _, sh := range shapes {
		for _, n := range []int{5, 33, 1000, 20_000} {
			for enc := range encodings {
				body := encode(enc, sh.make(n))
				c, err := encodings[enc].walk(body, sh.sig, Limits{})
				if err != nil {
					t.Fatal(err)
				}
				copies := max(1, 40_000/n)
				kept := keptBytes(func() any {
					out := make([]any, copies)
					for i := range out {
						if out[i], err = encodings[enc].decode(body, sh.sig); err != nil {
							t.Fatal(err)
						}
					}
					return out
				}) - int64(copies)*16 // the slice of results
				est := c.DecodedBytes() * int64(copies)
				if est < kept {
					t.Errorf("%s n=%d %s: estimate %d B, pdata keeps %d B (%.2fx)", sh.name, n, encodings[enc].name, est/int64(copies), kept/int64(copies), float64(est)/float64(kept))
				} else if n == 20_000 {
					t.Logf("%s n=%d %s: estimate %.2fx of what pdata keeps (%d B)", sh.name, n, encodings[enc].name, float64(est)/float64(kept), kept)
				}
			}
		}
	}
}

// fuzz checks the walk of body against pdata's decoding: the walk does not fail where
// pdata decodes (it is no stricter than the decoder it guards, but for text that is not
// JSON, which pdata's iterator may skip, and groups: protowire checks an unknown group's
// end, pdata does not), and within the depth it allows, pdata's decoding ends.
func fuzz(t *testing.T, enc int, body []byte) {
	c, err := encodings[enc].walk(body, Traces, Limits{MaxDepth: 16})
	var de *DepthError
	if errors.As(err, &de) {
		return // pdata would recurse; not decoded
	}
	lenient := enc == 0 && (bytes.Contains(body, []byte{0x03}) || bytes.Contains(body, []byte{0x04})) || enc == 1 && !json.Valid(body)
	var se *SyntaxError
	if errors.As(err, &se) && lenient {
		return // refused; pdata's JSON iterator can loop on text that is not JSON
	}
	_, perr := encodings[enc].decode(body, Traces)
	if se != nil && perr == nil {
		t.Fatalf("the walk refused what pdata decodes: %v", err)
	}
	if err == nil && c.DecodedBytes() <= 0 {
		t.Fatalf("no estimate: %+v", c)
	}
}

func FuzzProtobuf(f *testing.F) {
	f.Add(encodings[0].traces(fullTraces()))
	f.Add(encodings[0].traces(nested(20, false)))
	f.Add(otlpchecktest.SpansProtobuf(3))
	f.Fuzz(func(t *testing.T, body []byte) { fuzz(t, 0, body) })
}

func FuzzJSON(f *testing.F) {
	f.Add(encodings[1].traces(fullTraces()))
	f.Add(encodings[1].traces(nested(20, true)))
	f.Add([]byte(`{"resource\u0053pans":[{"x":[1,{"y":"\"}"}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) { fuzz(t, 1, body) })
}
