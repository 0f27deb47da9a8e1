// Package broker is the host's judge broker: the one place that talks to an LLM endpoint
// on behalf of scorers.
//
// A Broker speaks to any OpenAI-compatible endpoint (OpenAI, Azure OpenAI, vLLM, Ollama,
// LM Studio ...) through github.com/sashabaranov/go-openai and implements sdk.Judge. It
// runs a batch's requests concurrently within per-tenant limits (requests in flight,
// request rate, requests per batch, a token budget per window), retries 429s, 5xxs and
// network errors with exponential backoff and jitter (honouring Retry-After), retries an
// HTTP 200 whose body is not a completion at most once, caps the size of every answer,
// bounds each attempt with a timeout inside the call's deadline, and caches answers that
// parsed, keyed by the endpoint and the request as asked (in memory, and on disk when
// configured), so that re-scoring the same runs costs no calls. It accounts calls, cache
// hits, retries and tokens per tenant, per (tenant, scorer) and per scoring call.
//
// A request may name another model than the Config's, among those the operator allows
// (Config.Models), and may ask for structured output with a schema: the broker sends
// response_format json_schema, and a JSON object request to an endpoint that refuses it.
//
// [Broker.Preflight] proves the endpoint, the model and the key with one cheap request
// before any run is scored.
//
// Use [Broker.For] for a long-lived (tenant, scorer) view, and [Broker.Meter] for one
// scoring call whose cost goes into that call's Result.Telemetry.
package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/scorekit/scorekit/sdk"
)

// Errors callers branch on. A batch-level error from Complete or Embed wraps one of them
// and also matches *sdk.Error (errors.As), so sdk.FailedErr keeps its code.
var (
	// ErrPreflight is wrapped by every error Preflight returns.
	ErrPreflight = errors.New("judge preflight failed")
	// ErrResponseTooLarge: the endpoint's answer was longer than Config.MaxResponseBytes.
	// The request fails (judge_error) and is not retried.
	ErrResponseTooLarge = errors.New("judge answer over the size cap")
	// ErrBudgetExhausted: the tenant has spent its token budget for the current window.
	// Raise the tenant's TokenBudget or wait for the next window.
	ErrBudgetExhausted = errors.New("judge token budget exhausted")
	// ErrBatchTooLarge: one Complete or Embed call asked for more requests than the
	// tenant's MaxBatch. Nothing was sent.
	ErrBatchTooLarge = errors.New("judge batch over the cap")
	// ErrNoEmbeddingModel: Embed was called but Config.EmbeddingModel is empty.
	ErrNoEmbeddingModel = errors.New("no embedding model configured")
	// ErrClosed: the broker was closed.
	ErrClosed = errors.New("judge broker closed")
	// ErrTenantKey: the tenant's calls to an endpoint need its own key, and it has none
	// that can be used (none stored where the endpoint requires one, or one that could
	// not be opened). Nothing was sent.
	ErrTenantKey = errors.New("tenant's judge key unusable")
)

// Broker is the judge broker. It is safe for concurrent use.
type Broker struct {
	cfg Config
	// client is the default endpoint's, with the operator's key (Preflight's).
	client *openai.Client
	// targets are the endpoints tenants may choose, by name; order lists them, the
	// default first.
	targets map[string]*target
	order   []string
	cache   *cache
	log     *slog.Logger
	// sleep waits d or until ctx is done; tests replace it to observe backoff.
	sleep func(ctx context.Context, d time.Duration) error

	mu        sync.Mutex
	tenants   map[string]*tenant
	overrides map[string]Limits // per-tenant limits: Config.Tenants, then SetTenantLimits
	flights   map[string]*flight
	closed    bool
	// noSchema holds the (endpoint, model) pairs whose endpoint said it does not take
	// response_format json_schema: their requests ask for a JSON object from then on.
	noSchema map[string]bool
	// creds are tenants' own keys, by (tenant, endpoint).
	creds map[credKey]*cred
	// scrub replaces every key the broker holds in what it returns and stores (rescrub);
	// nil when it holds none.
	scrub atomic.Pointer[strings.Replacer]
}

var _ sdk.Judge = (*Broker)(nil)

// flight is a request in progress that identical concurrent requests wait for.
type flight struct {
	done chan struct{}
	resp sdk.CompletionResponse
}

// New returns a broker for cfg, or an error that names the field to fix.
func New(cfg Config) (*Broker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	// Every answer is read through the size cap, whatever client the caller gave.
	hc := *cfg.HTTPClient
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	hc.Transport = &capTransport{next: next, max: cfg.MaxResponseBytes}
	cfg.HTTPClient = &hc
	main := Endpoint{Name: DefaultEndpoint, BaseURL: cfg.BaseURL, Model: cfg.Model, Models: cfg.Models, APIKey: cfg.APIKey,
		APIType: cfg.APIType, APIVersion: cfg.APIVersion, Organization: cfg.Organization, AzureDeployments: cfg.AzureDeployments}
	targets := map[string]*target{}
	order := []string{}
	for _, e := range append([]Endpoint{main}, cfg.Endpoints...) {
		targets[e.Name] = &target{ep: e, client: newClient(e, e.APIKey, &hc)}
		order = append(order, e.Name)
	}
	c, err := newCache(cfg.CacheDir, cfg.CacheEntries)
	if err != nil {
		return nil, err
	}
	overrides := make(map[string]Limits, len(cfg.Tenants))
	for k, v := range cfg.Tenants {
		overrides[k] = v
	}
	b := &Broker{
		cfg:       cfg,
		client:    targets[DefaultEndpoint].client,
		targets:   targets,
		order:     order,
		cache:     c,
		log:       slog.Default(),
		sleep:     sleepCtx,
		tenants:   map[string]*tenant{},
		overrides: overrides,
		flights:   map[string]*flight{},
		noSchema:  map[string]bool{},
		creds:     map[credKey]*cred{},
	}
	b.rescrub()
	return b, nil
}

// store caches e under key; a disk write error is logged, the entry stays in memory.
func (b *Broker) store(key string, e entry) {
	if err := b.cache.put(key, e); err != nil {
		b.log.Warn("judge cache write failed", "err", err)
	}
}

// Config returns the broker's configuration with defaults filled in.
func (b *Broker) Config() Config { return b.cfg }

// Close stops the broker from taking new requests and drops idle connections. Requests
// in flight finish.
func (b *Broker) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.cfg.HTTPClient.CloseIdleConnections()
	return nil
}

func (b *Broker) tenant(name string) *tenant {
	if name == "" {
		name = DefaultTenant
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.tenants[name]
	if !ok {
		t = newTenant(name, b.cfg.resolve(b.overrides[name]))
		b.tenants[name] = t
	}
	return t
}

// SetTenantLimits sets or replaces the limits of tenant name while the broker runs: a
// service calls it when it learns a tenant's policy, and again when the policy changes.
// Zero fields take the Config's value, as in Config.Tenants; -1 makes TokenBudget or
// MaxBatch unlimited. The new limits apply to requests that start after the call. Tokens
// already spent in the current window stay spent, so lowering a budget below them stops
// the tenant until the window ends. An out-of-range field is an error naming it, and
// nothing changes.
func (b *Broker) SetTenantLimits(name string, l Limits) error {
	if err := l.check(); err != nil {
		return fmt.Errorf("broker: tenant %q: %w", name, err)
	}
	if name == "" {
		name = DefaultTenant
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.overrides[name] = l
	if t, ok := b.tenants[name]; ok {
		t.set(b.cfg.resolve(l))
	}
	return nil
}

// TenantLimits returns the limits in force for tenant name, defaults filled in (-1 for
// an unlimited TokenBudget or MaxBatch).
func (b *Broker) TenantLimits(name string) Limits {
	l, _, _ := b.tenant(name).admission()
	return l
}

// For returns the broker as tenant's scorer sees it: requests count against the tenant's
// limits and are accounted to the tenant and to (tenant, scorer).
func (b *Broker) For(tenant, scorer string) *View {
	t := b.tenant(tenant)
	return &View{b: b, t: t, sinks: sinks{&t.total, t.scorer(scorer)}}
}

// ForRoute is For with the tenant's requests sent along r.
func (b *Broker) ForRoute(tenant, scorer string, r Route) *View {
	v := b.For(tenant, scorer)
	v.route = r
	return v
}

// Meter returns a judge for one scoring call: like For, and it also counts what this
// call costs. The host gives it to the scorer and, after the call, copies its counts into
// the result with [Meter.Record].
func (b *Broker) Meter(tenant, scorer string) *Meter {
	return b.MeterRoute(tenant, scorer, Route{})
}

// MeterRoute is Meter with the call's requests sent along r.
func (b *Broker) MeterRoute(tenant, scorer string, r Route) *Meter {
	t := b.tenant(tenant)
	m := &Meter{View: View{b: b, t: t, call: &call{}, route: r}}
	m.sinks = sinks{&t.total, t.scorer(scorer), &m.own}
	return m
}

// MeterJudge is Meter for callers that must not depend on this package: it returns the
// call's judge and a function that finishes the call with its result ([Meter.Finish]:
// the cost goes into the result's telemetry, and the answers into the cache unless the
// result shows they were unusable). The call's requests go along the route ctx carries
// ([WithRoute]). The host finds it with a type assertion on an interface of this one
// method.
func (b *Broker) MeterJudge(ctx context.Context, tenant, scorer string) (sdk.Judge, func(*sdk.Result)) {
	m := b.MeterRoute(tenant, scorer, RouteFrom(ctx))
	return m, m.Finish
}

// Usage returns what tenant has spent so far.
func (b *Broker) Usage(tenant string) Usage { return b.tenant(tenant).total.usage() }

// ScorerUsage returns what scorer has spent so far for tenant.
func (b *Broker) ScorerUsage(tenant, scorer string) Usage {
	return b.tenant(tenant).scorer(scorer).usage()
}

// Complete runs reqs for the default tenant. See sdk.Judge.
func (b *Broker) Complete(ctx context.Context, reqs []sdk.CompletionRequest) ([]sdk.CompletionResponse, error) {
	return b.For(DefaultTenant, "").Complete(ctx, reqs)
}

// Embed embeds texts for the default tenant. See sdk.Judge.
func (b *Broker) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return b.For(DefaultTenant, "").Embed(ctx, texts)
}

// batchErr is a batch-level error: it wraps a sentinel for errors.Is and reads as an
// *sdk.Error for errors.As, so the code survives sdk.FailedErr.
type batchErr struct {
	code, msg string
	err       error
}

func (e *batchErr) Error() string { return e.msg }
func (e *batchErr) Unwrap() error { return e.err }

// As lets errors.As(err, **sdk.Error) find the code and message.
func (e *batchErr) As(target any) bool {
	if p, ok := target.(**sdk.Error); ok {
		*p = &sdk.Error{Code: e.code, Message: e.msg}
		return true
	}
	return false
}

// checkBatch refuses a batch of n requests (or texts) as a whole: the broker is closed,
// the call is over, the batch is over the tenant's cap, or its budget is spent.
func (b *Broker) checkBatch(ctx context.Context, t *tenant, c *call, n int, what string) error {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	l, _, _ := t.admission()
	switch {
	case closed:
		return &batchErr{sdk.CodeUnavailable, "judge: broker closed", ErrClosed}
	case ctx.Err() != nil:
		return ctxErr(ctx)
	case l.MaxBatch > 0 && n > l.MaxBatch:
		msg := fmt.Sprintf("a batch of %d %s is over the cap of %d per call (MaxBatch) for tenant %q; nothing was sent. "+
			"Send fewer per call, or raise the cap (the command line's --judge-max-batch or judge.max_batch; -1 is unlimited)", n, what, l.MaxBatch, t.name)
		c.hit("max_batch", msg)
		return &batchErr{sdk.CodeLimitExceeded, "judge: " + msg, ErrBatchTooLarge}
	case t.budget.exhausted():
		return budgetErr(t, c)
	}
	return nil
}

// budgetErr is the error of a tenant whose budget is spent; it records the hit on c.
func budgetErr(t *tenant, c *call) error {
	spent, limit, resets := t.budget.state()
	when := "for the broker's life"
	if !resets.IsZero() {
		when = "until " + resets.UTC().Format(time.RFC3339)
	}
	msg := fmt.Sprintf("tenant %q has spent its token budget (%d of %d tokens; no more judge requests %s). "+
		"Raise the tenant's TokenBudget (the command line's --judge-token-budget or judge.token_budget; -1 is unlimited)", t.name, spent, limit, when)
	c.hit("token_budget", msg)
	return &batchErr{sdk.CodeLimitExceeded, "judge: " + ErrBudgetExhausted.Error() + ": " + msg, ErrBudgetExhausted}
}

func ctxErr(ctx context.Context) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return &batchErr{sdk.CodeTimeout, "judge: the call's deadline passed before the judge answered; raise the scorer timeout", err}
	}
	return &batchErr{sdk.CodeCanceled, "judge: call canceled", err}
}
