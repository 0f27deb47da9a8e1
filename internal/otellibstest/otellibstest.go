// Package otellibstest reads the golden OTLP exports of GenAI instrumentation libraries
// (ingest/testdata/otel-libs) for tests, and checks the runs made of them as a person
// would: the question and its answer, the tool call with its result, the silent tool
// turn passing the pre-screen. The reader's tests (convert), the service's (both
// backends) and the live test share it, so each holds the runs to the same account.
package otellibstest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/internal/prescreen"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// RunSpans names, per capture, the span each turn's run is made from: the agent or call
// span, or for a trace of model calls only the turn's first model call.
var RunSpans = map[string]string{
	"otel-openai":         "chat gpt-4o-mini",
	"ai-sdk":              "ai.generateText",
	"openinference":       "OpenAI Chat Completions",
	"openinference-agent": "calendar-agent",
	"traceloop":           "calendar-agent.agent",
	"mastra":              "invoke_agent calendar-agent",
}

// Names lists the captures, sorted.
func Names() []string {
	var out []string
	for n := range RunSpans {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Dir is the folder of the captures.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "ingest", "testdata", "otel-libs")
}

// Capture is one capture's requests, as its exporter sent them.
type Capture struct {
	Traces []ptrace.Traces
	Logs   []plog.Logs
	// RawTraces and RawLogs are the request bodies; Protobuf says which encoding.
	RawTraces, RawLogs [][]byte
	Protobuf           bool
}

// Load reads a capture in JSON (traces.jsonl, logs.jsonl; one request a line).
func Load(tb testing.TB, name string) Capture {
	tb.Helper()
	dir := filepath.Join(Dir(), name)
	var c Capture
	eachLine(tb, filepath.Join(dir, "traces.jsonl"), true, func(b []byte) error {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
		c.Traces, c.RawTraces = append(c.Traces, td), append(c.RawTraces, append([]byte(nil), b...))
		return err
	})
	eachLine(tb, filepath.Join(dir, "logs.jsonl"), false, func(b []byte) error {
		ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(b)
		c.Logs, c.RawLogs = append(c.Logs, ld), append(c.RawLogs, append([]byte(nil), b...))
		return err
	})
	return c
}

// LoadProtobuf reads a capture's protobuf requests (protobuf/traces-NNN.pb,
// logs-NNN.pb); ok is false when it has none.
func LoadProtobuf(tb testing.TB, name string) (Capture, bool) {
	tb.Helper()
	files, _ := filepath.Glob(filepath.Join(Dir(), name, "protobuf", "*.pb"))
	sort.Strings(files)
	c := Capture{Protobuf: true}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		switch {
		case strings.HasPrefix(filepath.Base(f), "traces-"):
			td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(raw)
			if err != nil {
				tb.Fatalf("%s: %v", f, err)
			}
			c.Traces, c.RawTraces = append(c.Traces, td), append(c.RawTraces, raw)
		case strings.HasPrefix(filepath.Base(f), "logs-"):
			ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(raw)
			if err != nil {
				tb.Fatalf("%s: %v", f, err)
			}
			c.Logs, c.RawLogs = append(c.Logs, ld), append(c.RawLogs, raw)
		}
	}
	return c, len(c.Traces) > 0
}

// SpanNames maps the capture's spans by TRACEID-SPANID to their names; a span later in
// its trace than another of the same name is named "NAME (not the first)".
func (c Capture) SpanNames() map[string]string {
	type first struct {
		id    string
		start pcommon.Timestamp
	}
	out := map[string]string{}
	firsts := map[string]first{}
	for _, td := range c.Traces {
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					id := sp.TraceID().String() + "-" + sp.SpanID().String()
					out[id] = sp.Name()
					k := sp.TraceID().String() + "/" + sp.Name()
					if f, ok := firsts[k]; ok && f.start <= sp.StartTimestamp() {
						out[id] += " (not the first)"
						continue
					} else if ok {
						out[f.id] += " (not the first)"
					}
					firsts[k] = first{id, sp.StartTimestamp()}
				}
			}
		}
	}
	return out
}

// CheckCalendarRuns checks the three runs of the calendar agent's turns (common/turns.cjs
// of the captures): each made from a span named runSpan (spanName names a run id's
// span), for the agent calendar-agent, with the system instructions, the model and the
// last call's finish reason and token usage; the question answered "Paris." with no
// tool call; the cancel_event call with {"time":"15:00"} and its result
// {"cancelled":true}, then the answer; and the silent turn, its call and result
// {"cancelled":true,"notified":true} and no text, which the pre-screen passes.
func CheckCalendarRuns(t testing.TB, runs []sdk.Run, spanName func(runID string) string, runSpan string) {
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
	if flag, detail, ok := prescreen.Unanswered(silent); ok {
		t.Errorf("the silent turn did something (its call and result), but the pre-screen's guard says %s: %s", flag, detail)
	}
	res, err := heuristic.NewPrescreen().Score(context.Background(), sdk.Call{Run: *silent})
	if err != nil || len(res.Flags) > 0 || res.Status != sdk.StatusScored {
		t.Errorf("the silent turn through the pre-screen: %+v, %v; want scored with no flag", res, err)
	}
}

// eachLine calls line with each line of an OTLP/JSON export of one request a line; a file
// that is not there is an error only when it must be.
func eachLine(tb testing.TB, path string, must bool, line func([]byte) error) {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) && !must {
		return
	}
	if err != nil {
		tb.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 16<<20)
	n := 0
	for sc.Scan() {
		n++
		if err := line(sc.Bytes()); err != nil {
			tb.Fatalf("%s:%d: not OTLP JSON: %v", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if n == 0 {
		tb.Errorf("%s: empty", path)
	}
}
