package host

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

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

// BenchmarkDecodeRun compares, on the example runs, DecodeRun (one read by the token
// decoder) with the path every line took before: the schema, then encoding/json, which
// DecodeRun still takes for lines the fast path gives up on.
//
//	go test -run '^$' -bench DecodeRun -count 6 ./host/
func BenchmarkDecodeRun(b *testing.B) {
	lines := decodeCorpus(b)[:12]
	for _, c := range []struct {
		name   string
		decode func([]byte) (sdk.Run, error)
	}{{"one-read", DecodeRun}, {"schema-then-decode", decodeRunChecked}} {
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
