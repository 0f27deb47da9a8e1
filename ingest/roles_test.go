package ingest

import (
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/sdk"
)

// span is a test span of trace 1: its id, its parent's (0: a root), its name and
// attributes.
type span struct {
	id, parent byte
	name       string
	attrs      map[string]string
}

func traceOf(spans ...span) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "svc")
	ss := rs.ScopeSpans().AppendEmpty().Spans()
	for _, sp := range spans {
		s := ss.AppendEmpty()
		s.SetTraceID(pcommon.TraceID{1})
		s.SetSpanID(pcommon.SpanID{sp.id})
		if sp.parent != 0 {
			s.SetParentSpanID(pcommon.SpanID{sp.parent})
		}
		s.SetName(sp.name)
		s.SetStartTimestamp(pcommon.Timestamp(sp.id) * 1e9)
		s.SetEndTimestamp(pcommon.Timestamp(sp.id)*1e9 + 5e8)
		for k, v := range sp.attrs {
			s.Attributes().PutStr(k, v)
		}
	}
	return td
}

// llm is an OpenInference LLM span's attributes: a question and its answer.
func llm(q, a string) map[string]string {
	return map[string]string{"openinference.span.kind": "LLM", "llm.input_messages.0.message.role": "user",
		"llm.input_messages.0.message.content": q, "llm.output_messages.0.message.role": "assistant",
		"llm.output_messages.0.message.content": a}
}

// runsOf makes the runs of td as convert does: the agents' and the whole trace's.
func runsOf(t *testing.T, td ptrace.Traces) []sdk.Run {
	t.Helper()
	var set Spans
	set.AddTraces(td)
	var runs []sdk.Run
	emit := func(r sdk.Run) error { runs = append(runs, r); return nil }
	o := Options{OnError: func(_ int, err error) { t.Errorf("reader: %v", err) }}
	if err := set.AgentRuns(nil, o, emit); err != nil {
		t.Fatal(err)
	}
	if err := set.TraceRuns(o, emit); err != nil {
		t.Fatal(err)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].ID < runs[j].ID })
	return runs
}

func ids(runs []sdk.Run) string {
	var out []string
	for _, r := range runs {
		_, span, _ := strings.Cut(r.ID, "-")
		out = append(out, span[:2]+":"+r.Agent+":"+r.Output)
	}
	return strings.Join(out, " ")
}

// TestWhatMakesARun: an OpenInference CHAIN at the root makes the run of the calls below
// it, one below the root does not; a traceloop workflow makes a run; a call span with an
// agent span below it makes none (the agent's does); two roots of one trace are joined
// apart; a model call in no run's span and under no root is a turn of its own.
func TestWhatMakesARun(t *testing.T) {
	cases := []struct {
		name  string
		spans []span
		want  string
	}{
		{"root chain", []span{
			{1, 0, "pipeline", map[string]string{"openinference.span.kind": "CHAIN", "input.value": "Q?"}},
			{2, 1, "llm", llm("Q?", "A.")},
		}, "01:svc:A."},
		{"nested chain", []span{
			{1, 0, "GET /ask", nil},
			{2, 1, "retrieve-and-answer", map[string]string{"openinference.span.kind": "CHAIN"}},
			{3, 2, "llm", llm("Q?", "A.")},
		}, "03:svc:A."},
		{"workflow", []span{
			{1, 0, "support.workflow", map[string]string{"traceloop.span.kind": "workflow", "traceloop.workflow.name": "support"}},
			{2, 1, "chat", map[string]string{"gen_ai.operation.name": "chat", "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Q?",
				"gen_ai.completion.0.role": "assistant", "gen_ai.completion.0.content": "A."}},
		}, "01:support:A."},
		{"call span above an agent", []span{
			{1, 0, "ai.generateText", map[string]string{"ai.operationId": "ai.generateText", "ai.response.text": "outer"}},
			{2, 1, "invoke_agent helper", map[string]string{"gen_ai.operation.name": "invoke_agent",
				"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"Q?"}]}]`,
				"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"inner"}]}]`}},
		}, "02:helper:inner"},
		{"two roots", []span{
			{1, 0, "POST /a", nil},
			{2, 1, "llm", llm("Q1?", "A1.")},
			{3, 0, "POST /b", nil},
			{4, 3, "llm", llm("Q1?", "A2.")},
		}, "02:svc:A1. 04:svc:A2."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ids(runsOf(t, traceOf(c.spans...))); got != c.want {
				t.Errorf("runs %q, want %q", got, c.want)
			}
		})
	}
}
