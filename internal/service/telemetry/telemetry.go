// Package telemetry is what the evaluation service tells its operators: Prometheus
// metrics (github.com/prometheus/client_golang) served at /metrics, and OpenTelemetry
// traces (go.opentelemetry.io/otel) of each evaluation: evaluation -> job -> scorer call
// -> judge call, with the evaluator's telemetry (scores per dimension, clamps fired,
// duration, judge usage) as attributes.
//
// A nil *T is valid and does nothing, so the rooms that report (internal/service/jobs, the judge)
// need no switch of their own.
//
// Label cardinality is bounded: series are labelled by scorer, status, runtime, job kind
// and state, insight severity and kind, never by run, evaluation or agent; the tenant
// label is added only when [Options.TenantLabels] asks for it (a service with a few
// known tenants), and a deleted tenant's series go at the next scrape. No label value is
// a name a tenant chose: the scorer label names the service's own scorers, and every
// tenant's published scorer is counted under [PublishedScorer] (a tenant reads its own
// scorers' counts in its evaluations), so /metrics, which takes no key, tells nobody
// what a tenant published, and a tenant publishing names cannot add series.
package telemetry

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/scorekit/scorekit/internal/service/insights"
	"github.com/scorekit/scorekit/internal/service/redact"
	"github.com/scorekit/scorekit/sdk"
)

// Options configure a T. Zero fields take the defaults.
type Options struct {
	// TenantLabels adds a tenant label to the per-scorer series and to open insights.
	// Optional. Default is false: one series per scorer, whatever the number of tenants.
	TenantLabels bool
	// Tracer makes the spans. Optional. Default makes none.
	Tracer trace.TracerProvider
	// ProcessMetrics adds the Go runtime's and the process's collectors. Optional.
	ProcessMetrics bool
}

// PublishedScorer is the scorer label of every tenant's published scorer.
const PublishedScorer = "published"

// Tenant is whose a scorer call or an insight is.
type Tenant struct {
	// ID and Created tell a tenant from a later one of the same name (SQLite may give a
	// deleted tenant's id to the next).
	ID      int64
	Created time.Time
	// Name is the tenant label's value when tenant labels are on.
	Name string
}

// same reports whether t and u are one tenant.
func (t Tenant) same(u Tenant) bool { return t.ID == u.ID && t.Created.Equal(u.Created) }

// Scorer is the scorer of one call, as the metrics label it.
type Scorer struct {
	Tenant Tenant
	// Name is the scorer's name.
	Name string
	// Published is true for a tenant's published scorer (a version of its own, also one
	// that replaces a built-in for it): its series are [PublishedScorer]'s, not its
	// name's.
	Published bool
}

// label is the scorer label's value.
func (s Scorer) label() string {
	if s.Published {
		return PublishedScorer
	}
	return s.Name
}

// T holds the service's metrics and its tracer. It is safe for concurrent use.
type T struct {
	reg          *prometheus.Registry
	tracer       trace.Tracer
	tenantLabels bool

	// With tenant labels: the series labelled by tenant, the id of each tenant named in
	// them, and where to learn which tenants still exist (Watch).
	byTenant []interface {
		DeletePartialMatch(prometheus.Labels) int
	}
	mu      sync.Mutex
	tenants map[string]Tenant
	live    func(context.Context) ([]Tenant, error)

	results        *prometheus.CounterVec
	scores         *prometheus.HistogramVec
	latency        *prometheus.HistogramVec
	adjustments    *prometheus.CounterVec
	judgeCalls     *prometheus.CounterVec
	judgeTokens    *prometheus.CounterVec
	judgeRetries   *prometheus.CounterVec
	judgeCacheHits *prometheus.CounterVec
	jobDuration    *prometheus.HistogramVec
	jobWait        *prometheus.HistogramVec
	insightChanges *prometheus.CounterVec
	redactions     *prometheus.CounterVec
	otlpDropped    *prometheus.CounterVec
}

// Metric names, for dashboards and alerts (docs/SERVICE.md lists them).
const (
	MetricResults        = "scorekit_results_total"
	MetricScore          = "scorekit_score"
	MetricScorerDuration = "scorekit_scorer_duration_seconds"
	MetricAdjustments    = "scorekit_adjustments_total"
	MetricJudgeCalls     = "scorekit_judge_calls_total"
	MetricJudgeTokens    = "scorekit_judge_tokens_total"
	MetricJudgeRetries   = "scorekit_judge_retries_total"
	MetricJudgeCacheHits = "scorekit_judge_cache_hits_total"
	MetricJobDuration    = "scorekit_job_duration_seconds"
	MetricJobWait        = "scorekit_job_wait_seconds"
	MetricQueueJobs      = "scorekit_queue_jobs"
	MetricInsightsOpen   = "scorekit_insights_open"
	MetricInsightChanges = "scorekit_insight_changes_total"
	MetricRedactions     = "scorekit_redactions_total"
	MetricOTLPDropped    = "scorekit_otlp_dropped_total"
)

// New returns a T with its own registry.
func New(o Options) *T {
	tp := o.Tracer
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	t := &T{reg: prometheus.NewRegistry(), tracer: tp.Tracer("github.com/scorekit/scorekit/internal/service"), tenantLabels: o.TenantLabels,
		tenants: map[string]Tenant{}}
	if o.ProcessMetrics {
		t.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	scorer := t.labels("scorer")
	t.results = t.counter(MetricResults, "Results stored, by scorer and status (scored, skipped, failed).", t.labels("scorer", "status"))
	t.scores = t.histogram(MetricScore, "Scores of scored results, in [0, 1].", prometheus.LinearBuckets(0.1, 0.1, 10), scorer)
	t.latency = t.histogram(MetricScorerDuration, "Wall time of one scorer call, as the host measured it.",
		prometheus.ExponentialBuckets(0.0005, 4, 10), t.labels("scorer", "runtime"))
	t.adjustments = t.counter(MetricAdjustments, "Changes the host made to scorers' numbers, by rule (normalize_range, percentage, clamp_*, overall_weighted).",
		t.labels("scorer", "rule"))
	t.judgeCalls = t.counter(MetricJudgeCalls, "Judge requests that reached the endpoint (cache hits excluded).", scorer)
	t.judgeTokens = t.counter(MetricJudgeTokens, "Judge tokens, by kind (prompt, completion).", t.labels("scorer", "kind"))
	t.judgeRetries = t.counter(MetricJudgeRetries, "Judge requests retried after a 429 or 5xx.", scorer)
	t.judgeCacheHits = t.counter(MetricJudgeCacheHits, "Judge requests answered from the broker's cache.", scorer)
	t.jobDuration = t.histogram(MetricJobDuration, "Time one job attempt ran, by kind and outcome (ok, error, cancel, snooze).",
		prometheus.ExponentialBuckets(0.005, 4, 9), []string{"kind", "outcome"})
	t.jobWait = t.histogram(MetricJobWait, "Time a job waited in the queue between becoming available and starting.",
		prometheus.ExponentialBuckets(0.005, 4, 9), []string{"kind"})
	t.insightChanges = t.counter(MetricInsightChanges, "Insights opened, updated and resolved, by severity.", t.labels("change", "severity"))
	// No tenant label, whatever TenantLabels says: the run's own counts say which
	// tenant's runs held what.
	t.redactions = t.counter(MetricRedactions, "Redactions in stored runs, by kind (email, phone, card, secret; a tenant's own patterns are custom).", []string{"kind"})
	t.otlpDropped = t.counter(MetricOTLPDropped, "Spans and log records taken over OTLP that made or joined no run, by what they are (span, log_record) "+
		"and why (late, over_cap, window_ended, no_output, no_ids, ...); the tenant's ingest view has the trace ids.", t.labels("signal", "reason"))
	if t.tenantLabels {
		for _, v := range []*prometheus.MetricVec{t.results.MetricVec, t.scores.MetricVec, t.latency.MetricVec, t.adjustments.MetricVec,
			t.judgeCalls.MetricVec, t.judgeTokens.MetricVec, t.judgeRetries.MetricVec, t.judgeCacheHits.MetricVec, t.insightChanges.MetricVec,
			t.otlpDropped.MetricVec} {
			t.byTenant = append(t.byTenant, v)
		}
	}
	return t
}

// labels returns names, with tenant first when tenant labels are on.
func (t *T) labels(names ...string) []string {
	if t.tenantLabels {
		return append([]string{"tenant"}, names...)
	}
	return names
}

// values returns vs, with tenant first when tenant labels are on.
func (t *T) values(tenant string, vs ...string) []string {
	if t.tenantLabels {
		return append([]string{tenant}, vs...)
	}
	return vs
}

func (t *T) counter(name, help string, labels []string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	t.reg.MustRegister(c)
	return c
}

func (t *T) histogram(name, help string, buckets []float64, labels []string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	t.reg.MustRegister(h)
	return h
}

// Registry is the registry the metrics are in.
func (t *T) Registry() *prometheus.Registry { return t.reg }

// Handler serves the metrics in Prometheus's text format (GET /metrics). With tenant
// labels, each scrape first drops the series of tenants deleted since (see Watch).
func (t *T) Handler() http.Handler {
	g := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		t.prune()
		return t.reg.Gather()
	})
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{Timeout: 10 * time.Second})
}

// note records that a series of tenant is made. Another tenant of a name seen before is
// a later tenant of that name: the earlier one's series go first, so that it does not
// inherit them.
func (t *T) note(tenant Tenant) {
	if !t.tenantLabels {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if seen, ok := t.tenants[tenant.Name]; ok && !seen.same(tenant) {
		t.forget(tenant.Name)
	}
	t.tenants[tenant.Name] = tenant
}

// forget drops every series of the tenant called name. Call it with t.mu held.
func (t *T) forget(name string) {
	for _, v := range t.byTenant {
		v.DeletePartialMatch(prometheus.Labels{"tenant": name})
	}
	delete(t.tenants, name)
}

// prune drops the series of the tenants that no longer exist. When the tenants cannot be
// read, the series stay until a scrape that can.
func (t *T) prune() {
	if !t.tenantLabels || t.live == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	live, err := t.live(ctx)
	if err != nil {
		return
	}
	now := make(map[string]Tenant, len(live))
	for _, l := range live {
		now[l.Name] = l
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for name, seen := range t.tenants {
		if l, ok := now[name]; !ok || !l.same(seen) {
			t.forget(name)
		}
	}
}

// Result records one stored result of scorer (made by the host, so its telemetry says
// what it cost).
func (t *T) Result(sc Scorer, res *sdk.Result) {
	if t == nil {
		return
	}
	t.note(sc.Tenant)
	tenant, scorer := sc.Tenant.Name, sc.label()
	t.results.WithLabelValues(t.values(tenant, scorer, string(res.Status))...).Inc()
	if res.Status == sdk.StatusScored && res.Score != nil {
		t.scores.WithLabelValues(t.values(tenant, scorer)...).Observe(*res.Score)
	}
	tel := &res.Telemetry
	runtime := tel.Runtime
	if runtime == "" {
		runtime = "unknown"
	}
	t.latency.WithLabelValues(t.values(tenant, scorer, runtime)...).Observe(tel.DurationMS / 1000)
	for _, a := range res.Adjustments {
		t.adjustments.WithLabelValues(t.values(tenant, scorer, a.Rule)...).Inc()
	}
	add := func(c *prometheus.CounterVec, n int, extra ...string) {
		if n > 0 {
			c.WithLabelValues(t.values(tenant, append([]string{scorer}, extra...)...)...).Add(float64(n))
		}
	}
	add(t.judgeCalls, tel.JudgeCalls)
	add(t.judgeRetries, tel.Retries)
	add(t.judgeCacheHits, tel.CacheHits)
	add(t.judgeTokens, tel.PromptTokens, "prompt")
	add(t.judgeTokens, tel.CompletionTokens, "completion")
}

// Redacted records the redactions made in one stored run, by kind: a built-in kind is its
// own label, a tenant's pattern is "custom" (its names are the tenant's, and would
// multiply series).
func (t *T) Redacted(counts map[string]int) {
	if t == nil {
		return
	}
	for kind, n := range counts {
		if !slices.Contains(redact.Kinds, kind) {
			kind = redact.Custom
		}
		t.redactions.WithLabelValues(kind).Add(float64(n))
	}
}

// OTLPDropped records n spans or log records (signal "span" or "log_record") of tenant
// that made or joined no run, for reason.
func (t *T) OTLPDropped(tenant Tenant, signal, reason string, n int) {
	if t == nil || n <= 0 {
		return
	}
	t.note(tenant)
	t.otlpDropped.WithLabelValues(t.values(tenant.Name, signal, reason)...).Add(float64(n))
}

// InsightsChanged records what one insight update changed.
func (t *T) InsightsChanged(tenant Tenant, ch insights.Changes) {
	if t == nil {
		return
	}
	if len(ch.Opened)+len(ch.Updated)+len(ch.Resolved) > 0 {
		t.note(tenant)
	}
	inc := func(change string, sev insights.Severity) {
		t.insightChanges.WithLabelValues(t.values(tenant.Name, change, string(sev))...).Inc()
	}
	for _, in := range ch.Opened {
		inc("opened", in.Severity)
	}
	for _, u := range ch.Updated {
		inc("updated", u.Insight.Severity)
	}
	for _, in := range ch.Resolved {
		inc("resolved", in.Severity)
	}
}

// QueueCount is how many jobs of one kind are in one state.
type QueueCount struct {
	Kind, State string
	N           int64
}

// OpenCount is how many insights of one severity and kind are open for one tenant.
type OpenCount struct {
	Tenant, Severity, Kind string
	N                      int64
}

// Sources are read at each scrape, from the database every process shares: what the
// queue holds and which insights are open are facts of the service, not of one process.
type Sources struct {
	// Queue counts the jobs waiting or running, by kind and state.
	Queue func(context.Context) ([]QueueCount, error)
	// QueueKinds are the job kinds whose gauges are always present (at 0 when none
	// waits), so that an alert on them sees the series.
	QueueKinds []string
	// Insights counts the open insights.
	Insights func(context.Context) ([]OpenCount, error)
	// Tenants lists the tenants that exist: with tenant labels, the series of any other
	// go at the next scrape.
	Tenants func(context.Context) ([]Tenant, error)
}

// Watch registers the gauges read from src at each scrape: scorekit_queue_jobs and
// scorekit_insights_open; with tenant labels, each scrape also drops the series of the
// tenants src.Tenants no longer lists. Call it once, before the first scrape.
func (t *T) Watch(src Sources) {
	t.live = src.Tenants
	t.reg.MustRegister(&gauges{t: t, src: src,
		queue: prometheus.NewDesc(MetricQueueJobs, "Jobs in the queue, by kind and state (available, scheduled, retryable, running).",
			[]string{"kind", "state"}, nil),
		open: prometheus.NewDesc(MetricInsightsOpen, "Open insights, by severity and kind.", t.labels("severity", "kind"), nil),
	})
}

// queueStates are the states a job waits or runs in.
var queueStates = []string{"available", "pending", "retryable", "running", "scheduled"}

// gauges reads the sources at scrape time.
type gauges struct {
	t           *T
	src         Sources
	queue, open *prometheus.Desc
}

func (g *gauges) Describe(ch chan<- *prometheus.Desc) { ch <- g.queue; ch <- g.open }

func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if g.src.Queue != nil {
		qs, err := g.src.Queue(ctx)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(g.queue, err)
		}
		depth := map[[2]string]int64{}
		for _, k := range g.src.QueueKinds {
			for _, st := range queueStates {
				depth[[2]string{k, st}] = 0
			}
		}
		for _, q := range qs {
			depth[[2]string{q.Kind, q.State}] += q.N
		}
		keys := make([][2]string, 0, len(depth))
		for k := range depth {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b [2]string) int { return slices.Compare(a[:], b[:]) })
		for _, k := range keys {
			ch <- prometheus.MustNewConstMetric(g.queue, prometheus.GaugeValue, float64(depth[k]), k[0], k[1])
		}
	}
	if g.src.Insights != nil {
		os, err := g.src.Insights(ctx)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(g.open, err)
		}
		// Without tenant labels, tenants' counts are summed; every severity is present,
		// at 0 when nothing is open, so that an alert on it sees the series.
		sum := map[[3]string]int64{}
		for _, sev := range []insights.Severity{insights.SeverityWarning, insights.SeverityCritical} {
			if !g.t.tenantLabels {
				for _, k := range []insights.Kind{insights.KindEvaluationHealth, insights.KindGrossFailures, insights.KindQuality, insights.KindRegression} {
					sum[[3]string{"", string(sev), string(k)}] = 0
				}
			}
		}
		for _, o := range os {
			key := [3]string{o.Tenant, o.Severity, o.Kind}
			if !g.t.tenantLabels {
				key[0] = ""
			}
			sum[key] += o.N
		}
		keys := make([][3]string, 0, len(sum))
		for k := range sum {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b [3]string) int { return slices.Compare(a[:], b[:]) })
		for _, k := range keys {
			ch <- prometheus.MustNewConstMetric(g.open, prometheus.GaugeValue, float64(sum[k]), g.t.values(k[0], k[1], k[2])...)
		}
	}
}
