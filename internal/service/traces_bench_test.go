package service_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/ingest"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

// benchTraces returns n agent turns as OTLP traces, each an agent span with a model call
// and a tool call below it: the children in one Traces, the agent spans in the other.
func benchTraces(n int) (children, agents ptrace.Traces) {
	children, agents = ptrace.NewTraces(), ptrace.NewTraces()
	cs := children.ResourceSpans().AppendEmpty()
	cs.Resource().Attributes().PutStr("service.name", "bench-service")
	css := cs.ScopeSpans().AppendEmpty().Spans()
	as := agents.ResourceSpans().AppendEmpty()
	as.Resource().Attributes().PutStr("service.name", "bench-service")
	ass := as.ScopeSpans().AppendEmpty().Spans()
	for range n {
		var tid pcommon.TraceID
		binary.BigEndian.PutUint64(tid[:8], uint64(seq.Add(1)))
		span := func(spans ptrace.SpanSlice, id, parent byte, name, op string, attrs map[string]string) {
			s := spans.AppendEmpty()
			s.SetTraceID(tid)
			s.SetSpanID(pcommon.SpanID{id})
			if parent != 0 {
				s.SetParentSpanID(pcommon.SpanID{parent})
			}
			s.SetName(name)
			s.Attributes().PutStr("gen_ai.operation.name", op)
			for k, v := range attrs {
				s.Attributes().PutStr(k, v)
			}
		}
		input := fmt.Sprintf(`[{"role":"user","parts":[{"type":"text","content":"Find the invoice %s and tell me whether it was paid."}]}]`, tid)
		span(ass, 1, 0, "invoke_agent billing", "invoke_agent", map[string]string{"gen_ai.agent.name": "billing", "gen_ai.input.messages": input,
			"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"The invoice was paid on 3 March by card."}],"finish_reason":"stop"}]`})
		span(css, 2, 1, "chat gpt-4o", "chat", map[string]string{"gen_ai.request.model": "gpt-4o", "gen_ai.input.messages": input,
			"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"get_invoice","arguments":{"id":"INV-1"}}],"finish_reason":"tool_call"}]`})
		span(css, 3, 1, "execute_tool get_invoice", "execute_tool", map[string]string{"gen_ai.tool.name": "get_invoice", "gen_ai.tool.call.id": "c1",
			"gen_ai.tool.call.arguments": `{"id":"INV-1"}`, "gen_ai.tool.call.result": `{"status":"paid","paid_at":"2025-03-03","method":"card"}`})
	}
	return children, agents
}

// BenchmarkIngestTraces: agent runs/s stored from OTLP traces of 500 agent turns (3 spans
// each), against importing the same runs as JSONL (POST /v1/runs' work), in the same run:
// otlp sends every span in one request; otlp-split sends the children first and the agent
// spans in a second request, so the runs are made from the spans kept in the store. The
// sub-benchmarks are named path=..., so that benchstat -col /path sets each path beside the
// import (BENCHMARKS.md).
func BenchmarkIngestTraces(b *testing.B) {
	const n = 500
	benchBackends(b, func(b *testing.B, dsn func() string) {
		env := servicetest.New(b, dsn(), servicetest.Options{NoWorkers: true})
		ctx := context.Background()
		tenant, _ := env.Service.CreateTenant(ctx, "bench", store.Policy{})
		b.Run("path=import", func(b *testing.B) {
			var bodies [][]byte
			for range b.N {
				children, agents := benchTraces(n)
				children.ResourceSpans().MoveAndAppendTo(agents.ResourceSpans())
				var buf bytes.Buffer
				enc := json.NewEncoder(&buf)
				if err := ingest.AgentRuns(agents, nil, ingest.Options{}, func(r sdk.Run) error { return enc.Encode(r) }); err != nil {
					b.Fatal(err)
				}
				bodies = append(bodies, buf.Bytes())
			}
			b.ResetTimer()
			for i := range b.N {
				if res, err := env.Service.ImportRuns(ctx, tenant, bodies[i], service.ImportOptions{}); err != nil || res.Stored != n {
					b.Fatalf("%v, %d stored", err, res.Stored)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "runs/s")
		})
		b.Run("path=otlp", func(b *testing.B) {
			var reqs []ptrace.Traces
			for range b.N {
				children, agents := benchTraces(n)
				children.ResourceSpans().MoveAndAppendTo(agents.ResourceSpans())
				reqs = append(reqs, agents)
			}
			b.ResetTimer()
			for i := range b.N {
				if res, err := env.Service.IngestTraces(ctx, tenant, reqs[i]); err != nil || res.Runs.Stored != n {
					b.Fatalf("%v, %+v", err, res)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "runs/s")
		})
		b.Run("path=otlp-split", func(b *testing.B) {
			type pair struct{ children, agents ptrace.Traces }
			var reqs []pair
			for range b.N {
				c, a := benchTraces(n)
				reqs = append(reqs, pair{c, a})
			}
			b.ResetTimer()
			for i := range b.N {
				if res, err := env.Service.IngestTraces(ctx, tenant, reqs[i].children); err != nil || res.Kept != 2*n {
					b.Fatalf("%v, %+v", err, res)
				}
				if res, err := env.Service.IngestTraces(ctx, tenant, reqs[i].agents); err != nil || res.Runs.Stored != n {
					b.Fatalf("%v, %+v", err, res)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "runs/s")
		})
	})
}
