package ingest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenFiles are the logs in testdata/, written as each client writes them, each but the
// first three with a record cut off in the middle.
var goldenFiles = []struct{ format, file string }{
	{FormatOpenAIChat, "openai-chat.jsonl"},
	{FormatOTelGenAI, "otel-openllmetry.json"},
	{FormatOTelGenAI, "otel-genai.jsonl"},
	{FormatOpenAIChat, "openai-chat-tools.jsonl"},
	{FormatOpenAIResponses, "openai-responses.jsonl"},
	{FormatAnthropic, "anthropic-messages.jsonl"},
	{FormatOTelGenAI, "otel-genai-events.jsonl"},
}

// TestGolden converts each log in testdata/ and compares the runs, and the errors for the
// records that cannot be runs, with its golden file (go test -update rewrites them). Every
// run written must decode as a dataset line.
func TestGolden(t *testing.T) {
	for _, c := range goldenFiles {
		t.Run(c.file, func(t *testing.T) {
			in, err := os.Open(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			var got bytes.Buffer
			opts := Options{OnError: func(n int, err error) { fmt.Fprintf(&got, "# record %d: %v\n", n, err) }}
			sum, err := Convert(c.format, in, opts, func(r sdk.Run) error {
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
			fmt.Fprintf(&got, "# %d records read, %d runs, %d skipped\n", sum.Records, sum.Runs, sum.Skipped)
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

// TestCutOffRecords: in every log with a record cut off in the middle, that record alone
// is reported, with its number and the reason, and every record after it is converted:
// the run count is what the whole records make.
func TestCutOffRecords(t *testing.T) {
	for _, c := range []struct {
		format, file string
		cut, runs    int
	}{
		{FormatOpenAIChat, "openai-chat-tools.jsonl", 4, 4},
		{FormatOpenAIResponses, "openai-responses.jsonl", 3, 4},
		{FormatAnthropic, "anthropic-messages.jsonl", 3, 4},
		{FormatOTelGenAI, "otel-genai.jsonl", 2, 2},
		{FormatOTelGenAI, "otel-genai-events.jsonl", 2, 3},
	} {
		t.Run(c.file, func(t *testing.T) {
			var errs []string
			runs := convertFile(t, c.format, c.file, Options{OnError: func(n int, err error) {
				if strings.Contains(err.Error(), "not JSON") {
					errs = append(errs, fmt.Sprintf("%d: %v", n, err))
				}
			}})
			want := fmt.Sprintf("%d: line %d: not JSON: the record is cut off", c.cut, c.cut)
			if len(errs) != 1 || !strings.HasPrefix(errs[0], want) {
				t.Errorf("errors %v, want one %q", errs, want)
			}
			if len(runs) != c.runs {
				t.Errorf("%d runs, want %d", len(runs), c.runs)
			}
		})
	}
}

// TestOneRunPerTurn: the rounds of a turn (tool calls, their results, the final answer)
// make one run in every format, with the tool calls' results, usage and latency summed,
// the last round's stop reason; a round whose next round the log lacks is a run judged on
// its calls; a call that failed is a run whose metadata records the error.
func TestOneRunPerTurn(t *testing.T) {
	byID := func(runs []sdk.Run) map[string]sdk.Run {
		m := map[string]sdk.Run{}
		for _, r := range runs {
			m[r.ID] = r
		}
		return m
	}
	chat := byID(convertFile(t, FormatOpenAIChat, "openai-chat-tools.jsonl", Options{OnError: func(int, error) {}}))
	if r := chat["req_0002"]; r.Output != "Booked DY1302 to Oslo on Friday 9 January for 98 EUR (booking PNR7QX)." ||
		len(r.ToolCalls) != 2 || r.ToolCalls[1].Result == "" || r.Metadata["rounds"] != 3.0 ||
		r.Metadata["input_tokens"] != 660.0 || r.Metadata["latency_ms"] != 2300.0 || r.Metadata["finish_reason"] != "stop" {
		t.Errorf("chat, three rounds: %+v", r)
	}
	if r := chat["req_0001"]; r.Input != "Cancel my 3pm meeting with Dana" || len(r.ToolCalls) != 1 || r.ToolCalls[0].Result != `{"cancelled":true,"event_id":"evt_8812"}` {
		t.Errorf("chat, the round's arguments sent back re-encoded: %+v", r)
	}
	if r := chat["req_0007"]; r.Output != "" || len(r.ToolCalls) != 1 || r.Metadata["finish_reason"] != "tool_calls" {
		t.Errorf("chat, a round without its next: %+v", r)
	}
	if r := chat["req_0008"]; r.Metadata["error"] != "Request timed out." || r.Output != "" {
		t.Errorf("chat, a failed call: %+v", r)
	}

	resp := byID(convertFile(t, FormatOpenAIResponses, "openai-responses.jsonl", Options{OnError: func(int, error) {}}))
	if r := resp["log-r1"]; r.Metadata["rounds"] != 2.0 || len(r.ToolCalls) != 1 || !strings.Contains(r.ToolCalls[0].Result, "in_transit") || r.Purpose() == "" {
		t.Errorf("responses, chained by previous_response_id: %+v", r)
	}
	if r := resp["log-r4"]; r.Metadata["rounds"] != 3.0 || len(r.ToolCalls) != 2 {
		t.Errorf("responses, stateless: %+v", r)
	}
	if r := resp["log-r7"]; r.Metadata["finish_reason"] != "max_output_tokens" {
		t.Errorf("responses, incomplete: %+v", r)
	}
	if r := resp["log-r8"]; r.Metadata["error"] != "The server had an error processing your request." || r.Metadata["status"] != "failed" {
		t.Errorf("responses, failed: %+v", r)
	}

	anth := byID(convertFile(t, FormatAnthropic, "anthropic-messages.jsonl", Options{OnError: func(int, error) {}}))
	if r := anth["msg-log-1"]; r.Metadata["rounds"] != 3.0 || len(r.ToolCalls) != 2 || !strings.Contains(r.ToolCalls[0].Result, `"is_error":true`) ||
		r.Input != "I'm locked out of my account, my username is jdoe. Can you reset it?" || r.Metadata["stop_reason"] != "end_turn" {
		t.Errorf("anthropic, a failed call and its retry: %+v", r)
	}
	if r := anth["msg-log-7"]; r.Metadata["stop_reason"] != "max_tokens" {
		t.Errorf("anthropic, max_tokens: %+v", r)
	}
	if r := anth["msg-log-8"]; r.Metadata["error"] != "Overloaded" {
		t.Errorf("anthropic, overloaded: %+v", r)
	}

	otel := byID(convertFile(t, FormatOTelGenAI, "otel-genai-events.jsonl", Options{OnError: func(int, error) {}}))
	if r := otel["7c1e0b3f9a2d4c5e8f60718293a4b5c6-1a2b3c4d5e6f7081"]; r.Metadata["rounds"] != 2.0 || len(r.ToolCalls) != 1 || !strings.Contains(r.ToolCalls[0].Result, "reversed") ||
		r.Purpose() != "You answer billing questions for Fabrikam. Look invoices up." || r.Agent != "billing-bot" {
		t.Errorf("otel span events, two rounds: %+v", r)
	}
	if r := otel["1e2d3c4b5a69788796a5b4c3d2e1f001-708192031425364a"]; r.Output != "La facture est jointe." || r.Metadata["finish_reason"] != "stop" {
		t.Errorf("otel gen_ai.content events: %+v", r)
	}
}

// TestCrashedAgentIsARun: an agent span that ended in ERROR without an answer is a run
// with an empty output, named after its span, whose metadata records the error from its
// exception event; the call the failed tool span answered carries that failure.
func TestCrashedAgentIsARun(t *testing.T) {
	runs := convertFile(t, FormatOTelGenAI, "otel-genai-events.jsonl", Options{OnError: func(int, error) {}})
	i := slices.IndexFunc(runs, func(r sdk.Run) bool { return r.ID == "0d1c2b3a49586776a5b4c3d2e1f00f1e-4d5e6f7081920314" })
	if i < 0 {
		t.Fatalf("the crashed agent's span made no run: %+v", runs)
	}
	r := runs[i]
	if r.Agent != "triage-bot" || r.Output != "" || r.Metadata["error"] != "tool 'lookup_customer' did not answer within 30s" {
		t.Errorf("run %+v", r)
	}
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].Result != `{"error":"TimeoutError: no answer within 30s"}` {
		t.Errorf("tool calls %+v", r.ToolCalls)
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
	if r.Time == nil || r.Time.UnixNano() != 1767225602500000000 || r.Metadata["latency_ms"] != 2500.0 {
		t.Errorf("time %v, latency %v, want the span's end and duration", r.Time, r.Metadata["latency_ms"])
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
	byID := map[string]sdk.Run{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	if r := byID["log-1"]; r.Agent != "qa-bot" || r.Metadata["finish_reason"] != "stop" || r.Metadata["model"] != "gpt-4o-mini-2024-07-18" {
		t.Errorf("request/response record: %+v", r)
	}
	if r := byID["chatcmpl-A2"]; r.Agent != "fallback" || r.Input != "Send the Q3 report to Dana." || r.Output != "" || len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "send_email" {
		t.Errorf("content parts and a tool call: %+v", r)
	}
	if r := byID["record-3"]; r.Output != "Filed TICKET-42 as P1." || r.ToolCalls[0].Result != "TICKET-42" || r.Metadata["channel"] != "email" {
		t.Errorf("messages record: %+v", r)
	}
	if _, ok := byID["7"]; !ok {
		t.Errorf("numeric id: %v", byID)
	}
	if !strings.Contains(errs[0], `4: a "request" without its "response"`) || !strings.Contains(errs[1], "5: no assistant turn after the last user turn") {
		t.Errorf("errors %v", errs)
	}
}

func TestRecordsShapes(t *testing.T) {
	line := `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}`
	pretty := "{\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"q\"},\n    {\"role\": \"assistant\", \"content\": \"a\"}\n  ]\n}\n"
	for _, c := range []struct {
		name, in string
		runs     int
		bad      []string
	}{
		{"JSON Lines", line + "\n" + line + "\n", 2, nil},
		{"a JSON array", "[" + line + ",\n" + line + "]", 2, nil},
		{"concatenated, a BOM", "\xef\xbb\xbf" + line + line, 2, nil},
		{"documents printed over lines", pretty + pretty, 2, nil},
		{"a printed document cut off, then whole ones", pretty + pretty[:30] + "\n" + pretty, 2, []string{"2: line 7: not JSON: the record is cut off"}},
		{"a line that is not JSON", line + "\nINFO proxy restarted\n" + line, 2, []string{"2: line 2: not JSON: invalid character 'I'"}},
		{"a cut-off line at the end", line + "\n" + line[:20], 1, []string{"2: line 2: not JSON: the record is cut off"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var bad []string
			sum, err := Convert(FormatOpenAIChat, strings.NewReader(c.in), Options{OnError: func(n int, err error) {
				bad = append(bad, fmt.Sprintf("%d: %v", n, err))
			}}, func(sdk.Run) error { return nil })
			if err != nil || sum.Runs != c.runs || len(bad) != len(c.bad) || sum.Skipped != len(c.bad) || sum.Records != c.runs+len(c.bad) {
				t.Fatalf("summary %+v, errors %v, %v; want %d runs and %v", sum, bad, err, c.runs, c.bad)
			}
			for i := range bad {
				if !strings.HasPrefix(bad[i], c.bad[i]) {
					t.Errorf("error %q, want %q", bad[i], c.bad[i])
				}
			}
		})
	}
	if _, err := Convert(FormatOpenAIChat, strings.NewReader(" \n"), Options{}, func(sdk.Run) error { return nil }); err != ErrNoRuns {
		t.Errorf("empty input: %v", err)
	}
	_, err := Convert(FormatOpenAIChat, strings.NewReader(line+"\n{oops\n"), Options{}, func(sdk.Run) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "record 2: line 2: not JSON") {
		t.Errorf("bad record without OnError: %v", err)
	}
	_, err = Convert(FormatOTelGenAI, strings.NewReader(`{"resourceSpans":[]}`), Options{}, func(sdk.Run) error { return nil })
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
	if _, err := Convert(format, f, o, func(r sdk.Run) error { runs = append(runs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return runs
}
