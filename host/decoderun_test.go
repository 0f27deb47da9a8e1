package host

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/sdk"
)

// TestDecodeRunShapes decodes runs in the shapes agents produce them and checks the
// normalized view scorers see.
func TestDecodeRunShapes(t *testing.T) {
	cases := []struct {
		name string
		line string
		want sdk.Run
	}{
		{"numeric id", `{"id":42,"input":"q","output":"a"}`, sdk.Run{ID: "42", Input: "q", Output: "a"}},
		{"byte order mark", "\xef\xbb\xbf" + `{"id":"x","output":"a"}`, sdk.Run{ID: "x", Output: "a"}},
		{"chat input: the last user turn is the question",
			`{"input":[{"role":"system","content":"You triage email."},{"role":"user","content":"first"},{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"text","text":"What is"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"the capital?"}]}],"output":"Paris"}`,
			sdk.Run{Input: "What is\nthe capital?", Output: "Paris", Conversation: []sdk.Turn{
				{Role: "system", Content: "You triage email."}, {Role: "user", Content: "first"},
				{Role: "assistant", Content: "ok"}, {Role: "user", Content: "What is\nthe capital?"}}}},
		{"assistant message with OpenAI tool calls",
			`{"input":"weather in Paris?","output":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}}`,
			sdk.Run{Input: "weather in Paris?", ToolCalls: []sdk.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}}}},
		{"agent turns: text joined, results matched by id",
			`{"input":"q","output":[{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"a","function":{"name":"search","arguments":{"q":"x"}}},{"id":"b","name":"fetch","arguments":"{}"}]},{"role":"tool","tool_call_id":"b","content":"page"},{"role":"tool","tool_call_id":"a","content":"hits"},{"role":"assistant","content":"It is x."}]}`,
			sdk.Run{Input: "q", Output: "Let me look.\n\nIt is x.", ToolCalls: []sdk.ToolCall{
				{ID: "a", Name: "search", Arguments: `{"q":"x"}`, Result: "hits"}, {ID: "b", Name: "fetch", Arguments: "{}", Result: "page"}}}},
		{"flat tool calls beside a string output",
			`{"input":"q","output":"done","tool_calls":[{"name":"send_email","arguments":{"to":"a@b"},"result":{"ok":true}}]}`,
			sdk.Run{Input: "q", Output: "done", ToolCalls: []sdk.ToolCall{{Name: "send_email", Arguments: `{"to":"a@b"}`, Result: `{"ok":true}`}}}},
		{"refusal part", `{"input":"q","output":{"role":"assistant","content":[{"type":"refusal","refusal":"I can't help with that."}]}}`,
			sdk.Run{Input: "q", Output: "I can't help with that."}},
		{"canonical form round-trips",
			`{"input":"q","conversation":[{"role":"user","content":"q"}],"output":"a","tool_calls":[{"id":"1","name":"f"}]}`,
			sdk.Run{Input: "q", Output: "a", Conversation: []sdk.Turn{{Role: "user", Content: "q"}}, ToolCalls: []sdk.ToolCall{{ID: "1", Name: "f"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeRun([]byte(c.line))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
			// What a plugin receives is the run marshalled: it must decode to the same run.
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			again, err := DecodeRun(b)
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("re-decoding %s: %+v, %v", b, again, err)
			}
		})
	}
}

func TestPurposeFromSystemTurn(t *testing.T) {
	r, err := DecodeRun([]byte(`{"input":[{"role":"system","content":"Triage support email into Slack."},{"role":"user","content":"From: a"}],"output":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Purpose(); got != "Triage support email into Slack." {
		t.Errorf("Purpose() = %q", got)
	}
	r.Metadata = map[string]any{"purpose": "meta wins"}
	if got := r.Purpose(); got != "meta wins" {
		t.Errorf("Purpose() = %q, want metadata first", got)
	}
}

// decodeCorpus is every dataset line the tests can reach: the examples and the shapes
// above, so the fast path is compared with the slow one on real lines.
func decodeCorpus(t testing.TB) [][]byte {
	var lines [][]byte
	b, err := os.ReadFile(filepath.Join("..", "examples", "runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			lines = append(lines, []byte(l))
		}
	}
	for _, l := range []string{
		`{"id":42,"input":"q","output":"a","time":"2026-01-02T03:04:05Z","metadata":{"a":[1,{"b":null}],"c":"d"}}`,
		`{"output":"a","Input":"case differs"}`,
		`{"output":"a","output":"b"}`,
		`{"output":"a\u00e9\n","input":"\ud83d\ude00"}`,
		`{"output":"a","context":[]}`,
		`{"output":"a","metadata":{}}`,
		`{"output":"a","time":"2026-01-02t03:04:05z"}`,
		`{"output":"a","time":null}`,
		`{"output":"a","context":[{"ID":"x","text":"t"}]}`,
		`{"output":"a","context":[{"id":1.50,"text":"t","extra":[1]}]}`,
		`{"output":{"content":"hi"}}`,
		`{"output":"x","citation_audit":{"citations":2,"sentences":1,"uncited_sentences":0,"hallucination_detected":true}}`,
		"{\"output\":\"\xff\"}",
		`{"output":"a"} {"output":"b"}`,
		`{"input":[{"role":"user","content":"q"}],"output":[{"role":"assistant","tool_calls":[{"id":7,"function":{"name":"f","arguments":{"x":1}}}]},{"role":"tool","tool_call_id":7,"content":"r"},{"role":"assistant","content":[{"type":"text","text":"done"}]}]}`,
		`{"input":"q","conversation":[{"role":"system","content":"s"}],"output":"a","tool_calls":[{"name":"f","result":[1,2]}]}`,
		// Conversations and tool calls as a run is written (storedChat), and beside it.
		`{"id":"ab-cd","agent":"a","input":"q","conversation":[{"role":"system","content":"s"},{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"id":"c1","name":"f","arguments":"{\"x\":1}","result":"r"}]},{"role":"tool","content":"r","tool_call_id":"c1"}],"output":"a","tool_calls":[{"id":"c1","name":"f","arguments":"{}","result":"ok"}],"metadata":{"trace_id":"ab","tokens":12}}`,
		`{"conversation":[{"role":"user","content":"q"}],"input":[{"role":"user","content":"q"}],"output":"a"}`,
		`{"output":[{"role":"assistant","content":"a"}],"tool_calls":[{"name":"f"}]}`,
		`{"output":{"role":"assistant","content":"a"},"conversation":[{"role":"user","content":"q"}]}`,
		`{"input":[{"role":"user","content":"q"}],"output":"a","tool_calls":[{"name":"f"}],"citation_audit":{"citations":0,"sentences":1,"uncited_sentences":1,"hallucination_detected":false}}`,
		`{"output":"a","conversation":[{"Role":"user","content":"q"}]}`,
		`{"output":"a","conversation":[{"role":"assistant","refusal":"no"},{"role":"assistant","content":"c","refusal":"no"}]}`,
		`{"output":"a","tool_calls":[{"id":7,"name":"f"}],"conversation":[{"role":"tool","tool_call_id":7.0,"content":"r"}]}`,
		`{"output":"a","conversation":[],"tool_calls":[]}`,
		`{"output":"a","conversation":null,"tool_calls":null}`,
		`{"output":"a","conversation":[{"role":"user","content":"q","x":[1,{"y":2}]}],"tool_calls":[{"name":"f","type":"function"}]}`,
		`{"output":"a","conversation":[{"role":"user","content":null}]}`,
		`{"output":"a","conversation":[{"role":"user","content":[{"type":"text","text":"q"}]}]}`,
		`{"output":"a","tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{}"}}]}`,
		`{"output":"a","tool_calls":[{"name":"f","arguments":{"x":1}}]}`,
		`{"output":"a","tool_calls":[{"name":"f","ID":"x"}]}`,
		`{"output":"a","tool_calls":[{"name":"f","id":null}]}`,
	} {
		lines = append(lines, []byte(l))
	}
	return lines
}

// FuzzDecodeRunFastPath holds the fast path to the slow one: whatever line the fast path
// accepts, the schema and encoding/json accept and decode to the same run.
func FuzzDecodeRunFastPath(f *testing.F) {
	for _, l := range decodeCorpus(f) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, ok := decodeRunFast(line)
		if !ok {
			return
		}
		slow, err := decodeRunChecked(line)
		if err != nil {
			if fast.Validate() != nil {
				return // both refuse: the fast path's caller validates too
			}
			t.Fatalf("fast path accepted %q, slow path refused: %v", line, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast %#v\nslow %#v", line, fast, slow)
		}
	})
}

// TestDecodeRunFastPathTakesRealLines checks that the lines the benchmarks and the demo
// score take the fast path, so its speed is what they measure.
func TestDecodeRunFastPathTakesRealLines(t *testing.T) {
	for _, l := range decodeCorpus(t)[:12] {
		if _, ok := decodeRunFast(l); !ok {
			t.Errorf("slow path for %s", l)
		}
	}
}

// storedChat is a run as the service stores one OTLP made: a conversation with a tool
// call and its result, the calls, metadata; json.Marshal writes it as every stored run
// and every run sent to a plugin is written.
func storedChat(t testing.TB) []byte {
	at := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	run := sdk.Run{ID: "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", Agent: "support", Input: "Where is my order 1234?",
		Conversation: []sdk.Turn{
			{Role: "system", Content: "You answer customers about their orders.\nBe brief."},
			{Role: "user", Content: "Where is my order 1234?"},
			{Role: "assistant", ToolCalls: []sdk.ToolCall{{ID: "call_1", Name: "lookup_order", Arguments: `{"id":"1234"}`, Result: `{"status":"shipped"}`}}},
			{Role: "tool", Name: "lookup_order", Content: `{"status":"shipped"}`, ToolCallID: "call_1"},
		},
		Output:    "Your order 1234 has shipped \u2014 it should arrive tomorrow.",
		ToolCalls: []sdk.ToolCall{{ID: "call_1", Name: "lookup_order", Arguments: `{"id":"1234"}`, Result: `{"status":"shipped"}`}},
		Time:      &at,
		Metadata: map[string]any{"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "span_id": "00f067aa0ba902b7", "operation": "invoke_agent",
			"model": "gpt-4o-mini", "input_tokens": 812.0, "output_tokens": 64.0, "latency_ms": 1830.5, "finish_reason": "stop"},
	}
	b, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeRunFastPathTakesWrittenRuns: a run as json.Marshal writes it (a stored run,
// a run sent to a plugin), conversation and tool calls included, is read in one read by
// the fast path, to the run that was written.
func TestDecodeRunFastPathTakesWrittenRuns(t *testing.T) {
	line := storedChat(t)
	fast, ok := decodeRunFast(line)
	if !ok {
		t.Fatalf("slow path for %s", line)
	}
	slow, err := decodeRunChecked(line)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("fast %#v\nslow %#v", fast, slow)
	}
	again, err := json.Marshal(fast)
	if err != nil || string(again) != string(line) {
		t.Fatalf("written again: %s, %v\nwant %s", again, err, line)
	}
}

// BenchmarkDecodeRun compares, on the example runs, DecodeRun (one read by the token
// decoder) with the path every line took before: the schema, then encoding/json, which
// DecodeRun still takes for lines the fast path gives up on.
//
//	go test -run '^$' -bench DecodeRun -count 6 ./host/
//
// stored-chat decodes a run as the service stores one OTLP made (storedChat), as an
// evaluation's job reads it.
func BenchmarkDecodeRun(b *testing.B) {
	lines := decodeCorpus(b)[:12]
	for _, c := range []struct {
		name   string
		lines  [][]byte
		decode func([]byte) (sdk.Run, error)
	}{{"one-read", lines, DecodeRun}, {"schema-then-decode", lines, decodeRunChecked}, {"stored-chat", [][]byte{storedChat(b)}, DecodeRun}} {
		lines := c.lines
		b.Run(c.name, func(b *testing.B) {
			n := 0
			c0 := testkit.CPUTime()
			for b.Loop() {
				if _, err := c.decode(lines[n%len(lines)]); err != nil {
					b.Fatal(err)
				}
				n++
			}
			// CPU time does not grow when other processes compete for the cores.
			b.ReportMetric(float64((testkit.CPUTime()-c0).Nanoseconds())/float64(n), "cpu-ns/line")
		})
	}
}
