package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

// agentTrace records, with the OpenTelemetry SDK, what an instrumented agent records for
// one turn: the agent span "invoke_agent planner" with a model call that asks for a tool,
// the tool's span, a nested agent ("researcher", named only by its span name) with a
// tool of its own, and a last model call that answers. Spans end children first, as
// they do in an agent. It returns the ended spans in the order they ended.
func agentTrace(t *testing.T) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "trip-service"))))
	tr := tp.Tracer("agent-framework")
	ctx, agent := tr.Start(context.Background(), "invoke_agent planner", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.agent.name", "planner"),
		attribute.String("gen_ai.system_instructions", `[{"type":"text","content":"You plan trips."}]`),
		attribute.String("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Plan a day in Lyon and book lunch."}]}]`),
	))
	_, chat := tr.Start(ctx, "chat gpt-4o", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.request.model", "gpt-4o"),
		attribute.String("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Plan a day in Lyon and book lunch."}]}]`),
		attribute.String("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"book_table","arguments":{"city":"Lyon","time":"12:30"}}],"finish_reason":"tool_call"}]`),
	))
	chat.End()
	_, tool := tr.Start(ctx, "execute_tool book_table", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", "book_table"),
		attribute.String("gen_ai.tool.call.id", "c1"),
		attribute.String("gen_ai.tool.call.arguments", `{"city":"Lyon","time":"12:30"}`),
		attribute.String("gen_ai.tool.call.result", `{"booked":true,"place":"Le Bouchon"}`),
	))
	tool.End()
	nctx, nested := tr.Start(ctx, "invoke_agent researcher", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Find two museums in Lyon."}]}]`),
		attribute.String("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"Musée des Confluences and Musée des Beaux-Arts."}],"finish_reason":"stop"}]`),
	))
	_, search := tr.Start(nctx, "execute_tool web_search", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", "web_search"),
		attribute.String("gen_ai.tool.call.id", "s1"),
		attribute.String("gen_ai.tool.call.arguments", `{"q":"Lyon museums"}`),
	))
	search.SetStatus(codes.Error, "search backend timed out")
	search.End()
	nested.End()
	_, final := tr.Start(ctx, "chat gpt-4o", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.request.model", "gpt-4o"),
		attribute.String("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Plan a day in Lyon and book lunch."}]}]`),
		attribute.String("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"Morning at Musée des Confluences, lunch booked at Le Bouchon at 12:30."}],"finish_reason":"stop"}]`),
	))
	final.End()
	agent.End()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	return rec.Ended()
}

// exporter is the OpenTelemetry SDK's OTLP/HTTP exporter pointed at a test server.
func exporter(t *testing.T, url, key string, opts ...otlptracehttp.Option) *otlptrace.Exporter {
	t.Helper()
	opts = append([]otlptracehttp.Option{
		otlptracehttp.WithEndpointURL(url + "/v1/traces"),
		otlptracehttp.WithHeaders(map[string]string{"Authorization": "Bearer " + key}),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}),
	}, opts...)
	exp, err := otlptracehttp.New(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	return exp
}

// runOf reads a stored run.
func runOf(t *testing.T, c client, id string) (sdk.Run, bool) {
	t.Helper()
	r := c.do("GET", "/v1/runs/"+id, nil)
	if r.status == http.StatusNotFound {
		return sdk.Run{}, false
	}
	var v service.RunView
	r.json(t, &v)
	var run sdk.Run
	if err := json.Unmarshal(v.Run, &run); err != nil {
		t.Fatal(err)
	}
	return run, true
}

func runIDOf(s sdktrace.ReadOnlySpan) string {
	return s.SpanContext().TraceID().String() + "-" + s.SpanContext().SpanID().String()
}

func byName(spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	for _, s := range spans {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

// checkAgentRuns checks the two runs of agentTrace's spans.
func checkAgentRuns(t *testing.T, c client, spans []sdktrace.ReadOnlySpan) {
	t.Helper()
	outer, nested := byName(spans, "invoke_agent planner"), byName(spans, "invoke_agent researcher")
	run, ok := runOf(t, c, runIDOf(outer))
	if !ok {
		t.Fatalf("no run %s for the agent span", runIDOf(outer))
	}
	if run.Agent != "planner" || run.Input != "Plan a day in Lyon and book lunch." ||
		run.Output != "Morning at Musée des Confluences, lunch booked at Le Bouchon at 12:30." {
		t.Errorf("planner's run: agent %q input %q output %q", run.Agent, run.Input, run.Output)
	}
	// The nested agent's tool is its own, not the planner's.
	if len(run.ToolCalls) != 1 || run.ToolCalls[0].Name != "book_table" || run.ToolCalls[0].Result != `{"booked":true,"place":"Le Bouchon"}` {
		t.Errorf("planner's tool calls: %+v", run.ToolCalls)
	}
	nrun, ok := runOf(t, c, runIDOf(nested))
	if !ok {
		t.Fatalf("no run for the nested agent span")
	}
	if nrun.Agent != "researcher" || nrun.Metadata["parent_span_id"] != outer.SpanContext().SpanID().String() {
		t.Errorf("nested run: agent %q parent %v; want researcher under %s", nrun.Agent, nrun.Metadata["parent_span_id"], outer.SpanContext().SpanID())
	}
	if len(nrun.ToolCalls) != 1 || nrun.ToolCalls[0].Name != "web_search" || !strings.Contains(nrun.ToolCalls[0].Result, "search backend timed out") {
		t.Errorf("nested run's tool calls: %+v", nrun.ToolCalls)
	}
}

// TestOTLPExporterRuns: the OpenTelemetry SDK's exporter sends an agent's spans in one
// batch, as protobuf and as JSON, plain and gzip-compressed; the runs appear with their
// tool calls, under the key's tenant, and are evaluated on arrival by the agent's policy.
// Sending the batch again stores nothing twice.
func TestOTLPExporterRuns(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		h := newHarness(t, dsn, servicetest.Options{}, "acme", "other")
		c := h.as(t, "acme")
		if r := c.do("PUT", "/v1/agents/planner/policy", []byte(`{"scorers": ["prescreen"], "sample_rate": 1}`)); r.status != 200 {
			t.Fatalf("policy: %d %s", r.status, r.body)
		}
		for _, tc := range []struct {
			name string
			opts []otlptracehttp.Option
		}{
			{"protobuf", nil},
			{"json", []otlptracehttp.Option{otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON)}},
			{"protobuf gzip", []otlptracehttp.Option{otlptracehttp.WithCompression(otlptracehttp.GzipCompression)}},
			{"json gzip", []otlptracehttp.Option{otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON), otlptracehttp.WithCompression(otlptracehttp.GzipCompression)}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				spans := agentTrace(t)
				exp := exporter(t, h.srv.URL, h.keys["acme"], tc.opts...)
				if err := exp.ExportSpans(context.Background(), spans); err != nil {
					t.Fatalf("export: %v", err)
				}
				checkAgentRuns(t, c, spans)
				if _, ok := runOf(t, h.as(t, "other"), runIDOf(byName(spans, "invoke_agent planner"))); ok {
					t.Fatal("another tenant sees the run")
				}
				// The exporter sends the batch again (its answer was lost): nothing is stored twice.
				before := countRuns(t, h, "acme")
				if err := exp.ExportSpans(context.Background(), spans); err != nil {
					t.Fatalf("export again: %v", err)
				}
				if after := countRuns(t, h, "acme"); after != before {
					t.Fatalf("the batch sent again stored %d more runs", after-before)
				}
			})
		}
		evs, err := h.env.Service.Evaluations(context.Background(), tenantNamed(t, h, "acme"), "planner", 100)
		if err != nil {
			t.Fatal(err)
		}
		// The four batches' runs joined the agent's one open arrival evaluation, through the
		// same arrival policy as POST /v1/runs.
		if len(evs) != 1 || evs[0].Trigger != store.TriggerArrival || !evs[0].Open || evs[0].Runs != 4 {
			t.Fatalf("evaluations of planner: %d (%+v); want one open arrival evaluation of the 4 batches' runs", len(evs), evs)
		}
	})
}

// TestOTLPSpansAsTheyEnd: the SDK exports each span as it ends (a simple span processor),
// so the children arrive in requests before their agent span; the runs are assembled when
// the agent spans arrive. On PostgreSQL the children go to one server and the agent spans
// to another on the same database.
func TestOTLPSpansAsTheyEnd(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		h := newHarness(t, dsn, servicetest.Options{}, "acme")
		spans := agentTrace(t)
		first := exporter(t, h.srv.URL, h.keys["acme"])
		second := first
		if strings.HasPrefix(dsn, "postgres") {
			h2 := newHarness(t, dsn, servicetest.Options{})
			second = exporter(t, h2.srv.URL, h.keys["acme"], otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON))
		}
		c := h.as(t, "acme")
		for _, s := range spans {
			exp := first
			if strings.HasPrefix(s.Name(), "invoke_agent") {
				exp = second
			}
			if err := exp.ExportSpans(context.Background(), []sdktrace.ReadOnlySpan{s}); err != nil {
				t.Fatalf("export %s: %v", s.Name(), err)
			}
			if s.Name() == "execute_tool book_table" {
				if _, ok := runOf(t, c, runIDOf(byName(spans, "invoke_agent planner"))); ok {
					t.Fatal("a run before its agent span arrived")
				}
			}
		}
		checkAgentRuns(t, c, spans)
		// The exporter sends each request again: nothing is late, nothing stored twice.
		before := countRuns(t, h, "acme")
		for _, s := range spans {
			if err := first.ExportSpans(context.Background(), []sdktrace.ReadOnlySpan{s}); err != nil {
				t.Fatalf("export %s again: %v", s.Name(), err)
			}
		}
		if after := countRuns(t, h, "acme"); after != before {
			t.Fatalf("sent again, the spans stored %d more runs", after-before)
		}
	})
}

// TestOTLPLateSpan: a span that arrives after its agent span's run was made is rejected
// with the reason in the partial success answer, and the run does not change.
func TestOTLPLateSpan(t *testing.T) {
	h := newHarness(t, filepath.Join(t.TempDir(), "scorekit.db"), servicetest.Options{NoWorkers: true}, "acme")
	spans := agentTrace(t)
	tool := byName(spans, "execute_tool book_table")
	var rest []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s != tool {
			rest = append(rest, s)
		}
	}
	r := postTraces(t, h.srv.URL, h.keys["acme"], "application/json", "", tracesJSON(t, rest))
	if r.status != 200 || partial(t, r).RejectedSpans() != 0 {
		t.Fatalf("first batch: %d %s", r.status, r.body)
	}
	r = postTraces(t, h.srv.URL, h.keys["acme"], "application/json", "", tracesJSON(t, []sdktrace.ReadOnlySpan{tool}))
	ps := partial(t, r)
	if r.status != 200 || ps.RejectedSpans() != 1 || !strings.Contains(ps.ErrorMessage(), "arrived after its agent span's run was made") {
		t.Fatalf("late span: %d %s", r.status, r.body)
	}
	// The model's call is in the run (its model call came in time); the late tool span's
	// result is not.
	run, _ := runOf(t, h.as(t, "acme"), runIDOf(byName(spans, "invoke_agent planner")))
	if len(run.ToolCalls) != 1 || run.ToolCalls[0].Name != "book_table" || run.ToolCalls[0].Result != "" {
		t.Fatalf("the run changed: %+v", run.ToolCalls)
	}
}

// TestOTLPRefusals: a wrong key is 401, a body that is not OTLP is 400 with a message that
// says so, a body over the cap (as sent, or once decompressed: a gzip bomb) is 413, an
// unknown encoding is 415; each answer is a google.rpc.Status in the request's encoding.
func TestOTLPRefusals(t *testing.T) {
	const limit = 64 << 10
	url, key := otlpServer(t, api.Options{MaxTraceBodyBytes: limit})
	good, err := ptraceotlp.NewExportRequestFromTraces(ptrace.NewTraces()).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	bomb := gzipped(t, bytes.Repeat([]byte{0}, 10<<20))
	if len(bomb) > limit {
		t.Fatalf("the bomb is %d bytes compressed", len(bomb))
	}
	for _, tc := range []struct {
		name, key, ct, encoding string
		body                    []byte
		status                  int
		says                    string
	}{
		{"good", key, "application/x-protobuf", "", good, 200, ""},
		{"wrong key", "sk_wrong", "application/x-protobuf", "", good, 401, "key"},
		{"not protobuf", key, "application/x-protobuf", "", []byte("\xff\xff\xff\xff"), 400, "not an ExportTraceServiceRequest in protobuf"},
		{"not JSON", key, "application/json", "", []byte(`{"resourceSpans": [`), 400, "not an ExportTraceServiceRequest in OTLP JSON"},
		{"not gzip", key, "application/x-protobuf", "gzip", good, 400, "not gzip"},
		{"over the cap", key, "application/x-protobuf", "", bytes.Repeat([]byte{0}, limit+1), 413, "over the limit"},
		{"gzip bomb", key, "application/x-protobuf", "gzip", bomb, 413, "after decompression"},
		{"other encoding", key, "application/x-protobuf", "br", good, 415, "gzip"},
		{"other type", key, "text/plain", "", good, 415, "application/x-protobuf or application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := postTraces(t, url, tc.key, tc.ct, tc.encoding, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d %s; want %d", r.status, r.body, tc.status)
			}
			if tc.status == 200 {
				return
			}
			var st rpcstatus.Status
			unmarshal := proto.Unmarshal
			if tc.ct == "application/json" {
				unmarshal = protojson.Unmarshal
			}
			if r.header.Get("Content-Type") != tc.ct && tc.status != 415 {
				t.Errorf("Content-Type %q; want the request's", r.header.Get("Content-Type"))
			}
			if err := unmarshal(r.body, &st); err != nil || !strings.Contains(st.GetMessage(), tc.says) {
				t.Fatalf("answer %q (%v); want a google.rpc.Status that says %q", r.body, err, tc.says)
			}
		})
	}
}

// TestOTLPOverload: a request over the tenant's share of requests in flight is answered
// 429, and one over the server's cap 503, each with Retry-After and a google.rpc.Status,
// before its body is read; once the slot is free, the next request is taken.
func TestOTLPOverload(t *testing.T) {
	for _, tc := range []struct {
		name   string
		o      api.Options
		status int
	}{
		{"the tenant's share", api.Options{MaxInFlight: 8, MaxInFlightPerTenant: 1}, http.StatusTooManyRequests},
		{"the server's cap", api.Options{MaxInFlight: 1}, http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, key := otlpServer(t, tc.o)
			// One request holds the only slot: its body never ends.
			conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /v1/traces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/x-protobuf\r\nContent-Length: 1000\r\n\r\n\x0a", key)
			good, err := ptraceotlp.NewExportRequestFromTraces(ptrace.NewTraces()).MarshalProto()
			if err != nil {
				t.Fatal(err)
			}
			// The held request takes its slot when the server has read its headers; until
			// then the next one may pass. Bounded: the server reads them at once.
			var r reply
			for range 1000 {
				if r = postTraces(t, url, key, "application/x-protobuf", "", good); r.status != 200 {
					break
				}
			}
			var st rpcstatus.Status
			if r.status != tc.status || r.header.Get("Retry-After") == "" || proto.Unmarshal(r.body, &st) != nil || !strings.Contains(st.GetMessage(), "retry after") {
				t.Fatalf("%d Retry-After %q %q; want %d with Retry-After and a google.rpc.Status", r.status, r.header.Get("Retry-After"), r.body, tc.status)
			}
			// The held request ends; its slot frees.
			conn.Close()
			for range 1000 {
				if r = postTraces(t, url, key, "application/x-protobuf", "", good); r.status == 200 {
					return
				}
			}
			t.Fatalf("after the held request ended: %d %s", r.status, r.body)
		})
	}
}

// otlpServer serves a service with one tenant, acme, with o; it returns its URL and key.
func otlpServer(t *testing.T, o api.Options) (string, string) {
	t.Helper()
	env := servicetest.New(t, filepath.Join(t.TempDir(), "scorekit.db"), servicetest.Options{NoWorkers: true})
	ctx := context.Background()
	if _, err := env.Service.CreateTenant(ctx, "acme", store.Policy{}); err != nil {
		t.Fatal(err)
	}
	key, _, err := env.Service.CreateKey(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(env.Service, o))
	t.Cleanup(srv.Close)
	return srv.URL, key
}

func postTraces(t *testing.T, url, key, ct, encoding string, body []byte) reply {
	t.Helper()
	req, err := http.NewRequest("POST", url+"/v1/traces", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", ct)
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// tracesJSON encodes SDK spans as OTLP JSON with the Collector's data model, the way
// the exporter's own encoding would.
func tracesJSON(t *testing.T, spans []sdktrace.ReadOnlySpan) []byte {
	t.Helper()
	var buf bytes.Buffer
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(&buf, r.Body)
	}))
	defer srv.Close()
	exp := exporter(t, srv.URL, "", otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON))
	if err := exp.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func partial(t *testing.T, r reply) ptraceotlp.ExportPartialSuccess {
	t.Helper()
	resp := ptraceotlp.NewExportResponse()
	if err := resp.UnmarshalJSON(r.body); err != nil {
		t.Fatalf("answer %q: %v", r.body, err)
	}
	return resp.PartialSuccess()
}

func gzipped(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func countRuns(t *testing.T, h *harness, tenant string) int {
	t.Helper()
	n := 0
	for _, agent := range []string{"planner", "researcher"} {
		runs, err := h.env.Store.Runs(context.Background(), tenantNamed(t, h, tenant).ID, store.RunQuery{Agent: agent, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		n += len(runs)
	}
	return n
}

func tenantNamed(t *testing.T, h *harness, name string) store.Tenant {
	t.Helper()
	tn, _, err := h.env.Service.Authenticate(context.Background(), h.keys[name])
	if err != nil {
		t.Fatal(err)
	}
	return tn
}
