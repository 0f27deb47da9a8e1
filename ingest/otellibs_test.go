package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// otelLibsDir holds the golden OTLP exports captured from GenAI instrumentation
// libraries (its README.md says which, and how they are regenerated).
const otelLibsDir = "testdata/otel-libs"

// TestOTelLibsCaptures: every library's capture is there, is OTLP as the Collector's data
// model reads it (JSON a request a line, protobuf a request a file, traces and logs), and
// holds the three turns: the question and its answer, the cancel_event call with its
// arguments, and both tool results. The JSON and protobuf exports of one run hold the same
// spans and log records.
func TestOTelLibsCaptures(t *testing.T) {
	for _, name := range []string{"otel-openai", "ai-sdk", "openinference", "openinference-agent", "traceloop", "mastra"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(otelLibsDir, name)
			if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
				t.Errorf("no README.md: %v", err)
			}
			byEncoding := map[string]*capture{"json": {}, "protobuf": {}}
			eachLine(t, filepath.Join(dir, "traces.jsonl"), true, func(b []byte) error {
				td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
				byEncoding["json"].addTraces(td)
				return err
			})
			eachLine(t, filepath.Join(dir, "logs.jsonl"), false, func(b []byte) error {
				ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(b)
				byEncoding["json"].addLogs(ld)
				return err
			})
			pbs, _ := filepath.Glob(filepath.Join(dir, "protobuf", "*.pb"))
			for _, f := range pbs {
				raw, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case strings.HasPrefix(filepath.Base(f), "traces-"):
					td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(raw)
					if err != nil {
						t.Fatalf("%s: not OTLP protobuf traces: %v", f, err)
					}
					byEncoding["protobuf"].addTraces(td)
				case strings.HasPrefix(filepath.Base(f), "logs-"):
					ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(raw)
					if err != nil {
						t.Fatalf("%s: not OTLP protobuf logs: %v", f, err)
					}
					byEncoding["protobuf"].addLogs(ld)
				default:
					t.Errorf("%s: want traces-NNN.pb or logs-NNN.pb", f)
				}
			}
			for enc, c := range byEncoding {
				if len(c.spans) == 0 {
					continue
				}
				text := strings.Join(c.text, "\n")
				for _, want := range []string{"What is the capital of France?", "Paris.", "Cancel my 3pm meeting", "cancel_event", "15:00", "Your 3pm meeting is cancelled.", `"cancelled":true`, `"notified":true`} {
					if !strings.Contains(text, want) {
						t.Errorf("%s: no %q in its spans or log records", enc, want)
					}
				}
			}
			if name == "otel-openai" {
				j, p := byEncoding["json"], byEncoding["protobuf"]
				if got, want := strings.Join(p.ids(), " "), strings.Join(j.ids(), " "); got != want || len(j.logs) == 0 || len(j.logs) != len(p.logs) {
					t.Errorf("protobuf export: spans %s, %d log records; JSON export: spans %s, %d log records", got, len(p.logs), want, len(j.logs))
				}
			}
		})
	}
}

// capture is what one encoding of a capture holds: span ids, log records and every
// string of their attributes, events and bodies.
type capture struct {
	spans []string
	logs  []string
	text  []string
}

func (c *capture) ids() []string { s := append([]string(nil), c.spans...); sort.Strings(s); return s }

func (c *capture) addTraces(td ptrace.Traces) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				c.spans = append(c.spans, sp.TraceID().String()+"-"+sp.SpanID().String())
				c.strings(pcommon.NewValueMap(), sp.Attributes())
				for _, e := range sp.Events().All() {
					c.strings(pcommon.NewValueMap(), e.Attributes())
				}
			}
		}
	}
}

func (c *capture) addLogs(ld plog.Logs) {
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, r := range sl.LogRecords().All() {
				c.logs = append(c.logs, r.SpanID().String())
				c.strings(r.Body(), r.Attributes())
			}
		}
	}
}

// strings adds the strings of v and attrs, nested ones included.
func (c *capture) strings(v pcommon.Value, attrs pcommon.Map) {
	var walk func(pcommon.Value)
	walk = func(v pcommon.Value) {
		switch v.Type() {
		case pcommon.ValueTypeStr:
			c.text = append(c.text, v.Str())
		case pcommon.ValueTypeSlice:
			for _, e := range v.Slice().All() {
				walk(e)
			}
		case pcommon.ValueTypeMap:
			for _, e := range v.Map().All() {
				walk(e)
			}
		}
	}
	walk(v)
	for _, a := range attrs.All() {
		walk(a)
	}
}

// eachLine calls line with each line of an OTLP/JSON export of one request a line; a file
// that is not there is an error only when it must be.
func eachLine(t *testing.T, path string, must bool, line func([]byte) error) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) && !must {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 16<<20)
	n := 0
	for sc.Scan() {
		n++
		if err := line(sc.Bytes()); err != nil {
			t.Fatalf("%s:%d: not OTLP JSON: %v", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Errorf("%s: empty", path)
	}
}

// libRunSpans names, per capture, the span each turn's run is made from: the agent or
// call span, or for a trace of model calls only the turn's first model call.
var libRunSpans = map[string]string{
	"otel-openai":         "chat gpt-4o-mini",
	"ai-sdk":              "ai.generateText",
	"openinference":       "OpenAI Chat Completions",
	"openinference-agent": "calendar-agent",
	"traceloop":           "calendar-agent.agent",
	"mastra":              "invoke_agent calendar-agent",
}

// TestOTelLibsRuns: through convert, each library's capture (its log records beside its
// spans) makes its three runs as a person reads them: the question and its answer, the
// cancel_event call with its arguments and the tool's result, and the silent tool turn,
// whose only output is the call, which the pre-screen passes. Each run's id is the trace
// and span id of the span that made it, and the agent is the one the app named.
func TestOTelLibsRuns(t *testing.T) {
	for name, runSpan := range libRunSpans {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(otelLibsDir, name)
			traces, err := os.Open(filepath.Join(dir, "traces.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			defer traces.Close()
			o := Options{OnError: func(n int, err error) { t.Errorf("record %d: %v", n, err) }}
			if logs, err := os.Open(filepath.Join(dir, "logs.jsonl")); err == nil {
				defer logs.Close()
				o.Logs = logs
			}
			var runs []sdk.Run
			if _, err := Convert(FormatOTelGenAI, traces, o, func(r sdk.Run) error { runs = append(runs, r); return nil }); err != nil {
				t.Fatal(err)
			}
			spans := spansOf(t, filepath.Join(dir, "traces.jsonl"))
			CheckCalendarRuns(t, runs, func(id string) string { return spans[id] }, runSpan)
		})
	}
}

// spansOf maps the spans of an OTLP/JSON traces export by TRACEID-SPANID to their names;
// a span later in its trace than another of the same name is named "NAME (not the first)".
func spansOf(t *testing.T, path string) map[string]string {
	type first struct {
		id    string
		start pcommon.Timestamp
	}
	out := map[string]string{}
	firsts := map[string]first{} // trace/name -> the first span
	eachLine(t, path, true, func(b []byte) error {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					out[RunID(sp)] = sp.Name()
					k := sp.TraceID().String() + "/" + sp.Name()
					if f, ok := firsts[k]; ok && f.start <= sp.StartTimestamp() {
						out[RunID(sp)] += " (not the first)"
						continue
					} else if ok {
						out[f.id] += " (not the first)"
					}
					firsts[k] = first{RunID(sp), sp.StartTimestamp()}
				}
			}
		}
		return err
	})
	return out
}

// CheckCalendarRuns checks the three runs of the calendar agent's turns (common/turns.cjs):
// each made from a span named runSpan (spanName names a run id's span), the question
// answered "Paris.", the cancel_event call with {"time":"15:00"} and its result, and the
// silent turn with its call and result, which the pre-screen passes.
func CheckCalendarRuns(t *testing.T, runs []sdk.Run, spanName func(runID string) string, runSpan string) {
	t.Helper()
	if len(runs) != 3 {
		for _, r := range runs {
			t.Logf("run %s: %q -> %q", r.ID, r.Input, r.Output)
		}
		t.Fatalf("%d runs, want one per turn (3)", len(runs))
	}
	var capital, cancel, silent *sdk.Run
	for i := range runs {
		r := &runs[i]
		if got := spanName(r.ID); got != runSpan {
			t.Errorf("run %s is made from span %q, want %q", r.ID, got, runSpan)
		}
		if r.Agent != "calendar-agent" {
			t.Errorf("run %s: agent %q, want calendar-agent", r.ID, r.Agent)
		}
		if !strings.Contains(r.Purpose(), "You are a calendar assistant") {
			t.Errorf("run %s: the system instructions are not in its conversation: %+v", r.ID, r.Conversation)
		}
		if r.Metadata["model"] != "gpt-4o-mini" || r.Metadata["finish_reason"] != "stop" {
			t.Errorf("run %s: metadata %v, want the model and the last call's finish reason", r.ID, r.Metadata)
		}
		if in, _ := r.Metadata["input_tokens"].(float64); in <= 0 {
			t.Errorf("run %s: no token usage in %v", r.ID, r.Metadata)
		}
		switch {
		case r.Input == "What is the capital of France?":
			capital = r
		case r.Input == "Cancel my 3pm meeting" && r.Output != "":
			cancel = r
		case r.Input == "Cancel my 3pm meeting":
			silent = r
		default:
			t.Errorf("run %s: input %q is none of the turns' questions", r.ID, r.Input)
		}
	}
	if capital == nil || cancel == nil || silent == nil {
		t.Fatalf("the turns are not all there: capital %v, cancel %v, silent %v", capital != nil, cancel != nil, silent != nil)
	}
	if capital.Output != "Paris." || len(capital.ToolCalls) != 0 {
		t.Errorf("the question: answer %q, tool calls %+v; want \"Paris.\" and none", capital.Output, capital.ToolCalls)
	}
	if cancel.Output != "Your 3pm meeting is cancelled." {
		t.Errorf("the cancel turn: answer %q", cancel.Output)
	}
	checkCall := func(what string, r *sdk.Run, result string) {
		if len(r.ToolCalls) != 1 {
			t.Errorf("%s: tool calls %+v, want the one cancel_event call", what, r.ToolCalls)
			return
		}
		c := r.ToolCalls[0]
		var args map[string]any
		if c.Name != "cancel_event" || json.Unmarshal([]byte(c.Arguments), &args) != nil || args["time"] != "15:00" {
			t.Errorf("%s: call %+v, want cancel_event {\"time\":\"15:00\"}", what, c)
		}
		var got, want any
		if json.Unmarshal([]byte(c.Result), &got) != nil || json.Unmarshal([]byte(result), &want) != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the call's result %q, want %s", what, c.Result, result)
		}
	}
	checkCall("the cancel turn", cancel, `{"cancelled":true}`)
	checkCall("the silent turn", silent, `{"cancelled":true,"notified":true}`)
	if silent.Output != "" {
		t.Errorf("the silent turn: answer %q, want none", silent.Output)
	}
	if flag, detail, ok := heuristic.Unanswered(silent); ok {
		t.Errorf("the silent turn did something (its call and result), but the pre-screen's guard says %s: %s", flag, detail)
	}
	res, err := heuristic.NewPrescreen().Score(context.Background(), sdk.Call{Run: *silent})
	if err != nil || len(res.Flags) > 0 || res.Status != sdk.StatusScored {
		t.Errorf("the silent turn through the pre-screen: %+v, %v; want scored with no flag", res, err)
	}
}
