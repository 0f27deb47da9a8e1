package toolcalls_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/plugins/toolcalls"
	"github.com/scorekit/scorekit/sdk"
)

func open(t *testing.T, config string) *host.Scorer {
	t.Helper()
	reg := host.NewRegistry()
	if err := reg.Register(host.Native(toolcalls.New), false); err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage
	if config != "" {
		raw = json.RawMessage(config)
	}
	s, err := host.New(reg).Open(context.Background(), toolcalls.Name, host.OpenOptions{Config: raw})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// decodeRun reads a dataset line as the host does.
func decodeRun(t *testing.T, line string) sdk.Run {
	t.Helper()
	r, err := host.DecodeRun([]byte(line))
	if err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	return r
}

// mastraOptions are the options of Mastra's createToolCallAccuracyScorerCode.
type mastraOptions struct {
	ExpectedTool      string   `json:"expectedTool"`
	StrictMode        bool     `json:"strictMode"`
	ExpectedToolOrder []string `json:"expectedToolOrder"`
}

// mastraConfig is the tool_calls config that reproduces Mastra's scorer with options o,
// as the package documentation states it.
func mastraConfig(o mastraOptions) string {
	var exp []map[string]string
	order := len(o.ExpectedToolOrder) > 0
	if order {
		for _, name := range o.ExpectedToolOrder { // expectedTool is ignored then, as in Mastra
			exp = append(exp, map[string]string{"name": name})
		}
	} else {
		exp = append(exp, map[string]string{"name": o.ExpectedTool})
	}
	b, _ := json.Marshal(map[string]any{"expected": exp, "order": order, "strict": o.StrictMode})
	return string(b)
}

// TestMastraToolCallAccuracy runs every case of Mastra's own test of its tool-call
// accuracy scorer through tool_calls with the config that reproduces it: a case Mastra
// scores 1 passes with score 1, one it scores 0 fails (an ordered partial match keeps its
// share as the score), and one where Mastra throws (no input, or no output at all) fails.
func TestMastraToolCallAccuracy(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "mastra", "tool-call-accuracy.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Name    string          `json:"name"`
			Options mastraOptions   `json:"options"`
			Run     json.RawMessage `json:"run"`
			Mastra  any             `json:"mastra"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Cases) != 16 {
		t.Fatalf("%d cases, want Mastra's 16", len(doc.Cases))
	}
	for _, c := range doc.Cases {
		t.Run(c.Name, func(t *testing.T) {
			run := decodeRun(t, string(c.Run))
			res := open(t, mastraConfig(c.Options)).Score(context.Background(), run)
			if res.Status != sdk.StatusScored || res.Passed == nil {
				t.Fatalf("%s %q, want scored", res.Status, res.Reason)
			}
			switch want := c.Mastra.(type) {
			case float64:
				if *res.Passed != (want == 1) || want == 1 && *res.Score != 1 {
					t.Errorf("score %v passed %v, Mastra scores %v: %s", *res.Score, *res.Passed, want, res.Reason)
				}
			case string: // Mastra throws: no answer to pass
				if *res.Passed {
					t.Errorf("passed (%s); Mastra %s", res.Reason, want)
				}
			default:
				t.Fatalf("mastra %v: want a score or a thrown error", c.Mastra)
			}
		})
	}
}

const cancelled = `"output":[
  {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"cancel_event","arguments":"{\"time\":\"15:00\",\"notify\":true}"}}]},
  {"role":"tool","tool_call_id":"c1","content":"{\"cancelled\":true}"}]`

func TestToolCalls(t *testing.T) {
	cases := []struct {
		name   string
		config string
		line   string
		status sdk.Status
		score  float64
		flags  []string
		reason string // a part of the reason
	}{
		{
			name: "the seed's turn, expected by the run", line: `{"input":"Cancel my 3pm meeting",` + cancelled + `,"expected_tool_calls":[{"name":"cancel_event","arguments":{"time":"15:00"}}]}`,
			status: sdk.StatusScored, score: 1, reason: "1 of 1 expected tool calls made",
		},
		{
			name: "arguments that differ", line: `{"input":"Cancel my 3pm meeting",` + cancelled + `,"expected_tool_calls":[{"name":"cancel_event","arguments":{"time":"16:00"}}]}`,
			status: sdk.StatusScored, score: 0, flags: []string{toolcalls.FlagMissing, toolcalls.FlagUnexpected},
			reason: `call 1 (cancel_event): arguments.time is "15:00", want "16:00"`,
		},
		{
			name: "numbers compare by value, nested objects as subsets", config: `{"expected":[{"name":"book","arguments":{"seats":2,"where":{"city":"Oslo"}}}]}`,
			line:   `{"input":"Book two seats in Oslo","output":{"role":"assistant","tool_calls":[{"name":"book","arguments":{"seats":2.0,"where":{"city":"Oslo","zip":"0150"},"note":"aisle"}}]}}`,
			status: sdk.StatusScored, score: 1,
		},
		{
			name: "a JSON Schema the arguments satisfy", line: `{"input":"Cancel my 3pm meeting",` + cancelled + `,"expected_tool_calls":[{"name":"cancel_event","arguments_schema":{"type":"object","required":["time"],"properties":{"time":{"type":"string","pattern":"^[0-2][0-9]:[0-5][0-9]$"}}}}]}`,
			status: sdk.StatusScored, score: 1,
		},
		{
			name: "a JSON Schema the arguments fail, named at its place", line: `{"input":"Cancel my 3pm meeting",` + cancelled + `,"expected_tool_calls":[{"name":"cancel_event","arguments_schema":{"type":"object","required":["time"],"properties":{"time":{"type":"string","pattern":"^0[0-9]:[0-5][0-9]$"}}}}]}`,
			status: sdk.StatusScored, score: 0, flags: []string{toolcalls.FlagMissing, toolcalls.FlagUnexpected}, reason: "fail the schema: #/time: does not match pattern ^0[0-9]:[0-5][0-9]$",
		},
		{
			name: "the config's expectation for runs without their own", config: `{"expected":[{"name":"cancel_event"},{"name":"notify"}]}`,
			line:   `{"input":"Cancel my 3pm meeting",` + cancelled + `}`,
			status: sdk.StatusScored, score: 0.5, flags: []string{toolcalls.FlagMissing}, reason: "notify (never called)",
		},
		{
			name: "the run's expectation wins over the config's", config: `{"expected":[{"name":"notify"}]}`,
			line:   `{"input":"Cancel my 3pm meeting",` + cancelled + `,"expected_tool_calls":[{"name":"cancel_event"}]}`,
			status: sdk.StatusScored, score: 1,
		},
		{
			name: "no expectation is skipped", line: `{"input":"Cancel my 3pm meeting",` + cancelled + `}`,
			status: sdk.StatusSkipped, reason: "set expected_tool_calls on the run",
		},
		{
			name: "a failed call is reported and still matches", line: `{"input":"Cancel my 3pm meeting","output":[
			  {"role":"assistant","tool_calls":[{"id":"c1","name":"cancel_event","arguments":{"time":"15:00"}}]},
			  {"role":"tool","tool_call_id":"c1","content":"{\"error\":\"calendar unavailable\"}"}],"expected_tool_calls":[{"name":"cancel_event"}]}`,
			status: sdk.StatusScored, score: 1, flags: []string{toolcalls.FlagFailed}, reason: `failed: cancel_event "{\"error\":\"calendar unavailable\"}"`,
		},
		{
			name: "count_failed false: a failed call matches nothing", config: `{"count_failed": false}`, line: `{"input":"Cancel my 3pm meeting","output":[
			  {"role":"assistant","tool_calls":[{"id":"c1","name":"cancel_event","arguments":{"time":"15:00"}}]},
			  {"role":"tool","tool_call_id":"c1","content":"{\"error\":\"calendar unavailable\"}"}],"expected_tool_calls":[{"name":"cancel_event"}]}`,
			status: sdk.StatusScored, score: 0, flags: []string{toolcalls.FlagMissing, toolcalls.FlagUnexpected, toolcalls.FlagFailed}, reason: "its result says it failed",
		},
		{
			name: "every expectation gets its own call, as many as possible", line: `{"input":"Find flights to Oslo and to Bergen","output":{"role":"assistant","tool_calls":[
			  {"name":"search","arguments":{"to":"OSL"}},{"name":"search","arguments":{"to":"BGO"}}]},
			  "expected_tool_calls":[{"name":"search"},{"name":"search","arguments":{"to":"OSL"}}]}`,
			status: sdk.StatusScored, score: 1,
		},
		{
			name: "a second call of one expected tool is unexpected", line: `{"input":"Find flights to Oslo","output":{"role":"assistant","tool_calls":[
			  {"name":"search","arguments":{"to":"OSL"}},{"name":"search","arguments":{"to":"OSL"}}]},"expected_tool_calls":[{"name":"search"}]}`,
			status: sdk.StatusScored, score: 1, flags: []string{toolcalls.FlagUnexpected}, reason: "unexpected: call 2 (search)",
		},
		{
			name: "order: a retried call still counts", config: `{"order": true}`, line: `{"input":"Search then book","output":{"role":"assistant","tool_calls":[
			  {"name":"book"},{"name":"search"},{"name":"book"}]},"expected_tool_calls":[{"name":"search"},{"name":"book"}]}`,
			status: sdk.StatusScored, score: 1, flags: []string{toolcalls.FlagUnexpected},
		},
		{
			name: "order: out of order is named", config: `{"order": true}`, line: `{"input":"Search then book","output":{"role":"assistant","tool_calls":[
			  {"name":"book"},{"name":"search"}]},"expected_tool_calls":[{"name":"search"},{"name":"book"}]}`,
			status: sdk.StatusScored, score: 0.5, flags: []string{toolcalls.FlagMissing, toolcalls.FlagOutOfOrder, toolcalls.FlagUnexpected},
			reason: "2 would match in another order",
		},
		{
			name: "strict: one more call makes it 0", config: `{"strict": true}`, line: `{"input":"Cancel my 3pm meeting","output":{"role":"assistant","tool_calls":[
			  {"name":"cancel_event"},{"name":"delete_calendar"}]},"expected_tool_calls":[{"name":"cancel_event"}]}`,
			status: sdk.StatusScored, score: 0, flags: []string{toolcalls.FlagUnexpected}, reason: "strict: no call beyond the expected ones",
		},
		{
			name: "arguments the model wrote as broken JSON", line: `{"input":"Cancel my 3pm meeting","output":{"role":"assistant","tool_calls":[
			  {"name":"cancel_event","arguments":"{\"time\": \"15:"}]},"expected_tool_calls":[{"name":"cancel_event","arguments":{"time":"15:00"}}]}`,
			status: sdk.StatusScored, score: 0, flags: []string{toolcalls.FlagMissing, toolcalls.FlagUnexpected}, reason: "its arguments are not JSON",
		},
		{
			name: "broken JSON arguments are quoted in whole characters", line: `{"input":"Find Roppongi","output":{"role":"assistant","tool_calls":[
			  {"name":"search","arguments":"{\"都市\": \"東京都港区六本木一丁目の駅の近く"}]},"expected_tool_calls":[{"name":"search","arguments":{"都市":"東京"}}]}`,
			status: sdk.StatusScored, score: 0, flags: []string{toolcalls.FlagMissing, toolcalls.FlagUnexpected}, reason: `its arguments are not JSON ("{\"都市\": \"東京都港区六本木一"...)`,
		},
		{
			name: "expected arguments that are not an object fail the run", line: `{"input":"q",` + cancelled + `,"expected_tool_calls":[{"name":"cancel_event","arguments":"15:00"}]}`,
			status: sdk.StatusFailed, reason: "expected_tool_calls[0].arguments: want a JSON object",
		},
		{
			name: "a keyword outside the validator's subset fails the run, named", line: `{"input":"q",` + cancelled + `,"expected_tool_calls":[{"name":"cancel_event","arguments_schema":{"$ref":"file:///etc/passwd"}}]}`,
			status: sdk.StatusFailed, reason: `expected_tool_calls[0].arguments_schema: schema at #/$ref: keyword "$ref" is not supported`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := open(t, c.config).Score(context.Background(), decodeRun(t, c.line))
			if res.Status != c.status {
				t.Fatalf("status %s (%q), want %s", res.Status, res.Reason, c.status)
			}
			if !strings.Contains(res.Reason, c.reason) {
				t.Errorf("reason %q, want it to contain %q", res.Reason, c.reason)
			}
			if strings.Contains(res.Reason, `\x`) {
				t.Errorf("reason %q shows a character cut in half", res.Reason)
			}
			if c.status != sdk.StatusScored {
				return
			}
			if *res.Score != c.score || *res.Passed != (c.score == 1) {
				t.Errorf("score %v passed %v, want %v: %s", *res.Score, *res.Passed, c.score, res.Reason)
			}
			if !slices.Equal(res.Flags, c.flags) {
				t.Errorf("flags %v, want %v", res.Flags, c.flags)
			}
			if len(res.Steps) != 1 || res.Steps[0].Name != "match" {
				t.Errorf("steps %+v, want the match step", res.Steps)
			}
		})
	}
}

// TestMatchStep records which call matched each expectation, and why the others did not.
func TestMatchStep(t *testing.T) {
	res := open(t, `{"order": true}`).Score(context.Background(), decodeRun(t, `{"input":"q","output":[
	  {"role":"assistant","tool_calls":[{"id":"a","name":"search"},{"id":"b","name":"book","arguments":{"id":"X"}}]},
	  {"role":"tool","tool_call_id":"b","content":"Error: sold out"}],
	  "expected_tool_calls":[{"name":"search"},{"name":"book","arguments":{"id":"Y"}}]}`))
	want := `{"expected":[{"name":"search","call":1},{"name":"book","call":null,"miss":"call 2 (book): arguments.id is \"X\", want \"Y\""}],"unexpected_calls":[2],"failed_calls":[2],"order":true,"strict":false}`
	if got := string(res.Steps[0].Output); got != want {
		t.Errorf("step\n got %s\nwant %s", got, want)
	}
}

// TestMatchingWorkIsBounded: thousands of calls of one tool against thousands of
// expectations fail with a reason instead of running for minutes.
func TestMatchingWorkIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"input":"q","output":{"role":"assistant","tool_calls":[`)
	args := strings.Repeat("x", 300)
	for i := range 1000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"t","arguments":{"a":%q}}`, args)
	}
	b.WriteString(`]},"expected_tool_calls":[`)
	for i := range 1000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"t","arguments":{"a":%q}}`, args)
	}
	b.WriteString(`]}`)
	res := open(t, "").Score(context.Background(), decodeRun(t, b.String()))
	if res.Status != sdk.StatusFailed || res.Error.Code != sdk.CodeLimitExceeded || !strings.Contains(res.Reason, "split the run") {
		t.Fatalf("%s %v %q, want failed limit_exceeded", res.Status, res.Error, res.Reason)
	}
}
