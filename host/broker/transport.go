package broker

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// tooLarge is the error a capped body returns; it says the cap and how to change it.
type tooLarge struct{ max int64 }

func (e *tooLarge) Error() string {
	return fmt.Sprintf("the endpoint's answer is longer than the %s cap (MaxResponseBytes); a judge's answer is a few KB, "+
		"so the endpoint or a proxy in front of it is misbehaving: check the judge URL, or raise the cap if its answers really are this long", size(e.max))
}

func (e *tooLarge) Unwrap() error { return ErrResponseTooLarge }

func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d-byte", n)
}

// attempt is what the transport saw of one attempt's response, for classifying its error:
// a request that got an HTTP 200 whose body does not decode did not fail in transit.
type attempt struct {
	status int    // HTTP status of the response; 0 when none arrived
	head   []byte // the first bytes of its body, quoted in messages
}

type attemptKey struct{}

func withAttempt(ctx context.Context, a *attempt) context.Context {
	return context.WithValue(ctx, attemptKey{}, a)
}

// capTransport caps every response body at max bytes and records, for requests that carry
// an attempt, the status and the head of the body.
type capTransport struct {
	next http.RoundTripper
	max  int64
}

func (t *capTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	a, _ := r.Context().Value(attemptKey{}).(*attempt)
	if a != nil {
		a.status = resp.StatusCode
	}
	if resp.ContentLength > t.max {
		resp.Body.Close()
		return nil, &tooLarge{t.max}
	}
	resp.Body = &capBody{rc: resp.Body, left: t.max, max: t.max, a: a}
	return resp, nil
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the wrapped transport.
func (t *capTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// headBytes is how much of a body an attempt keeps for messages.
const headBytes = 200

// capBody reads at most max bytes of rc; past that, Read fails with *tooLarge.
type capBody struct {
	rc   io.ReadCloser
	left int64
	max  int64
	a    *attempt
}

func (b *capBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// The cap is reached: one more byte means the body is too long.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, &tooLarge{b.max}
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.a != nil && len(b.a.head) < headBytes {
		b.a.head = append(b.a.head, p[:min(n, headBytes-len(b.a.head))]...)
	}
	return n, err
}

func (b *capBody) Close() error { return b.rc.Close() }
