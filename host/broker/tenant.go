package broker

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/scorekit/scorekit/sdk"
)

// Usage is what judge requests cost.
type Usage struct {
	// Calls counts requests that reached the endpoint (a retried request counts once;
	// cache hits are not calls). An embeddings request is one call for all its texts.
	Calls int64 `json:"calls"`
	// CacheHits counts requests answered from the cache, and texts whose embedding was.
	CacheHits int64 `json:"cache_hits"`
	// Retries counts extra attempts after a 429, a 5xx or a network error.
	Retries int64 `json:"retries"`
	// Failures counts requests that failed after their retries.
	Failures int64 `json:"failures"`
	// PromptTokens and CompletionTokens are the endpoint's reported usage.
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// Tokens is PromptTokens plus CompletionTokens.
func (u Usage) Tokens() int64 { return u.PromptTokens + u.CompletionTokens }

// counters accumulate a Usage concurrently.
type counters struct {
	calls, hits, retries, failures, prompt, completion atomic.Int64
}

func (c *counters) usage() Usage {
	return Usage{
		Calls: c.calls.Load(), CacheHits: c.hits.Load(), Retries: c.retries.Load(),
		Failures: c.failures.Load(), PromptTokens: c.prompt.Load(), CompletionTokens: c.completion.Load(),
	}
}

// sinks are the counters one request is accounted to: the tenant's, the (tenant, scorer)
// pair's and, for a Meter, the call's.
type sinks []*counters

func (s sinks) call() { s.each(func(c *counters) { c.calls.Add(1) }) }
func (s sinks) hit(n int64) {
	s.each(func(c *counters) { c.hits.Add(n) })
}
func (s sinks) retry()   { s.each(func(c *counters) { c.retries.Add(1) }) }
func (s sinks) failure() { s.each(func(c *counters) { c.failures.Add(1) }) }
func (s sinks) tokens(prompt, completion int64) {
	s.each(func(c *counters) { c.prompt.Add(prompt); c.completion.Add(completion) })
}
func (s sinks) each(f func(*counters)) {
	for _, c := range s {
		f(c)
	}
}

// tenant holds one tenant's limits and accounting.
type tenant struct {
	name   string
	budget budget
	total  counters

	mu      sync.Mutex
	limits  Limits
	sem     chan struct{}
	limiter *rate.Limiter // nil: unlimited
	scorers map[string]*counters
}

func newTenant(name string, l Limits) *tenant {
	t := &tenant{name: name, scorers: map[string]*counters{}}
	t.budget.start = time.Now()
	t.set(l)
	return t
}

// set replaces the tenant's limits. Requests in flight keep the concurrency slot they hold
// (of the old semaphore), so for as long as they run the tenant may briefly have up to old
// plus new MaxConcurrency requests in flight; the rate limiter and the budget change at
// once, and tokens already spent stay spent.
func (t *tenant) set(l Limits) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sem == nil || cap(t.sem) != l.MaxConcurrency {
		t.sem = make(chan struct{}, l.MaxConcurrency)
	}
	switch {
	case l.RequestsPerSecond <= 0:
		t.limiter = nil
	case t.limiter == nil:
		t.limiter = rate.NewLimiter(rate.Limit(l.RequestsPerSecond), l.Burst)
	default:
		t.limiter.SetLimit(rate.Limit(l.RequestsPerSecond))
		t.limiter.SetBurst(l.Burst)
	}
	t.limits = l
	t.budget.configure(max(l.TokenBudget, 0), l.BudgetWindow)
}

// admission returns the tenant's current limits, semaphore and rate limiter. A request uses
// the ones it got for its whole life.
func (t *tenant) admission() (Limits, chan struct{}, *rate.Limiter) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.limits, t.sem, t.limiter
}

func (t *tenant) scorer(name string) *counters {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.scorers[name]
	if !ok {
		c = &counters{}
		t.scorers[name] = c
	}
	return c
}

// budget is a tenant's token budget: tokens used in the current window plus tokens
// reserved by requests in flight must stay within limit.
type budget struct {
	mu       sync.Mutex
	limit    int64         // 0: unlimited
	window   time.Duration // <= 0: no window, the broker's life
	start    time.Time     // when the current window began
	used     int64         // tokens the endpoint reported in the current window
	reserved int64         // estimates of the requests in flight
}

func (b *budget) configure(limit int64, window time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.limit, b.window = limit, window
}

// roll starts a new window when the current one is over. Reservations stay: their
// requests are still in flight.
func (b *budget) roll(now time.Time) {
	if b.window > 0 && now.Sub(b.start) >= b.window {
		b.start, b.used = now, 0
	}
}

// exhausted reports whether the current window's budget is spent.
func (b *budget) exhausted() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(time.Now())
	return b.limit > 0 && b.used+b.reserved >= b.limit
}

// reserve books est tokens against the budget; false when they do not fit. A request
// whose estimate alone exceeds the whole budget is still refused: it could never fit.
func (b *budget) reserve(est int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(time.Now())
	if b.limit > 0 && b.used+b.reserved+est > b.limit {
		return false
	}
	b.reserved += est
	return true
}

// settle replaces a reservation with what the request really cost.
func (b *budget) settle(est, actual int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reserved -= est
	b.used += actual
}

// state returns the tokens spent (and reserved) in the current window, the limit, and
// when the window ends (zero without a window).
func (b *budget) state() (spent, limit int64, resets time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(time.Now())
	if b.window > 0 {
		resets = b.start.Add(b.window)
	}
	return b.used + b.reserved, b.limit, resets
}

// call is what one scoring call (a Meter) holds beyond its counters: the answers it got
// fresh from the endpoint, which enter the cache only when the call's result shows they
// were usable, and the limits it hit.
type call struct {
	mu      sync.Mutex
	done    bool
	pending map[string]entry
	limits  []string // "name: message", each name once
}

// hold keeps e until the call is finished; after that it is dropped: an answer that
// arrives for a call already over (a scorer abandoned at its deadline) was never judged.
func (c *call) hold(key string, e entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return
	}
	if c.pending == nil {
		c.pending = map[string]entry{}
	}
	c.pending[key] = e
}

// hit records that the call ran into the limit name.
func (c *call) hit(name, msg string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range c.limits {
		if strings.HasPrefix(l, name+":") {
			return
		}
	}
	c.limits = append(c.limits, name+": "+msg)
}

// View is the broker as one (tenant, scorer) pair sees it: an sdk.Judge whose requests
// count against the tenant's limits and are accounted to the tenant and the scorer.
// Get one from [Broker.For]; it is safe for concurrent use.
type View struct {
	b     *Broker
	t     *tenant
	sinks sinks
	call  *call // nil for a long-lived View: answers are cached as they arrive
	route Route
}

var _ sdk.Judge = (*View)(nil)

// Complete runs reqs concurrently within the tenant's limits. See sdk.Judge.
func (v *View) Complete(ctx context.Context, reqs []sdk.CompletionRequest) ([]sdk.CompletionResponse, error) {
	return v.b.complete(ctx, v.t, v.sinks, v.call, v.route, reqs)
}

// Embed returns one vector per text. See sdk.Judge.
func (v *View) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return v.b.embed(ctx, v.t, v.sinks, v.call, texts)
}

// Meter is a View that also counts what one scoring call cost, so the host can put it in
// that call's Result.Telemetry, and that holds the answers it gets from the endpoint until
// the call's result shows they were usable ([Meter.Finish]). Get a fresh one per call from
// [Broker.Meter]; a Meter that is never finished caches nothing.
type Meter struct {
	View
	own counters
}

// Usage returns what the calls through m have cost so far.
func (m *Meter) Usage() Usage { return m.own.usage() }

// Record sets the judge fields of t (calls, cache hits, retries, tokens, the limits hit)
// from m. It sets rather than adds: the broker's count is authoritative over what a
// scorer reported.
func (m *Meter) Record(t *sdk.Telemetry) {
	u := m.Usage()
	t.JudgeCalls = int(u.Calls)
	t.CacheHits = int(u.CacheHits)
	t.Retries = int(u.Retries)
	t.PromptTokens = int(u.PromptTokens)
	t.CompletionTokens = int(u.CompletionTokens)
	m.call.mu.Lock()
	t.JudgeLimits = append([]string(nil), m.call.limits...)
	m.call.mu.Unlock()
}

// Finish ends the scoring call: it records the call's cost in res.Telemetry (see
// [Meter.Record]) and caches the answers the call got fresh from the endpoint, unless res
// shows that they were not usable: a result failed with judge_error (the scorer could not
// read the judge), invalid_result (the host rejected what the scorer made of it) or
// scorer_error. A rerun then asks the judge again instead of failing again from the cache.
// Answers of a call that timed out, was canceled or hit a limit are kept: they were paid
// for and nothing says they were bad. Later calls of Finish do nothing.
func (m *Meter) Finish(res *sdk.Result) {
	m.Record(&res.Telemetry)
	c := m.call
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		return
	}
	c.done = true
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	if res.Status == sdk.StatusFailed && res.Error != nil {
		switch res.Error.Code {
		case sdk.CodeJudgeError, sdk.CodeInvalidResult, sdk.CodeScorerError:
			return
		}
	}
	for k, e := range pending {
		m.b.store(k, e)
	}
}
