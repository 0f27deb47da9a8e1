package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/service/telemetry"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

// Runs with a cited answer: the first cites a passage that does not exist, so the host
// clamps its faithfulness.
const runs = `{"id": "r1", "agent": "docs", "time": "2025-06-01T10:00:00Z", "input": "How tall is the Eiffel Tower and when was it completed?", "output": "The Eiffel Tower is 330 metres tall [1] and was completed in 1889 [3].", "context": ["The Eiffel Tower stands 330 metres tall in Paris.", "The Eiffel Tower was completed in 1889 for the World Fair."]}
{"id": "r2", "agent": "docs", "time": "2025-06-01T10:01:00Z", "input": "How tall is the Eiffel Tower and when was it completed?", "output": "The Eiffel Tower is 330 metres tall [1] and was completed in 1889 [2].", "context": ["The Eiffel Tower stands 330 metres tall in Paris.", "The Eiffel Tower was completed in 1889 for the World Fair."]}
`

const verdict = `{"faithfulness": 0.9, "relevance": 0.8, "completeness": 0.7, "reasoning_quality": 0.6, "overall_score": 0.8}`

type fixture struct {
	env    *servicetest.Env
	tenant store.Tenant
	tel    *telemetry.T
	spans  *tracetest.InMemoryExporter
	judge  *judgetest.Server
}

// newFixture is a service whose scorers, jobs and judge report to one T, with an in-memory
// span exporter and a judge that answers 500 once (a retry) and then MASIS verdicts.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := judgetest.New(judgetest.Rule{Status: 500, Times: 1}, judgetest.Rule{Reply: verdict})
	t.Cleanup(srv.Close)
	b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge-test", BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tel := telemetry.New(telemetry.Options{Tracer: tp})
	h := host.New(servicetest.Registry(t, nil), host.WithJudge(tel.Judge(b)))
	env := servicetest.New(t, filepath.Join(t.TempDir(), "scorekit.db"), servicetest.Options{Host: h, Judge: b, Jobs: jobs.Options{Telemetry: tel}})
	tel.Watch(env.Queue.TelemetrySources())
	ctx := context.Background()
	tenant, err := env.Service.CreateTenant(ctx, "acme", store.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := env.Service.ImportRuns(ctx, tenant, []byte(runs), service.ImportOptions{}); err != nil || res.Stored != 2 {
		t.Fatalf("import: %+v %v", res, err)
	}
	return &fixture{env: env, tenant: tenant, tel: tel, spans: spans, judge: srv}
}

func (f *fixture) evaluate(t *testing.T, scorers ...string) service.EvaluationView {
	t.Helper()
	ctx := context.Background()
	ev, err := f.env.Service.CreateEvaluation(ctx, f.tenant, "docs", service.EvaluationRequest{Limit: 2, Scorers: scorers})
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.env.Service.WaitEvaluation(ctx, f.tenant, ev.ID, time.Minute, service.ViewOptions{Results: true})
	if err != nil || v.Status != service.StatusDone {
		t.Fatalf("evaluation: %s %v", v.Status, err)
	}
	if ok, err := f.env.Service.WaitInsights(ctx, f.tenant, "docs", time.Minute); err != nil || !ok {
		t.Fatalf("insights not up to date: %v", err)
	}
	return v
}

// scrape reads /metrics as Prometheus does and parses it with Prometheus's text parser.
func scrape(t *testing.T, tel *telemetry.T) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(tel.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// value sums the samples of family whose labels include want (counter, gauge, or a
// histogram's count).
func value(fams map[string]*dto.MetricFamily, family string, want map[string]string) (float64, bool) {
	f, ok := fams[family]
	if !ok {
		return 0, false
	}
	var sum float64
	found := false
next:
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum, found
}

// /metrics has every series the issue lists, and they move when runs are scored: results
// by scorer and status, scores, latency, host adjustments, judge calls, tokens, retries
// and cache hits, job latency and wait, queue depth, open insights. No series is labelled
// by run, evaluation or agent, and none by tenant unless asked.
func TestMetricsMoveWhenRunsAreScored(t *testing.T) {
	f := newFixture(t)
	before := scrape(t, f.tel)
	for _, fam := range []string{telemetry.MetricQueueJobs, telemetry.MetricInsightsOpen} {
		if _, ok := before[fam]; !ok {
			t.Errorf("%s is missing before any work; alerts need it at 0", fam)
		}
	}
	if v, _ := value(before, telemetry.MetricInsightsOpen, map[string]string{"severity": "critical"}); v != 0 {
		t.Errorf("critical insights open before any work: %v", v)
	}
	f.evaluate(t, "masis", "prescreen")
	f.evaluate(t, "masis") // the same requests again: the broker's cache answers
	after := scrape(t, f.tel)
	moved := []struct {
		family string
		labels map[string]string
		want   float64 // at least
	}{
		{telemetry.MetricResults, map[string]string{"scorer": "masis", "status": "scored"}, 4},
		{telemetry.MetricResults, map[string]string{"scorer": "prescreen", "status": "scored"}, 2},
		{telemetry.MetricScore, map[string]string{"scorer": "masis"}, 4},
		{telemetry.MetricScorerDuration, map[string]string{"scorer": "masis", "runtime": "native"}, 4},
		{telemetry.MetricAdjustments, map[string]string{"scorer": "masis", "rule": "clamp_invalid_citations"}, 2},
		{telemetry.MetricJudgeCalls, map[string]string{"scorer": "masis"}, 2},
		{telemetry.MetricJudgeTokens, map[string]string{"scorer": "masis", "kind": "prompt"}, 1},
		{telemetry.MetricJudgeTokens, map[string]string{"scorer": "masis", "kind": "completion"}, 1},
		{telemetry.MetricJudgeRetries, map[string]string{"scorer": "masis"}, 1},
		{telemetry.MetricJudgeCacheHits, map[string]string{"scorer": "masis"}, 2},
		{telemetry.MetricJobDuration, map[string]string{"kind": "scorekit_evaluate", "outcome": "ok"}, 2},
		{telemetry.MetricJobDuration, map[string]string{"kind": "scorekit_insights", "outcome": "ok"}, 1},
		{telemetry.MetricJobWait, map[string]string{"kind": "scorekit_evaluate"}, 2},
	}
	for _, m := range moved {
		got, ok := value(after, m.family, m.labels)
		was, _ := value(before, m.family, m.labels)
		if !ok || got-was < m.want {
			t.Errorf("%s%v: %v -> %v; want a rise of at least %v", m.family, m.labels, was, got, m.want)
		}
	}
	if _, ok := value(after, telemetry.MetricQueueJobs, map[string]string{"kind": "scorekit_evaluate", "state": "available"}); !ok {
		t.Errorf("%s has no scorekit_evaluate/available series", telemetry.MetricQueueJobs)
	}
	for name, fam := range after {
		if !strings.HasPrefix(name, "scorekit_") {
			continue
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if slices.Contains([]string{"run", "run_id", "evaluation", "agent", "tenant"}, l.GetName()) {
					t.Errorf("%s has a %s label: unbounded (or tenant labels were not asked for)", name, l.GetName())
				}
			}
		}
	}
	// With tenant labels asked for, the per-scorer series carry the tenant.
	tl := telemetry.New(telemetry.Options{TenantLabels: true})
	score := 0.9
	tl.Result(telemetry.Scorer{Tenant: telemetry.Tenant{ID: 1, Name: "acme"}, Name: "prescreen"}, &sdk.Result{Status: sdk.StatusScored, Score: &score, Telemetry: sdk.Telemetry{DurationMS: 1, Runtime: "native"}})
	if v, ok := value(scrape(t, tl), telemetry.MetricResults, map[string]string{"tenant": "acme", "scorer": "prescreen", "status": "scored"}); !ok || v != 1 {
		t.Errorf("with tenant labels: %v %v; want one result of tenant acme", v, ok)
	}
}

// The trace of an evaluation: the evaluation span, one job span per chunk under it, a
// scorer span per (run, scorer) under its job, a judge span under each judge scorer's
// call, and the insight update's job under the chunk that enqueued it; the scorer spans
// carry the evaluator's telemetry (scores per dimension, clamps fired, duration).
func TestTraceOfAnEvaluation(t *testing.T) {
	f := newFixture(t)
	v := f.evaluate(t, "masis", "prescreen")
	spans := f.spans.GetSpans()
	byName := map[string][]tracetest.SpanStub{}
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
		byID[s.SpanContext.SpanID()] = s
	}
	attr := func(s tracetest.SpanStub, key string) (string, bool) {
		for _, kv := range s.Attributes {
			if string(kv.Key) == key {
				return kv.Value.Emit(), true
			}
		}
		return "", false
	}
	evs := byName[telemetry.SpanEvaluation]
	if len(evs) != 1 {
		t.Fatalf("%d evaluation spans; want 1 (spans: %v)", len(evs), names(spans))
	}
	ev := evs[0]
	if id, _ := attr(ev, "scorekit.evaluation.id"); id != v.ID {
		t.Errorf("evaluation span id %q; want %s", id, v.ID)
	}
	trace := ev.SpanContext.TraceID()
	parentOf := func(s tracetest.SpanStub) (tracetest.SpanStub, bool) {
		p, ok := byID[s.Parent.SpanID()]
		return p, ok
	}
	var evalJobs, insightJobs int
	for _, j := range byName[telemetry.SpanJob] {
		kind, _ := attr(j, "scorekit.job.kind")
		p, ok := parentOf(j)
		switch kind {
		case "scorekit_evaluate":
			evalJobs++
			if !ok || p.Name != telemetry.SpanEvaluation || j.SpanContext.TraceID() != trace {
				t.Errorf("evaluate job span's parent is %q; want the evaluation span", p.Name)
			}
		case "scorekit_insights":
			insightJobs++
			if pk, _ := attr(p, "scorekit.job.kind"); !ok || p.Name != telemetry.SpanJob || pk != "scorekit_evaluate" {
				t.Errorf("insights job span's parent is %q (%s); want the evaluate job that enqueued it", p.Name, pk)
			}
		}
	}
	if evalJobs == 0 || insightJobs == 0 {
		t.Fatalf("%d evaluate and %d insights job spans; want some of each (spans: %v)", evalJobs, insightJobs, names(spans))
	}
	scorers := byName[telemetry.SpanScorer]
	if len(scorers) != 4 {
		t.Fatalf("%d scorer spans; want 4 (2 runs x 2 scorers)", len(scorers))
	}
	clamped := 0
	for _, s := range scorers {
		if p, ok := parentOf(s); !ok || p.Name != telemetry.SpanJob {
			t.Errorf("scorer span's parent is %q; want a job span", p.Name)
		}
		if d, ok := attr(s, "scorekit.duration_ms"); !ok || d == "0" {
			t.Errorf("scorer span without a duration: %v", s.Attributes)
		}
		name, _ := attr(s, "scorekit.scorer")
		if name != "masis" {
			continue
		}
		for _, dim := range []string{"faithfulness", "relevance", "completeness", "reasoning_quality"} {
			if _, ok := attr(s, "scorekit.dimension."+dim); !ok {
				t.Errorf("masis span lacks dimension %s: %v", dim, s.Attributes)
			}
		}
		if c, ok := attr(s, "scorekit.clamps"); ok && strings.Contains(c, "clamp_invalid_citations") {
			clamped++
			if fa, _ := attr(s, "scorekit.dimension.faithfulness"); fa != "0.4" {
				t.Errorf("clamped run's faithfulness = %s; want 0.4", fa)
			}
		}
	}
	if clamped != 1 {
		t.Errorf("%d masis spans with clamp_invalid_citations; want 1 (run r1 cites [3])", clamped)
	}
	judges := byName[telemetry.SpanJudge]
	if len(judges) != 2 {
		t.Fatalf("%d judge spans; want 2 (one per masis call)", len(judges))
	}
	for _, j := range judges {
		p, ok := parentOf(j)
		if name, _ := attr(p, "scorekit.scorer"); !ok || p.Name != telemetry.SpanScorer || name != "masis" {
			t.Errorf("judge span's parent is %q (%s); want a masis scorer span", p.Name, name)
		}
		if j.SpanContext.TraceID() != trace {
			t.Errorf("judge span in another trace")
		}
	}
}

func names(spans tracetest.SpanStubs) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name
	}
	return out
}
