package ingest

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/internal/otellibstest"
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

// TestOTelLibsRuns: through convert, each library's capture (its log records beside its
// spans) makes its three runs as a person reads them (otellibstest.CheckCalendarRuns):
// the question and its answer, the cancel_event call with its arguments and the tool's
// result, and the silent tool turn, whose only output is the call, which the pre-screen
// passes. Each run's id is the trace and span id of the span that made it, and the agent
// is the one the app named.
func TestOTelLibsRuns(t *testing.T) {
	for _, name := range otellibstest.Names() {
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
			names := otellibstest.Load(t, name).SpanNames()
			otellibstest.CheckCalendarRuns(t, runs, func(id string) string { return names[id] }, otellibstest.RunSpans[name])
		})
	}
}
