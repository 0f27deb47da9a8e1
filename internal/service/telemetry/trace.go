package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/sdk"
)

// Span names.
const (
	SpanEvaluation = "scorekit.evaluation"
	SpanJob        = "scorekit.job"
	SpanScorer     = "scorekit.scorer"
	SpanJudge      = "scorekit.judge"
)

// propagator carries a span's context in a job's metadata, from the process that enqueues
// to the one that works it (W3C Trace Context).
var propagator = propagation.TraceContext{}

// EvaluationInfo describes an evaluation for its span.
type EvaluationInfo struct {
	ID, Agent, Trigger string
	Runs, Jobs         int
	Scorers            []string
}

// StartEvaluation starts the span of an evaluation being created; the jobs enqueued
// under the returned context are its children, wherever they run. End the span when the
// evaluation and its jobs are stored.
func (t *T) StartEvaluation(ctx context.Context, ev EvaluationInfo) (context.Context, trace.Span) {
	if t == nil {
		return ctx, trace.SpanFromContext(context.Background()) // a span that records nothing
	}
	return t.tracer.Start(ctx, SpanEvaluation, trace.WithAttributes(
		attribute.String("scorekit.evaluation.id", ev.ID),
		attribute.String("scorekit.agent", ev.Agent),
		attribute.String("scorekit.evaluation.trigger", ev.Trigger),
		attribute.Int("scorekit.evaluation.runs", ev.Runs),
		attribute.Int("scorekit.evaluation.jobs", ev.Jobs),
		attribute.StringSlice("scorekit.scorers", ev.Scorers),
	))
}

// ScorerCall starts the span of one scorer call on one run; end it with the result and
// the scorer's version, which also records the result's metrics. The span, which goes to
// the operator's collector, names the scorer as the evaluation does; the metrics label it
// as [Scorer] says.
func (t *T) ScorerCall(ctx context.Context, sc Scorer, runID string) (context.Context, func(res *sdk.Result, version string)) {
	if t == nil {
		return ctx, func(*sdk.Result, string) {}
	}
	ctx, span := t.tracer.Start(ctx, SpanScorer, trace.WithAttributes(
		attribute.String("scorekit.tenant", sc.Tenant.Name),
		attribute.String("scorekit.scorer", sc.Name),
		attribute.String("scorekit.run.id", runID),
	))
	return ctx, func(res *sdk.Result, version string) {
		t.Result(sc, res)
		span.SetAttributes(resultAttributes(res, version)...)
		if res.Status == sdk.StatusFailed {
			msg := res.Reason
			if res.Error != nil {
				msg = res.Error.Code + ": " + res.Error.Message
			}
			span.SetStatus(codes.Error, msg)
		}
		span.End()
	}
}

// resultAttributes are the evaluator's telemetry of one result.
func resultAttributes(res *sdk.Result, version string) []attribute.KeyValue {
	tel := &res.Telemetry
	kv := []attribute.KeyValue{
		attribute.String("scorekit.scorer.version", version),
		attribute.String("scorekit.status", string(res.Status)),
		attribute.String("scorekit.runtime", tel.Runtime),
		attribute.Float64("scorekit.duration_ms", tel.DurationMS),
		attribute.Int("scorekit.judge.calls", tel.JudgeCalls),
		attribute.Int("scorekit.judge.cache_hits", tel.CacheHits),
		attribute.Int("scorekit.judge.retries", tel.Retries),
		attribute.Int("scorekit.judge.prompt_tokens", tel.PromptTokens),
		attribute.Int("scorekit.judge.completion_tokens", tel.CompletionTokens),
	}
	if res.Score != nil {
		kv = append(kv, attribute.Float64("scorekit.score", *res.Score))
	}
	if res.Passed != nil {
		kv = append(kv, attribute.Bool("scorekit.passed", *res.Passed))
	}
	for name, v := range res.Dimensions {
		kv = append(kv, attribute.Float64("scorekit.dimension."+name, v))
	}
	var rules, clamps []string
	for _, a := range res.Adjustments {
		rules = append(rules, a.Rule+":"+a.Target)
		if strings.HasPrefix(a.Rule, "clamp_") {
			clamps = append(clamps, a.Rule)
		}
	}
	if len(rules) > 0 {
		kv = append(kv, attribute.StringSlice("scorekit.adjustments", rules))
	}
	if len(clamps) > 0 {
		kv = append(kv, attribute.StringSlice("scorekit.clamps", clamps))
	}
	if len(res.Flags) > 0 {
		kv = append(kv, attribute.StringSlice("scorekit.flags", res.Flags))
	}
	if res.Error != nil {
		kv = append(kv, attribute.String("scorekit.error.code", res.Error.Code))
	}
	return kv
}

// Middleware is River middleware that carries the trace from enqueue to work (the
// context of the code that inserts a job, in the job's metadata) and, around each job
// attempt, starts the job's span and records its wait and duration.
func (t *T) Middleware() rivertype.Middleware { return &middleware{t: t} }

type middleware struct {
	river.MiddlewareDefaults
	t *T
}

var (
	_ rivertype.JobInsertMiddleware = (*middleware)(nil)
	_ rivertype.WorkerMiddleware    = (*middleware)(nil)
)

// InsertMany writes the inserting context's span into each job's metadata.
func (m *middleware) InsertMany(ctx context.Context, params []*rivertype.JobInsertParams, doInner func(context.Context) ([]*rivertype.JobInsertResult, error)) ([]*rivertype.JobInsertResult, error) {
	carrier := propagation.MapCarrier{}
	propagator.Inject(ctx, carrier)
	if len(carrier) > 0 {
		for _, p := range params {
			meta := map[string]any{}
			if len(p.Metadata) > 0 {
				_ = json.Unmarshal(p.Metadata, &meta)
			}
			for k, v := range carrier {
				meta[k] = v
			}
			if b, err := json.Marshal(meta); err == nil {
				p.Metadata = b
			}
		}
	}
	return doInner(ctx)
}

// Work runs a job attempt in its span, a child of the span that enqueued it.
func (m *middleware) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	start := time.Now()
	if !job.ScheduledAt.IsZero() && start.After(job.ScheduledAt) {
		m.t.jobWait.WithLabelValues(job.Kind).Observe(start.Sub(job.ScheduledAt).Seconds())
	}
	var meta map[string]any
	_ = json.Unmarshal(job.Metadata, &meta)
	carrier := propagation.MapCarrier{}
	for _, k := range propagator.Fields() {
		if s, ok := meta[k].(string); ok {
			carrier[k] = s
		}
	}
	ctx = propagator.Extract(ctx, carrier)
	ctx, span := m.t.tracer.Start(ctx, SpanJob, trace.WithAttributes(
		attribute.String("scorekit.job.kind", job.Kind),
		attribute.Int64("scorekit.job.id", job.ID),
		attribute.Int("scorekit.job.attempt", job.Attempt),
	))
	err := doInner(ctx)
	outcome := "ok"
	var (
		cancel *rivertype.JobCancelError
		snooze *rivertype.JobSnoozeError
	)
	switch {
	case err == nil:
	case errors.As(err, &cancel):
		outcome = "cancel"
	case errors.As(err, &snooze):
		outcome = "snooze"
	default:
		outcome = "error"
	}
	if outcome == "error" || outcome == "cancel" {
		span.SetStatus(codes.Error, err.Error())
	}
	span.SetAttributes(attribute.String("scorekit.job.outcome", outcome))
	span.End()
	m.t.jobDuration.WithLabelValues(job.Kind, outcome).Observe(time.Since(start).Seconds())
	return err
}

// Judge returns j with a span around each of its calls, children of the scorer call
// that makes them. A judge that meters each scoring call (the broker) keeps doing so.
// A nil j stays nil.
func (t *T) Judge(j sdk.Judge) sdk.Judge {
	if t == nil || j == nil {
		return j
	}
	if m, ok := j.(host.JudgeMeter); ok {
		return &meteredJudge{tracedJudge: tracedJudge{t: t, j: j}, m: m}
	}
	return &tracedJudge{t: t, j: j}
}

type tracedJudge struct {
	t *T
	j sdk.Judge
}

// Unwrap returns the judge this one traces.
func (tj *tracedJudge) Unwrap() sdk.Judge { return tj.j }

// start starts the span of one call of the judge's op with n requests.
func (tj *tracedJudge) start(ctx context.Context, op string, n int) (context.Context, trace.Span) {
	return tj.t.tracer.Start(ctx, SpanJudge, trace.WithAttributes(
		attribute.String("scorekit.judge.op", op),
		attribute.Int("scorekit.judge.requests", n),
	))
}

func (tj *tracedJudge) Complete(ctx context.Context, reqs []sdk.CompletionRequest) ([]sdk.CompletionResponse, error) {
	ctx, span := tj.start(ctx, "complete", len(reqs))
	defer span.End()
	resps, err := tj.j.Complete(ctx, reqs)
	var prompt, completion, cached, failed int
	for _, r := range resps {
		prompt += r.PromptTokens
		completion += r.CompletionTokens
		if r.Cached {
			cached++
		}
		if r.Error != nil {
			failed++
		}
	}
	span.SetAttributes(
		attribute.Int("scorekit.judge.prompt_tokens", prompt),
		attribute.Int("scorekit.judge.completion_tokens", completion),
		attribute.Int("scorekit.judge.cache_hits", cached),
		attribute.Int("scorekit.judge.failed", failed),
	)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	} else if failed > 0 {
		span.SetStatus(codes.Error, "some requests failed")
	}
	return resps, err
}

func (tj *tracedJudge) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, span := tj.start(ctx, "embed", len(texts))
	defer span.End()
	v, err := tj.j.Embed(ctx, texts)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	return v, err
}

type meteredJudge struct {
	tracedJudge
	m host.JudgeMeter
}

// MeterJudge meters one scoring call, as the wrapped judge does, and traces it.
func (mj *meteredJudge) MeterJudge(ctx context.Context, tenant, scorer string) (sdk.Judge, func(*sdk.Result)) {
	j, record := mj.m.MeterJudge(ctx, tenant, scorer)
	return &tracedJudge{t: mj.t, j: j}, record
}

// The broker is the judge whose metering a traced judge must keep: the host meters a
// scoring call through this method (host/pipeline.go), and a change of its signature
// must not silently turn metering off.
var (
	_ host.JudgeMeter = (*broker.Broker)(nil)
	_ host.JudgeMeter = (*meteredJudge)(nil)
)
