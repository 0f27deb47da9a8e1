package heuristic_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/prescreen"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// toolRun decodes a dataset line, so the runs below reach the scorers in the shapes
// agents log them (OpenAI's tool calls and tool turns), normalized by the contract.
func toolRun(t *testing.T, line string) sdk.Run {
	t.Helper()
	var r sdk.Run
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	return r
}

// The seed's turn: the agent cancelled the meeting and said nothing.
const cancelMeeting = `{"id":"t1","input":"Cancel my 3pm meeting","output":[
  {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"cancel_event","arguments":"{\"time\":\"15:00\"}"}}]},
  {"role":"tool","tool_call_id":"c1","content":"{\"cancelled\":true}"}]}`

// toolTurns are the seed's turn and its variations, with what the pre-screen must say.
var toolTurns = []struct {
	name   string
	line   string
	passed bool
	flag   string // the flag that fails the run, or "" for none
}{
	{"the seed: an action and no text", cancelMeeting, true, ""},
	{"the call failed with an error object, nothing said", `{"input":"Cancel my 3pm meeting","output":[
	  {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"cancel_event","arguments":"{\"time\":\"15:00\"}"}}]},
	  {"role":"tool","tool_call_id":"c1","content":"{\"error\":\"calendar service unavailable\"}"}]}`, false, heuristic.FlagToolError},
	{"the tool result is an error message, nothing said", `{"input":"Cancel my 3pm meeting","output":[
	  {"role":"assistant","tool_calls":[{"id":"c1","name":"cancel_event","arguments":{"time":"15:00"}}]},
	  {"role":"tool","tool_call_id":"c1","content":"Error: 503 Service Unavailable"}]}`, false, heuristic.FlagToolError},
	{"an MCP result marked isError", `{"input":"Cancel my 3pm meeting","output":[
	  {"role":"assistant","tool_calls":[{"id":"c1","name":"cancel_event","arguments":{"time":"15:00"}}]},
	  {"role":"tool","tool_call_id":"c1","content":"{\"isError\":true,\"content\":[{\"type\":\"text\",\"text\":\"no event at 15:00\"}]}"}]}`, false, heuristic.FlagToolError},
	{"the call failed and the answer claims success", `{"input":"Cancel my 3pm meeting","output":[
	  {"role":"assistant","tool_calls":[{"id":"c1","name":"cancel_event","arguments":{"time":"15:00"}}]},
	  {"role":"tool","tool_call_id":"c1","content":"{\"error\":\"calendar service unavailable\"}"},
	  {"role":"assistant","content":"Done: your 3pm meeting is cancelled."}]}`, false, heuristic.FlagToolError},
	{"the call failed and the answer reports it", `{"input":"Cancel my 3pm meeting","output":[
	  {"role":"assistant","tool_calls":[{"id":"c1","name":"cancel_event","arguments":{"time":"15:00"}}]},
	  {"role":"tool","tool_call_id":"c1","content":"{\"error\":\"calendar service unavailable\"}"},
	  {"role":"assistant","content":"I couldn't cancel it: the calendar service is unavailable right now. Shall I try again in a few minutes?"}]}`, true, ""},
	{"the call failed and a retry worked", `{"input":"Cancel my 3pm meeting","output":[
	  {"role":"assistant","tool_calls":[{"id":"c1","name":"cancel_event","arguments":{"time":"3pm"}}]},
	  {"role":"tool","tool_call_id":"c1","content":"{\"error\":\"time must be HH:MM\"}"},
	  {"role":"assistant","tool_calls":[{"id":"c2","name":"cancel_event","arguments":{"time":"15:00"}}]},
	  {"role":"tool","tool_call_id":"c2","content":"{\"cancelled\":true}"}]}`, true, ""},
	{"calls and a final answer", `{"input":"What's the weather in Lyon?","output":[
	  {"role":"assistant","tool_calls":[{"id":"c1","name":"get_weather","arguments":{"city":"Lyon"}}]},
	  {"role":"tool","tool_call_id":"c1","content":"{\"temp_c\":21,\"sky\":\"clear\"}"},
	  {"role":"assistant","content":"It is 21 °C and clear in Lyon."}]}`, true, ""},
	{"several rounds", `{"input":"Book the cheapest flight to Oslo next Friday and put it in my calendar","output":[
	  {"role":"assistant","content":"Searching flights.","tool_calls":[{"id":"c1","name":"search_flights","arguments":{"to":"OSL","date":"2026-03-06"}}]},
	  {"role":"tool","tool_call_id":"c1","content":"[{\"id\":\"SK4412\",\"price\":129},{\"id\":\"DY1302\",\"price\":98}]"},
	  {"role":"assistant","tool_calls":[{"id":"c2","name":"book_flight","arguments":{"id":"DY1302"}}]},
	  {"role":"tool","tool_call_id":"c2","content":"{\"booking\":\"PNR7QX\"}"},
	  {"role":"assistant","tool_calls":[{"id":"c3","name":"create_event","arguments":{"title":"DY1302 to Oslo","date":"2026-03-06"}}]},
	  {"role":"tool","tool_call_id":"c3","content":"{\"created\":true}"},
	  {"role":"assistant","content":"Booked DY1302 (98 EUR, booking PNR7QX) and added it to your calendar for Friday."}]}`, true, ""},
	{"a call whose result was not recorded", `{"input":"Cancel my 3pm meeting","output":{"role":"assistant","tool_calls":[{"id":"c1","name":"cancel_event","arguments":{"time":"15:00"}}]}}`, true, ""},
	{"a tool that returns the error lines the user asked for", `{"input":"Show me the errors the payments service logged in the last hour","output":[
	  {"role":"assistant","tool_calls":[{"id":"c1","name":"search_logs","arguments":{"service":"payments","level":"error"}}]},
	  {"role":"tool","tool_call_id":"c1","content":"Error: PaymentDeclined at 09:12:03"},
	  {"role":"assistant","content":"One in the last hour: a payment the bank declined at 09:12."}]}`, true, ""},
	{"a turn that did nothing", `{"input":"Cancel my 3pm meeting","output":[{"role":"assistant","content":null}]}`, false, heuristic.FlagEmptyOutput},
	{"an agent that crashed before it answered", `{"input":"Cancel my 3pm meeting","output":"","metadata":{"error":"invoke_agent: context deadline exceeded"}}`,
		false, heuristic.FlagErrorText},
	{"an action the caller recorded as failed", `{"input":"Cancel my 3pm meeting","output":{"role":"assistant","tool_calls":[{"id":"c1","name":"cancel_event","arguments":{"time":"15:00"}}]},
	  "metadata":{"error":"agent crashed: context deadline exceeded"}}`, false, heuristic.FlagErrorText},
}

// TestPrescreenToolTurns: a turn that did its job through tools passes; one whose calls
// all failed without a word fails as tool_error; one that neither said nor did anything
// is still empty.
func TestPrescreenToolTurns(t *testing.T) {
	s := openPrescreen(t)
	for _, c := range toolTurns {
		t.Run(c.name, func(t *testing.T) {
			res, passed := prescreenScore(t, s, toolRun(t, c.line))
			if passed != c.passed {
				t.Errorf("passed %v, want %v: %s (flags %v)", passed, c.passed, res.Reason, res.Flags)
			}
			if c.flag != "" && !slices.Contains(res.Flags, c.flag) {
				t.Errorf("flags %v, want %s: %s", res.Flags, c.flag, res.Reason)
			}
			if c.flag == "" && len(res.Flags) > 0 {
				t.Errorf("flags %v, want none: %s", res.Flags, res.Reason)
			}
		})
	}
}

// TestUnansweredToolTurns holds the judge scorers' guard to the same reading: a turn with
// calls is answered unless every call failed or the caller recorded an error.
func TestUnansweredToolTurns(t *testing.T) {
	for _, c := range toolTurns {
		t.Run(c.name, func(t *testing.T) {
			run := toolRun(t, c.line)
			flag, why, ok := prescreen.Unanswered(&run)
			want := prescreen.ToolOnly(&run) && !c.passed || strings.TrimSpace(run.Output) == "" && len(run.ToolCalls) == 0
			if ok != want {
				t.Fatalf("unanswered %v (%s %s), want %v", ok, flag, why, want)
			}
			if ok && flag != c.flag {
				t.Errorf("flag %s, want %s", flag, c.flag)
			}
		})
	}
}

// TestTextScorersSkipToolOnly: every scorer that compares text skips a turn whose only
// output is its tool calls rather than score it 0, and still scores a turn that also
// answered in text.
func TestTextScorersSkipToolOnly(t *testing.T) {
	ctx := context.Background()
	reg := host.NewRegistry()
	for _, f := range heuristic.Factories() {
		if err := reg.Register(host.Native(f), false); err != nil {
			t.Fatal(err)
		}
	}
	h := host.New(reg)
	toolOnly := toolRun(t, cancelMeeting)
	toolOnly.Expected = "Your 3pm meeting is cancelled."
	answered := toolRun(t, toolTurns[7].line)
	answered.Expected = "It is 21 °C and clear in Lyon."
	for _, name := range reg.Names() {
		if name == "prescreen" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			s, err := h.Open(ctx, name, host.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(ctx)
			res := s.Score(ctx, toolOnly)
			if res.Status != sdk.StatusSkipped || !strings.Contains(res.Reason, "only output is its tool calls") {
				t.Errorf("tool-only turn: %s %v %q, want skipped naming the tool calls", res.Status, res.Value(), res.Reason)
			}
			answered := answered
			if name == "numeric_diff" {
				answered.Expected = "21"
			}
			if res := s.Score(ctx, answered); res.Status != sdk.StatusScored {
				t.Errorf("a turn with calls and an answer: %s %q, want scored", res.Status, res.Reason)
			}
		})
	}
}
