package ingest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestGolden converts each log in testdata/ and compares the runs, and the errors for the
// records that cannot be runs, with its golden file (go test -update rewrites them). Every
// run written must decode as a dataset line.
func TestGolden(t *testing.T) {
	for _, c := range []struct{ format, file string }{
		{FormatOpenAIChat, "openai-chat.jsonl"},
		{FormatOTelGenAI, "otel-genai.jsonl"},
		{FormatOTelGenAI, "otel-openllmetry.json"},
	} {
		t.Run(c.file, func(t *testing.T) {
			in, err := os.Open(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			var got bytes.Buffer
			opts := Options{OnError: func(n int, err error) { fmt.Fprintf(&got, "# record %d: %v\n", n, err) }}
			err = Convert(c.format, in, opts, func(r sdk.Run) error {
				b, err := json.Marshal(r)
				if err != nil {
					return err
				}
				if _, err := host.DecodeRun(b); err != nil {
					t.Errorf("run %s does not decode as a dataset line: %v", r.ID, err)
				}
				got.Write(b)
				got.WriteByte('\n')
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", strings.TrimSuffix(strings.TrimSuffix(c.file, ".jsonl"), ".json")+".runs.golden")
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./ingest -update writes it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("runs differ from %s (go test ./ingest -update rewrites it after a deliberate change):\n got:\n%s\nwant:\n%s", golden, got.Bytes(), want)
			}
		})
	}
}

// TestOTelGenAIAgentRun checks the normalized view of an agent span in detail: the last
// user turn is the question, the system instructions open the conversation, the tool call
// comes from the execute_tool span below it with its result, and the model calls inside
// the agent are not runs of their own.
func TestOTelGenAIAgentRun(t *testing.T) {
	runs := convertFile(t, FormatOTelGenAI, "otel-genai.jsonl", Options{OnError: func(int, error) {}})
	if len(runs) != 2 {
		t.Fatalf("%d runs, want the 2 agent spans that recorded an output", len(runs))
	}
	r := runs[0]
	if r.Input != "What is the weather in Paris?" || r.Output != "It is 18 °C in Paris." || r.Agent != "weather-bot" {
		t.Errorf("run %+v", r)
	}
	if r.Purpose() != "You are a weather assistant. Answer with the temperature in Celsius." {
		t.Errorf("purpose %q", r.Purpose())
	}
	if len(r.ToolCalls) != 1 || r.ToolCalls[0] != (sdk.ToolCall{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`, Result: `{"temp_c":18}`}) {
		t.Errorf("tool calls %+v", r.ToolCalls)
	}
	if r.Time == nil || r.Time.UnixNano() != 1767225602500000000 {
		t.Errorf("time %v, want the span's end", r.Time)
	}
	if e := runs[1].Metadata["error"]; e != "429 Too Many Requests" {
		t.Errorf("a span with an error status: metadata.error %v", e)
	}
}

func TestOpenAIChatShapes(t *testing.T) {
	var errs []string
	runs := convertFile(t, FormatOpenAIChat, "openai-chat.jsonl", Options{Agent: "fallback", OnError: func(n int, err error) {
		errs = append(errs, fmt.Sprintf("%d: %v", n, err))
	}})
	if len(runs) != 4 || len(errs) != 2 {
		t.Fatalf("%d runs and errors %v; want 4 runs and records 4 and 5 refused", len(runs), errs)
	}
	if r := runs[0]; r.ID != "log-1" || r.Agent != "qa-bot" || r.Metadata["finish_reason"] != "stop" || r.Metadata["model"] != "gpt-4o-mini-2024-07-18" {
		t.Errorf("request/response record: %+v", r)
	}
	if r := runs[1]; r.ID != "chatcmpl-A2" || r.Agent != "fallback" || r.Input != "Send the Q3 report to Dana." || r.Output != "" || len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "send_email" {
		t.Errorf("content parts and a tool call: %+v", r)
	}
	if r := runs[2]; r.Output != "Filed TICKET-42 as P1." || r.ToolCalls[0].Result != "TICKET-42" || r.Metadata["channel"] != "email" || r.ID != "record-3" {
		t.Errorf("messages record: %+v", r)
	}
	if r := runs[3]; r.ID != "7" {
		t.Errorf("numeric id: %q", r.ID)
	}
	if !strings.Contains(errs[0], `4: a "request" without its "response"`) || !strings.Contains(errs[1], "5: no assistant turn after the last user turn") {
		t.Errorf("errors %v", errs)
	}
}

func TestRecordsShapes(t *testing.T) {
	line := `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`
	for name, in := range map[string]string{
		"JSON Lines":          line + "\n" + line + "\n",
		"a JSON array":        "[" + line + ",\n" + line + "]",
		"concatenated, a BOM": "\xef\xbb\xbf" + line + line,
	} {
		t.Run(name, func(t *testing.T) {
			var n int
			err := OpenAIChat(strings.NewReader(in), Options{}, func(sdk.Run) error { n++; return nil })
			if err != nil || n != 2 {
				t.Errorf("%d runs, %v", n, err)
			}
		})
	}
	if err := OpenAIChat(strings.NewReader(" \n"), Options{}, func(sdk.Run) error { return nil }); err != ErrNoRuns {
		t.Errorf("empty input: %v", err)
	}
	err := OpenAIChat(strings.NewReader(line+"\n{oops\n"), Options{}, func(sdk.Run) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "record 2: not JSON") {
		t.Errorf("bad record without OnError: %v", err)
	}
	err = OTelGenAI(strings.NewReader(`{"resourceSpans":[]}`), Options{}, func(sdk.Run) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "no GenAI spans") {
		t.Errorf("no spans: %v", err)
	}
}

func convertFile(t *testing.T, format, file string, o Options) []sdk.Run {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var runs []sdk.Run
	if err := Convert(format, f, o, func(r sdk.Run) error { runs = append(runs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return runs
}
