package insights

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/ingest"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// The insight engine on a tool-using agent's runs, end to end but for the store: runs as
// `scorekit convert` makes them from a platform's logs, scored by the real pre-screen, the
// results assessed. 60 correct turns of an agent that acts through tools used to raise two
// critical insights (prescreen fails 60 of 60, gross failures 60 of 60, all empty_output).

// prescreenResults scores runs with the pre-screen through the host and returns them as
// the service's result rows, one minute apart.
func prescreenResults(t *testing.T, runs []sdk.Run) []Result {
	t.Helper()
	ctx := context.Background()
	reg := host.NewRegistry()
	if err := reg.Register(host.Native(heuristic.NewPrescreen), false); err != nil {
		t.Fatal(err)
	}
	s, err := host.New(reg).Open(ctx, "prescreen", host.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	out := make([]Result, len(runs))
	for i, run := range runs {
		res := s.Score(ctx, run)
		out[i] = Result{RunID: run.ID, RunTime: t0.Add(time.Duration(i) * time.Minute), Scorer: "prescreen",
			ScorerVersion: s.Info().Version, Status: res.Status, Score: res.Score, Passed: res.Passed,
			Flags: res.Flags, Reason: res.Reason, CreatedAt: t0.Add(time.Duration(i)*time.Minute + time.Second)}
	}
	return out
}

func convert(t *testing.T, format, log string) []sdk.Run {
	t.Helper()
	var runs []sdk.Run
	_, err := ingest.Convert(format, strings.NewReader(log), ingest.Options{Agent: "calendar-agent", OnError: func(n int, err error) {
		t.Errorf("record %d: %v", n, err)
	}}, func(r sdk.Run) error { runs = append(runs, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// healthyToolLog is a logging proxy's records of 60 correct turns of an agent that acts
// through a tool: a third confirm the call in a sentence, a third end with the tool's
// result (the seed's shape), a third end at the call.
func healthyToolLog() string {
	var b strings.Builder
	for i := range 60 {
		user := map[string]any{"role": "user", "content": fmt.Sprintf("Cancel my %d o'clock meeting", 1+i%11)}
		call := map[string]any{"id": fmt.Sprintf("call_%d", i), "type": "function",
			"function": map[string]any{"name": "cancel_event", "arguments": fmt.Sprintf(`{"time":"%02d:00"}`, 1+i%11)}}
		asked := map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call}}
		result := map[string]any{"role": "tool", "tool_call_id": call["id"], "content": `{"cancelled":true}`}
		round := func(msgs []any, reply map[string]any, finish string) {
			rec := map[string]any{"id": fmt.Sprintf("turn-%d-%d", i, len(msgs)), "request": map[string]any{"model": "gpt-4o", "messages": msgs},
				"response": map[string]any{"id": fmt.Sprintf("chatcmpl-%d-%d", i, len(msgs)), "model": "gpt-4o", "created": 1767600000 + i*60,
					"choices": []any{map[string]any{"index": 0, "message": reply, "finish_reason": finish}}}}
			line, _ := json.Marshal(rec)
			b.Write(line)
			b.WriteByte('\n')
		}
		switch i % 3 {
		case 0: // two rounds: the call, then a sentence that confirms it
			round([]any{user}, asked, "tool_calls")
			round([]any{user, asked, result}, map[string]any{"role": "assistant", "content": "Done: that meeting is cancelled."}, "stop")
		case 1: // the seed's shape: a conversation that ends with the tool's result
			line, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("turn-%d", i), "messages": []any{user, asked, result}})
			b.Write(line)
			b.WriteByte('\n')
		default: // the agent's loop ends at the action: one round, the call
			round([]any{user}, asked, "tool_calls")
		}
	}
	return b.String()
}

// crashedAgentTraces is a Collector file export of 60 invoke_agent spans of one agent,
// the newest `crashed` of which ended in ERROR before the agent answered.
func crashedAgentTraces(t *testing.T, crashed int) string {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "calendar-service")
	spans := rs.ScopeSpans().AppendEmpty().Spans()
	for i := range 60 {
		sp := spans.AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{byte(i + 1), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
		sp.SetSpanID(pcommon.SpanID{byte(i + 1), 1, 2, 3, 4, 5, 6, 7})
		sp.SetName("invoke_agent calendar-agent")
		start := time.Unix(1767600000+int64(i)*60, 0)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(2 * time.Second)))
		a := sp.Attributes()
		a.PutStr("gen_ai.operation.name", "invoke_agent")
		a.PutStr("gen_ai.agent.name", "calendar-agent")
		a.PutStr("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Cancel my 3pm meeting"}]}]`)
		if i >= 60-crashed {
			sp.Status().SetCode(ptrace.StatusCodeError)
			ev := sp.Events().AppendEmpty()
			ev.SetName("exception")
			ev.Attributes().PutStr("exception.type", "ConnectionError")
			ev.Attributes().PutStr("exception.message", "calendar API unreachable: connection refused")
			continue
		}
		a.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"cancel_event","arguments":{"time":"15:00"}}],"finish_reason":"tool_call"},`+
			`{"role":"tool","parts":[{"type":"tool_call_response","id":"c1","response":{"cancelled":true}}]}]`)
	}
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHealthyToolUsingAgentRaisesNothing: 60 correct turns of an agent that acts through
// tools, from its proxy's logs, pass the pre-screen and raise no insight.
func TestHealthyToolUsingAgentRaisesNothing(t *testing.T) {
	runs := convert(t, ingest.FormatOpenAIChat, healthyToolLog())
	if len(runs) != 60 {
		t.Fatalf("%d runs, want one per turn (60)", len(runs))
	}
	results := prescreenResults(t, runs)
	for _, r := range results {
		if !*r.Passed {
			t.Fatalf("run %s failed the pre-screen: %s %v", r.RunID, r.Reason, r.Flags)
		}
	}
	got, err := Assess(Config{}, "calendar-agent", "prescreen", results, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 0 {
		t.Errorf("insights %+v, want none for a healthy agent", got)
	}
}

// TestCrashedAgentRaisesGrossFailures: the agent's spans that ended in ERROR become runs
// (they used to be dropped), the pre-screen flags them error_text, and their spike raises
// a critical gross_failures insight whose evidence names the flag.
func TestCrashedAgentRaisesGrossFailures(t *testing.T) {
	runs := convert(t, ingest.FormatOTelGenAI, crashedAgentTraces(t, 20))
	if len(runs) != 60 {
		t.Fatalf("%d runs, want one per agent span (60), the crashed ones included", len(runs))
	}
	got, err := Assess(Config{}, "calendar-agent", "prescreen", prescreenResults(t, runs), nil)
	if err != nil {
		t.Fatal(err)
	}
	var gross *Insight
	for i := range got {
		if got[i].Kind == KindGrossFailures {
			gross = &got[i]
		}
	}
	if gross == nil || gross.Severity != SeverityCritical || gross.Evidence.Flags["error_text"] != 20 {
		t.Fatalf("insights %+v, want a critical gross_failures insight with 20 error_text runs", got)
	}
	if !strings.Contains(gross.Evidence.Worst[0].Reason, "calendar API unreachable") {
		t.Errorf("worst run %+v, want the crash's error in its reason", gross.Evidence.Worst[0])
	}

	healthy := convert(t, ingest.FormatOTelGenAI, crashedAgentTraces(t, 0))
	got, err = Assess(Config{}, "calendar-agent", "prescreen", prescreenResults(t, healthy), nil)
	if err != nil || len(got) > 0 {
		t.Errorf("the same agent without crashes: insights %+v, %v; want none", got, err)
	}
}
