package service_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/service/telemetry"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// chatSpan is a span of trace tid: id, parent (0: a root), name, operation and, when in
// or out is not empty, its conversation and answer as the conventions record them.
type chatSpan struct {
	id, parent byte
	name, op   string
	in, out    string
}

func spansOf(tid byte, specs ...chatSpan) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "helpdesk")
	ss := rs.ScopeSpans().AppendEmpty()
	for i, c := range specs {
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(pcommon.TraceID{tid, 7})
		s.SetSpanID(pcommon.SpanID{tid, c.id})
		if c.parent != 0 {
			s.SetParentSpanID(pcommon.SpanID{tid, c.parent})
		}
		s.SetName(c.name)
		base := pcommon.NewTimestampFromTime(time.Date(2026, 1, 1, 0, 0, int(c.id), 0, time.UTC))
		s.SetStartTimestamp(base)
		s.SetEndTimestamp(base + pcommon.Timestamp(i+1)*1e6)
		if c.op != "" {
			s.Attributes().PutStr("gen_ai.operation.name", c.op)
		}
		if c.in != "" {
			s.Attributes().PutStr("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"`+c.in+`"}]}]`)
		}
		if c.out != "" {
			s.Attributes().PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"`+c.out+`"}],"finish_reason":"stop"}]`)
		}
	}
	return td
}

func runID(tid, span byte) string {
	return pcommon.TraceID{tid, 7}.String() + "-" + pcommon.SpanID{tid, span}.String()
}

// TestChatOnlyTraceMakesARun: a trace of model calls under an app's own span, its root
// last in a request of its own as a batch exporter sends it, makes no run while it may
// still grow, one run (the turn, its id its model call's) once it is complete, and a
// span of it that comes after is rejected as late and counted, with its trace, in the
// ingest view and the metric, which has no tenant label unless asked for one.
func TestChatOnlyTraceMakesARun(t *testing.T) {
	servicetest.Backends(t, func(t *testing.T, dsn string) {
		for _, labels := range []bool{false, true} {
			tel := telemetry.New(telemetry.Options{TenantLabels: labels})
			env := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true, Jobs: jobs.Options{Telemetry: tel}})
			ctx := context.Background()
			tn, err := env.Service.CreateTenant(ctx, fmt.Sprint("acme-", labels), store.Policy{})
			if err != nil {
				t.Fatal(err)
			}
			res, err := env.Service.IngestTraces(ctx, tn, spansOf(1, chatSpan{2, 1, "chat gpt-4o", "chat", "Where is my parcel?", "It arrives on Friday."}))
			if err != nil || res.Kept != 1 || res.Rejected != 0 {
				t.Fatalf("the model call: %+v, %v", res, err)
			}
			res, err = env.Service.IngestTraces(ctx, tn, spansOf(1, chatSpan{id: 1, name: "POST /chat"}))
			if err != nil || res.Kept != 1 || res.Rejected != 0 {
				t.Fatalf("the root: %+v, %v", res, err)
			}
			if n, err := env.Service.CompleteTraces(ctx, time.Now()); err != nil || n != 0 {
				t.Fatalf("before the trace went quiet: %d runs, %v", n, err)
			}
			if n, err := env.Service.CompleteTraces(ctx, time.Now().Add(service.DefaultTraceQuiet+time.Second)); err != nil || n != 1 {
				t.Fatalf("once complete: %d runs, %v", n, err)
			}
			rv, err := env.Service.Run(ctx, tn, runID(1, 2), false)
			if err != nil || rv.Agent != "helpdesk" || !strings.Contains(string(rv.Run), `"output":"It arrives on Friday."`) {
				t.Fatalf("the run: %+v, %v", rv, err)
			}
			res, err = env.Service.IngestTraces(ctx, tn, spansOf(1, chatSpan{3, 1, "chat gpt-4o", "chat", "And the invoice?", "Sent."}))
			if err != nil || res.Rejected != 1 || !strings.Contains(res.Message(), "arrived after its trace was complete") {
				t.Fatalf("a late span: %+v, %v", res, err)
			}
			// The same spans sent again: taken without effect.
			res, err = env.Service.IngestTraces(ctx, tn, spansOf(1, chatSpan{2, 1, "chat gpt-4o", "chat", "Where is my parcel?", "It arrives on Friday."}))
			if err != nil || res.Rejected != 0 || res.Kept != 0 {
				t.Fatalf("sent again: %+v, %v", res, err)
			}
			v, err := env.Service.Ingest(ctx, tn)
			if err != nil || v.Runs != 1 || v.Spans != 4 || len(v.Dropped) != 1 || v.Dropped[0].Reason != service.DropLate ||
				v.Dropped[0].Spans != 1 || v.Dropped[0].TraceIDs[0] != (pcommon.TraceID{1, 7}).String() {
				t.Fatalf("ingest view %+v, %v", v, err)
			}
			checkDropMetric(t, tel, labels, tn.Name, service.DropLate, 1)
		}
	})
}

// checkDropMetric: scorekit_otlp_dropped_total counts n spans dropped for reason, with a
// tenant label only when labels is on.
func checkDropMetric(t *testing.T, tel *telemetry.T, labels bool, tenant, reason string, n float64) {
	t.Helper()
	mfs, err := tel.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != telemetry.MetricOTLPDropped {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := labelsOf(m)
			if _, has := l["tenant"]; has != labels || labels && l["tenant"] != tenant {
				t.Errorf("labels %v (tenant labels %v)", l, labels)
			}
			if l["reason"] == reason && l["signal"] == "span" && m.GetCounter().GetValue() == n {
				return
			}
		}
	}
	t.Errorf("%s: no series of %v %s spans", telemetry.MetricOTLPDropped, n, reason)
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// TestOTLPNothingLostWithoutAWord: a model call that recorded no output makes no run
// and is counted (no_run) when its trace is complete; a tool span alone, whose trace
// never gets its root, is counted when its window ends (window_ended); a log record of a
// span that never came is counted (no_span); spans of a trace with no GenAI content are
// ignored and said so; an agent span whose run could not be made is read again when it
// is sent again; a span of a run the tenant deleted is answered as POST /v1/runs answers
// it.
func TestOTLPNothingLostWithoutAWord(t *testing.T) {
	servicetest.Backends(t, func(t *testing.T, dsn string) {
		env := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true})
		ctx := context.Background()
		tn, err := env.Service.CreateTenant(ctx, "acme", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		svc := env.Service
		// Content not captured: a model call with no output, under its root.
		if _, err := svc.IngestTraces(ctx, tn, spansOf(2, chatSpan{id: 1, name: "POST /chat"}, chatSpan{id: 2, parent: 1, name: "chat gpt-4o", op: "chat"})); err != nil {
			t.Fatal(err)
		}
		// A tool span alone, its trace never rooted; a GenAI event of a span that never comes.
		if _, err := svc.IngestTraces(ctx, tn, spansOf(3, chatSpan{id: 2, parent: 1, name: "execute_tool lookup", op: "execute_tool"})); err != nil {
			t.Fatal(err)
		}
		if res, err := svc.IngestLogs(ctx, tn, userEvent(4, 2, "Hello?")); err != nil || res.Kept != 1 {
			t.Fatalf("log record: %+v, %v", res, err)
		}
		// A web request's trace.
		res, err := svc.IngestTraces(ctx, tn, spansOf(5, chatSpan{id: 1, name: "GET /health"}))
		if err != nil || res.Ignored != 1 || res.Rejected != 0 || !strings.Contains(res.Message(), "1 of 1 spans ignored") {
			t.Fatalf("a trace with no GenAI content: %+v, %v", res, err)
		}
		if _, err := svc.CompleteTraces(ctx, time.Now().Add(service.DefaultTraceQuiet+time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.CompleteTraces(ctx, time.Now().Add(service.DefaultTraceWindow+time.Second)); err != nil {
			t.Fatal(err)
		}
		v, err := svc.Ingest(ctx, tn)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, d := range v.Dropped {
			got[d.Reason] = fmt.Sprintf("%d spans %d records %v", d.Spans, d.LogRecords, d.TraceIDs)
		}
		want := map[string]string{
			service.DropNoOutput:    fmt.Sprintf("1 spans 0 records [%s]", pcommon.TraceID{2, 7}),
			service.DropWindowEnded: fmt.Sprintf("1 spans 0 records [%s]", pcommon.TraceID{3, 7}),
			service.DropNoSpan:      fmt.Sprintf("0 spans 1 records [%s]", pcommon.TraceID{4, 7}),
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || v.Ignored[service.IgnoredNoGenAI] != 1 || v.WaitingSpans != 0 || v.WaitingLogRecords != 0 {
			t.Fatalf("ingest view: dropped %v, ignored %v, waiting %d/%d; want dropped %v", got, v.Ignored, v.WaitingSpans, v.WaitingLogRecords, want)
		}

		// An agent span that recorded no output is rejected, and read again when sent again.
		agent := chatSpan{id: 1, name: "invoke_agent helper", op: "invoke_agent", in: "Reset my password"}
		res, err = svc.IngestTraces(ctx, tn, spansOf(6, agent))
		if err != nil || res.Rejected != 1 || res.Runs.Stored != 0 || !strings.Contains(res.Message(), "no output recorded") {
			t.Fatalf("agent span without output: %+v, %v", res, err)
		}
		agent.out = "I sent you a reset link."
		res, err = svc.IngestTraces(ctx, tn, spansOf(6, agent))
		if err != nil || res.Rejected != 0 || res.Runs.Stored != 1 {
			t.Fatalf("the agent span sent again, with its output: %+v, %v", res, err)
		}
		// Its run deleted, the span sent again is answered as /v1/runs answers it.
		if _, err := svc.DeleteRun(ctx, tn, "test", runID(6, 1)); err != nil {
			t.Fatal(err)
		}
		res, err = svc.IngestTraces(ctx, tn, spansOf(6, agent))
		if err != nil || res.Rejected != 1 || !strings.Contains(res.Message(), "a run with this id was deleted; it is not stored again") {
			t.Fatalf("a span of a deleted run: %+v, %v", res, err)
		}
	})
}

// userEvent is a gen_ai.user.message log record of span (tid, span), its name in the
// event.name attribute as OpenTelemetry's instrumentations write it.
func userEvent(tid, span byte, text string) plog.Logs {
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTraceID(pcommon.TraceID{tid, 7})
	lr.SetSpanID(pcommon.SpanID{tid, span})
	lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	lr.Attributes().PutStr("event.name", "gen_ai.user.message")
	lr.Body().SetEmptyMap().PutStr("content", text)
	return ld
}

// TestIngestLogsOnceAndInTime: a log record sent again is taken without effect; records
// with no span context are ignored and counted; a record of a span whose run was made
// is rejected as late, and the run does not change.
func TestIngestLogsOnceAndInTime(t *testing.T) {
	servicetest.Backends(t, func(t *testing.T, dsn string) {
		env := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true})
		ctx := context.Background()
		tn, err := env.Service.CreateTenant(ctx, "acme", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		svc := env.Service
		for i, want := range []int{1, 0} {
			res, err := svc.IngestLogs(ctx, tn, userEvent(8, 2, "Where is my parcel?"))
			if err != nil || res.Kept != want || res.Rejected != 0 {
				t.Fatalf("send %d: %+v, %v", i+1, res, err)
			}
		}
		if n, _ := env.Store.OpenSpanBytes(ctx, tn.ID, time.Now()); n == 0 {
			t.Error("the waiting record does not count in the tenant's open bytes")
		}
		noCtx := userEvent(8, 2, "x")
		noCtx.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).SetSpanID(pcommon.SpanID{})
		res, err := svc.IngestLogs(ctx, tn, noCtx)
		if err != nil || res.Ignored != 1 || res.Rejected != 0 || !strings.Contains(res.Message(), "no trace or span id") {
			t.Fatalf("no span context: %+v, %v", res, err)
		}
		// The agent span comes: its run has the record's question.
		tr, err := svc.IngestTraces(ctx, tn, spansOf(8, chatSpan{id: 2, name: "invoke_agent courier", op: "invoke_agent", out: "Friday."}))
		if err != nil || tr.Runs.Stored != 1 {
			t.Fatalf("the agent span: %+v, %v", tr, err)
		}
		rv, err := svc.Run(ctx, tn, runID(8, 2), false)
		if err != nil || !strings.Contains(string(rv.Run), `"input":"Where is my parcel?"`) {
			t.Fatalf("the run: %s, %v", rv.Run, err)
		}
		res, err = svc.IngestLogs(ctx, tn, userEvent(8, 2, "Also the invoice"))
		if err != nil || res.Rejected != 1 || !strings.Contains(res.Message(), "after the run of their span was made") {
			t.Fatalf("a late record: %+v, %v", res, err)
		}
		if n, _ := env.Store.OpenSpanBytes(ctx, tn.ID, time.Now()); n != 0 {
			t.Errorf("the record in the run still counts %d open bytes", n)
		}
	})
}
