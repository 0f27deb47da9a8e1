package builtin_test

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/plugins/builtin"
	"github.com/scorekit/scorekit/sdk"
)

// toolTurnLines are the seed's action-only turn and its variations, as dataset lines.
var toolTurnLines = map[string]string{
	"the seed: an action and no text": `{"id":"t1","input":"Cancel my 3pm meeting","output":[
	  {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"cancel_event","arguments":"{\"time\":\"15:00\"}"}}]},
	  {"role":"tool","tool_call_id":"c1","content":"{\"cancelled\":true}"}],
	  "expected_tool_calls":[{"name":"cancel_event","arguments":{"time":"15:00"}}]}`,
	"the call failed, nothing said": `{"id":"t2","input":"Cancel my 3pm meeting","output":[
	  {"role":"assistant","tool_calls":[{"id":"c1","name":"cancel_event","arguments":{"time":"15:00"}}]},
	  {"role":"tool","tool_call_id":"c1","content":"{\"error\":\"calendar service unavailable\"}"}],
	  "expected_tool_calls":[{"name":"cancel_event"}]}`,
	"the tool result is an error, the answer claims success": `{"id":"t3","input":"Cancel my 3pm meeting","output":[
	  {"role":"assistant","tool_calls":[{"id":"c1","name":"cancel_event","arguments":{"time":"15:00"}}]},
	  {"role":"tool","tool_call_id":"c1","content":"Error: 503 Service Unavailable"},
	  {"role":"assistant","content":"Done: your 3pm meeting is cancelled."}]}`,
	"the call failed, the answer reports it": `{"id":"t4","input":"Cancel my 3pm meeting","output":[
	  {"role":"assistant","tool_calls":[{"id":"c1","name":"cancel_event","arguments":{"time":"15:00"}}]},
	  {"role":"tool","tool_call_id":"c1","content":"{\"error\":\"calendar service unavailable\"}"},
	  {"role":"assistant","content":"I couldn't cancel it: the calendar service is unavailable right now."}]}`,
	"calls and a final answer, several rounds": `{"id":"t5","input":"Book the cheapest flight to Oslo on Friday","output":[
	  {"role":"assistant","tool_calls":[{"id":"c1","name":"search_flights","arguments":{"to":"OSL"}}]},
	  {"role":"tool","tool_call_id":"c1","content":"[{\"id\":\"SK4412\",\"price\":129},{\"id\":\"DY1302\",\"price\":98}]"},
	  {"role":"assistant","tool_calls":[{"id":"c2","name":"book_flight","arguments":{"id":"DY1302"}}]},
	  {"role":"tool","tool_call_id":"c2","content":"{\"booking\":\"PNR7QX\"}"},
	  {"role":"assistant","content":"Booked DY1302 (98 EUR, booking PNR7QX) for Friday."}],
	  "expected":"Booked DY1302.","expected_tool_calls":[{"name":"search_flights"},{"name":"book_flight","arguments_schema":{"type":"object","required":["id"]}}]}`,
	"a turn that did nothing": `{"id":"t6","input":"Cancel my 3pm meeting","output":[{"role":"assistant","content":null}]}`,
	"an agent that crashed":   `{"id":"t7","input":"Cancel my 3pm meeting","output":"","metadata":{"error":"calendar API unreachable"}}`,
}

// TestToolTurnsInEveryRuntime runs the seed's action-only turn and its variations through
// every built-in scorer natively, as WASM and as a process plugin (the artifacts `make
// test` builds), the judge scorers with the project's fake judge, and holds the three
// runtimes to the same results, steps (the judge prompts) included. Natively, it checks
// what the turns must get: the action passes the pre-screen and reaches the judge with its
// call and result in the prompt; silent failures are tool_error; the text scorers skip.
func TestToolTurnsInEveryRuntime(t *testing.T) {
	srv := judgetest.New(
		judgetest.Rule{Match: "Decide whether what the agent produced", Reply: `{"reasoning": "the action was performed", "score": 0.9}`},
		judgetest.Rule{Match: "Evaluate the agent's answer", Reply: `{"faithfulness": null, "relevance": 0.9, "completeness": 0.8, "reasoning_quality": 0.8, "overall_score": 0.84, "improvement_suggestions": ["confirm the action to the user"]}`},
	)
	defer srv.Close()
	b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge-test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	quiet := host.WithLogger(slog.New(slog.DiscardHandler))
	runs := map[string]sdk.Run{}
	for name, line := range toolTurnLines {
		r, err := host.DecodeRun([]byte(line))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		runs[name] = r
	}

	native := host.NewRegistry()
	for _, f := range builtin.Factories() {
		if err := native.Register(host.Native(f), false); err != nil {
			t.Fatal(err)
		}
	}
	nh := host.New(native, quiet, host.WithJudge(b))
	want := map[string]sdk.Result{}
	for _, scorer := range native.Names() {
		s := open(t, nh, scorer)
		for name, run := range runs {
			want[scorer+" / "+name] = s.Score(ctx, run)
		}
	}

	checks := []struct {
		scorer, turn string
		ok           func(sdk.Result) bool
		what         string
	}{
		{"prescreen", "the seed: an action and no text", func(r sdk.Result) bool { return *r.Passed && len(r.Flags) == 0 }, "passed, no flag"},
		{"prescreen", "the call failed, nothing said", func(r sdk.Result) bool { return !*r.Passed && r.HasFlag("tool_error") }, "tool_error"},
		{"prescreen", "the tool result is an error, the answer claims success", func(r sdk.Result) bool { return !*r.Passed && r.HasFlag("tool_error") }, "tool_error"},
		{"prescreen", "the call failed, the answer reports it", func(r sdk.Result) bool { return *r.Passed }, "passed"},
		{"prescreen", "calls and a final answer, several rounds", func(r sdk.Result) bool { return *r.Passed }, "passed"},
		{"prescreen", "a turn that did nothing", func(r sdk.Result) bool { return r.HasFlag("empty_output") }, "empty_output"},
		{"prescreen", "an agent that crashed", func(r sdk.Result) bool { return r.HasFlag("error_text") }, "error_text"},
		{"relevancy", "the seed: an action and no text", func(r sdk.Result) bool {
			return r.Status == sdk.StatusScored && *r.Score == 0.9 && strings.Contains(r.Steps[0].Prompt, `1. cancel_event({"time":"15:00"})`) &&
				strings.Contains(r.Steps[0].Prompt, `result: {"cancelled":true}`)
		}, "the judge's 0.9, its prompt showing the call and its result"},
		{"relevancy", "the call failed, nothing said", func(r sdk.Result) bool { return *r.Score == 0 && r.HasFlag("tool_error") }, "0 without a call, tool_error"},
		{"masis", "the seed: an action and no text", func(r sdk.Result) bool {
			return r.Status == sdk.StatusScored && strings.Contains(r.Steps[0].Prompt, "<actions>")
		}, "graded by the judge with the actions in its prompt"},
		{"tool_calls", "the seed: an action and no text", func(r sdk.Result) bool { return *r.Score == 1 && *r.Passed }, "1, passed"},
		{"tool_calls", "calls and a final answer, several rounds", func(r sdk.Result) bool { return *r.Score == 1 }, "1"},
		{"tool_calls", "the call failed, nothing said", func(r sdk.Result) bool { return *r.Score == 1 && r.HasFlag("failed_tool_call") }, "1, the failure reported"},
		{"completeness", "the seed: an action and no text", func(r sdk.Result) bool { return r.Status == sdk.StatusSkipped }, "skipped"},
		{"levenshtein", "the seed: an action and no text", func(r sdk.Result) bool { return r.Status == sdk.StatusSkipped }, "skipped"},
	}
	for _, c := range checks {
		if r := want[c.scorer+" / "+c.turn]; !c.ok(r) {
			t.Errorf("native %s on %q: %s %v %v %q; want %s", c.scorer, c.turn, r.Status, r.Value(), r.Flags, r.Reason, c.what)
		}
	}

	for _, rt := range []string{host.RuntimeWASM, host.RuntimeProcess} {
		t.Run(rt, func(t *testing.T) {
			h := host.New(loadBuiltins(t, rt), quiet, host.WithJudge(b), host.WithTimeout(matrixDeadline))
			for _, scorer := range native.Names() {
				s := open(t, h, scorer)
				for name, run := range runs {
					got, w := outcomeOf(s.Score(ctx, run)), outcomeOf(want[scorer+" / "+name])
					if !reflect.DeepEqual(got, w) {
						t.Errorf("%s %s on %q:\n got  %s\n want %s (native)", rt, scorer, name, show(got), show(w))
					}
				}
			}
		})
	}
}
