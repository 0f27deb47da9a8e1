package broker

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/scorekit/scorekit/internal/textkit"
	"github.com/scorekit/scorekit/sdk"
)

// do sends one request through the tenant's limits with retries. call makes one attempt
// and returns the tokens it used, or the error and the response headers. The returned
// error matches *sdk.Error with a code.
func (b *Broker) do(ctx context.Context, t *tenant, s sinks, c *call, d *dest, est int64, send func(context.Context) (int64, int64, http.Header, error)) error {
	limits, sem, limiter := t.admission()
	select {
	case sem <- struct{}{}:
		defer func() { <-sem }()
	case <-ctx.Done():
		return ctxErr(ctx)
	}
	if !t.budget.reserve(est) {
		return budgetErr(t, c)
	}
	s.call()
	for try := 0; ; try++ {
		if limiter != nil {
			if err := limiter.Wait(ctx); err != nil {
				t.budget.settle(est, 0)
				s.failure()
				if ctx.Err() != nil {
					return ctxErr(ctx)
				}
				return &batchErr{sdk.CodeTimeout, fmt.Sprintf("judge: tenant %q rate limit (%g requests/s) leaves no time before the call's deadline: %v; raise RequestsPerSecond or the scorer timeout", t.name, limits.RequestsPerSecond, err), err}
			}
		}
		var seen attempt
		actx, cancel := context.WithTimeout(withAttempt(ctx, &seen), b.cfg.RequestTimeout)
		prompt, completion, header, err := send(actx)
		attemptTimedOut := actx.Err() != nil
		cancel()
		if err == nil {
			t.budget.settle(est, prompt+completion)
			s.tokens(prompt, completion)
			return nil
		}
		if ctx.Err() != nil {
			t.budget.settle(est, 0)
			s.failure()
			return ctxErr(ctx)
		}
		if attemptTimedOut {
			t.budget.settle(est, 0)
			s.failure()
			return &batchErr{sdk.CodeTimeout, fmt.Sprintf("judge: request timed out after %v; raise the judge request timeout or use a faster model", b.cfg.RequestTimeout), err}
		}
		kind, after, msg := classify(err, header, &seen)
		msg = b.scrubText(msg)
		err = b.keyless(err)
		if kind == noRetry || try >= b.retries(kind) {
			t.budget.settle(est, 0)
			s.failure()
			if kind != noRetry {
				msg += fmt.Sprintf(" (gave up after %d %s)", try, plural(try, "retry", "retries"))
			}
			return &batchErr{sdk.CodeJudgeError, "judge: " + msg, err}
		}
		wait := b.backoff(try, after)
		if after > b.cfg.MaxRetryAfter {
			t.budget.settle(est, 0)
			s.failure()
			return &batchErr{sdk.CodeJudgeError, fmt.Sprintf("judge: %s; the endpoint asks to retry after %v, more than the %v allowed", msg, after, b.cfg.MaxRetryAfter), err}
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			t.budget.settle(est, 0)
			s.failure()
			return &batchErr{sdk.CodeTimeout, fmt.Sprintf("judge: %s; the retry wait of %v would pass the call's deadline", msg, wait.Round(time.Millisecond)), err}
		}
		s.retry()
		if err := b.sleep(ctx, wait); err != nil {
			t.budget.settle(est, 0)
			s.failure()
			return ctxErr(ctx)
		}
	}
}

// backoff is the wait before retry attempt+1: what Retry-After asks (plus up to 10%
// jitter so that a crowd does not come back at once), or exponential backoff with jitter
// in [d/2, d].
func (b *Broker) backoff(attempt int, after time.Duration) time.Duration {
	if after > 0 {
		return after + time.Duration(rand.Int64N(int64(after)/10+1))
	}
	d := b.cfg.BackoffBase << min(attempt, 30)
	if d > b.cfg.BackoffMax || d <= 0 {
		d = b.cfg.BackoffMax
	}
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// retryKind says how often a failed attempt may be retried.
type retryKind int

const (
	// noRetry: the same request will fail again (a 4xx, an answer over the size cap).
	noRetry retryKind = iota
	// retryOnce: the endpoint answered HTTP 2xx with a body that is not a completion. A
	// proxy may have mangled one answer, so one more attempt; an endpoint that does it
	// again is not going to stop, and every attempt may be billed.
	retryOnce
	// retryTransient: a 429, a 5xx or no answer at all; up to MaxRetries.
	retryTransient
)

// retries is how many retries a kind of failure gets.
func (b *Broker) retries(k retryKind) int {
	switch k {
	case retryOnce:
		return min(1, b.cfg.MaxRetries)
	case retryTransient:
		return b.cfg.MaxRetries
	}
	return 0
}

// classify says whether err is worth retrying, how long the endpoint asked to wait, and
// a message for people. a is what the transport saw of the attempt's response.
func classify(err error, header http.Header, a *attempt) (kind retryKind, after time.Duration, msg string) {
	status := 0
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	var big *tooLarge
	switch {
	case errors.As(err, &big):
		return noRetry, 0, big.Error()
	case errors.As(err, &apiErr):
		status = apiErr.HTTPStatusCode
		msg = fmt.Sprintf("endpoint answered HTTP %d: %s", status, apiErr.Message)
	case errors.As(err, &reqErr):
		status = reqErr.HTTPStatusCode
		msg = fmt.Sprintf("endpoint answered HTTP %d: %s", status, textkit.Clip(string(reqErr.Body), 300))
	case a != nil && a.status >= 200 && a.status < 300:
		return retryOnce, 0, fmt.Sprintf("the endpoint answered HTTP %d with a body that is not a completion (%v; it begins %q); "+
			"check that the judge URL is an OpenAI-compatible API (a base URL usually ends in /v1)", a.status, err, textkit.Clip(string(a.head), 120))
	default:
		// No HTTP status: the request did not get an answer (connection refused, reset).
		return retryTransient, 0, "request failed: " + err.Error()
	}
	after = retryAfter(header)
	switch {
	case status == http.StatusTooManyRequests || status >= 500:
		return retryTransient, after, msg
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return noRetry, 0, msg + "; check the API key (--judge-key-env) and organization"
	case status == http.StatusNotFound:
		return noRetry, 0, msg + "; check the judge URL and model name"
	default:
		return noRetry, 0, msg
	}
}

// retryAfter reads a Retry-After header: seconds (fractions allowed) or an HTTP date.
func retryAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second))
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0)
	}
	return 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
