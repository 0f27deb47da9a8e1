package ingest

import (
	"strconv"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/sdk"
)

// TestAgentRunsNamesAndSelection: the agent is gen_ai.agent.name, else the span name
// after "invoke_agent ", else the resource's service.name, never an agent above it; only
// the agent spans want names make runs; a nested agent's tool is its own.
func TestAgentRunsNamesAndSelection(t *testing.T) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "svc")
	ss := rs.ScopeSpans().AppendEmpty().Spans()
	add := func(id, parent byte, name, op, agentName string) {
		s := ss.AppendEmpty()
		s.SetTraceID(pcommon.TraceID{9})
		s.SetSpanID(pcommon.SpanID{id})
		if parent != 0 {
			s.SetParentSpanID(pcommon.SpanID{parent})
		}
		s.SetName(name)
		s.Attributes().PutStr("gen_ai.operation.name", op)
		if agentName != "" {
			s.Attributes().PutStr("gen_ai.agent.name", agentName)
		}
		if op == OpInvokeAgent {
			s.Attributes().PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"done"}]}]`)
		}
		if op == "execute_tool" {
			s.Attributes().PutStr("gen_ai.tool.name", name)
		}
	}
	add(1, 0, "invoke_agent", OpInvokeAgent, "boss")
	add(2, 1, "invoke_agent helper", OpInvokeAgent, "")
	add(3, 2, "lookup", "execute_tool", "")
	add(4, 1, "invoke_agent", OpInvokeAgent, "")
	add(5, 1, "send", "execute_tool", "")
	for _, tc := range []struct {
		name  string
		want  func(ptrace.Span) bool
		runs  map[string]string // span id -> agent
		tools map[string]string // span id -> its one tool
	}{
		{"all", nil,
			map[string]string{"0100000000000000": "boss", "0200000000000000": "helper", "0400000000000000": "svc"},
			map[string]string{"0100000000000000": "send", "0200000000000000": "lookup"}},
		{"the nested agent only", func(s ptrace.Span) bool { return s.SpanID() == pcommon.SpanID{2} },
			map[string]string{"0200000000000000": "helper"},
			map[string]string{"0200000000000000": "lookup"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]sdk.Run{}
			err := AgentRuns(td, tc.want, Options{}, func(r sdk.Run) error {
				got[r.Metadata["span_id"].(string)] = r
				return nil
			})
			if err != nil || len(got) != len(tc.runs) {
				t.Fatalf("runs %v, %v; want %v", got, err, tc.runs)
			}
			for id, agent := range tc.runs {
				r := got[id]
				if r.Agent != agent || r.ID != "09000000000000000000000000000000-"+id {
					t.Errorf("span %s: agent %q id %q; want %q", id, r.Agent, r.ID, agent)
				}
				if tool := tc.tools[id]; tool != "" && (len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != tool) {
					t.Errorf("span %s: tools %+v; want %s", id, r.ToolCalls, tool)
				}
				if id != "0100000000000000" && r.Metadata["parent_span_id"] != "0100000000000000" {
					t.Errorf("span %s: parent %v", id, r.Metadata["parent_span_id"])
				}
			}
		})
	}
}

// TestAgentRunsManyInOrder: the runs of many agent spans are read on every CPU (run it
// with -race) and emitted in the order of their spans, each with its own model call's
// answer and tool call, a span that makes no run reported in its place.
func TestAgentRunsManyInOrder(t *testing.T) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "svc")
	ss := rs.ScopeSpans().AppendEmpty().Spans()
	const n = 300
	for i := range n {
		trace := pcommon.TraceID{byte(i >> 8), byte(i), 1}
		add := func(id, parent byte, op string, attrs map[string]string) {
			s := ss.AppendEmpty()
			s.SetTraceID(trace)
			s.SetSpanID(pcommon.SpanID{id})
			if parent != 0 {
				s.SetParentSpanID(pcommon.SpanID{parent})
			}
			s.Attributes().PutStr("gen_ai.operation.name", op)
			for k, v := range attrs {
				s.Attributes().PutStr(k, v)
			}
		}
		answer := `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"lookup","arguments":{"n":` + itoa(i) + `}}]},` +
			`{"role":"assistant","parts":[{"type":"text","content":"answer ` + itoa(i) + `"}]}]`
		if i%50 == 7 {
			answer = "" // records no output: no run, reported
		}
		add(2, 1, "chat", map[string]string{"gen_ai.input.messages": `[{"role":"user","parts":[{"type":"text","content":"question ` + itoa(i) + `"}]}]`,
			"gen_ai.output.messages": answer})
		if answer == "" {
			ss.At(ss.Len() - 1).Attributes().Remove("gen_ai.output.messages")
		}
		add(3, 1, "execute_tool", map[string]string{"gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": "c1", "gen_ai.tool.call.result": "result " + itoa(i)})
		add(1, 0, OpInvokeAgent, map[string]string{"gen_ai.agent.name": "bot"})
	}
	var (
		got    []sdk.Run
		failed []string
	)
	err := AgentRuns(td, nil, Options{OnError: func(_ int, err error) { failed = append(failed, err.Error()) }}, func(r sdk.Run) error {
		got = append(got, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got)+len(failed) != n || len(failed) != n/50 {
		t.Fatalf("%d runs and %d failures; want %d runs and %d failures", len(got), len(failed), n-n/50, n/50)
	}
	k := 0
	for i := range n {
		if i%50 == 7 {
			continue
		}
		r := got[k]
		k++
		if r.Input != "question "+itoa(i) || r.Output != "answer "+itoa(i) || len(r.ToolCalls) != 1 || r.ToolCalls[0].Result != "result "+itoa(i) {
			t.Fatalf("run %d of trace %d: %+v", k, i, r)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
