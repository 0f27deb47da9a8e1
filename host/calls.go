package host

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// WithMaxCalls caps the scorer calls the host runs at once, across scorers and tenants.
// A call holds its slot until its backend has really returned: a call answered with
// timeout keeps its slot while its work goes on, so abandoned work cannot pile up beyond
// the cap. A call beyond it waits for a slot within its own deadline. Optional. Default is
// 0: no cap on calls in progress (WithMaxOverdue still applies).
func WithMaxCalls(n int) Option { return func(h *Host) { h.calls.maxCalls = n } }

// WithMaxOverdue caps the calls whose caller has had its answer (timeout or canceled) while
// their backend still runs: a native scorer that ignores its context goes on until it
// returns, and Go cannot stop it. So that work left behind never takes more than n cores,
// even when many calls start before any deadline passes, at most n calls of native
// scorers that do not observe their context (ContextObserver) run at once, and while n
// calls of any backend are overdue, new calls wait (within their own deadline) for one of
// them to return. WASM and process plugins are stopped by their runtime at the deadline
// and are not held to the first cap. Optional. Default is runtime.GOMAXPROCS(0) when the
// host is made; a value below 1 means no cap.
func WithMaxOverdue(n int) Option { return func(h *Host) { h.calls.maxOverdue = n } }

// ContextObserver is implemented by a backend, or a native scorer, that returns promptly
// once its context is done: it looks at the context in every loop that can run long, as
// the built-in scorers do. The host calls such a backend on the caller's goroutine, with no
// watchdog goroutine and no channel, and its deadline still stops the work. A backend
// without it runs on a goroutine of its own, and at the deadline the host answers timeout
// while the work goes on, counted in [CallStats.Overdue].
type ContextObserver interface {
	ObservesContext() bool
}

// CallStats counts a host's scorer calls, for metrics: what runs now, and what ran after
// its deadline.
type CallStats struct {
	// Running is the number of backend calls in progress, overdue ones included.
	Running int
	// Overdue is the number of backend calls still running after their caller was
	// answered timeout or canceled.
	Overdue int
	// Started counts backend calls started.
	Started uint64
	// Waited counts calls that waited for a slot (WithMaxCalls, WithMaxOverdue) before
	// their backend started; Shed counts those whose deadline passed while they waited,
	// so no work was started for them.
	Waited, Shed uint64
	// OverdueTotal counts calls still running when their caller was answered.
	OverdueTotal uint64
	// OverdueStopped counts overdue calls whose backend then stopped on its context
	// (returned an error); OverdueFinished those that ran to the end regardless.
	OverdueStopped, OverdueFinished uint64
	// OverdueSeconds is the time backends of overdue calls ran past their answer, summed
	// over calls that have returned.
	OverdueSeconds float64
}

// Calls returns the host's call counters.
func (h *Host) Calls() CallStats {
	c := h.calls
	c.mu.Lock()
	defer c.mu.Unlock()
	return CallStats{
		Running:         c.running,
		Overdue:         c.overdue,
		Started:         c.started,
		Waited:          c.waited,
		Shed:            c.shed,
		OverdueTotal:    c.overdueTotal,
		OverdueStopped:  c.stopped,
		OverdueFinished: c.finished,
		OverdueSeconds:  time.Duration(c.overdueNanos).Seconds(),
	}
}

// calls holds the slots of a host's scorer calls and their counters.
type calls struct {
	maxCalls, maxOverdue int

	mu      sync.Mutex
	running int
	overdue int
	// unstoppable counts running calls of native scorers that ignore their context.
	unstoppable int
	changed     chan struct{} // closed when a slot frees while a call waits; nil when none waits
	started     uint64
	waited      uint64
	shed        uint64
	stopped     uint64
	finished    uint64

	overdueTotal uint64
	overdueNanos int64
}

func newCalls() *calls { return &calls{maxOverdue: runtime.GOMAXPROCS(0)} }

func (c *calls) admit(unstoppable bool) bool {
	return (c.maxCalls <= 0 || c.running < c.maxCalls) && (c.maxOverdue <= 0 || c.overdue < c.maxOverdue &&
		(!unstoppable || c.unstoppable < c.maxOverdue))
}

// take counts an admitted call. c.mu is held.
func (c *calls) take(unstoppable bool) {
	c.running++
	c.started++
	if unstoppable {
		c.unstoppable++
	}
}

// acquire takes a slot for a call, waiting until one frees or ctx is done. unstoppable
// says the call's backend is native code that ignores its context (WithMaxOverdue).
func (c *calls) acquire(ctx context.Context, unstoppable bool) error {
	c.mu.Lock()
	if c.admit(unstoppable) {
		c.take(unstoppable)
		c.mu.Unlock()
		return nil
	}
	c.waited++
	for {
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			c.mu.Lock()
			c.shed++
			c.mu.Unlock()
			return ctx.Err()
		}
		c.mu.Lock()
		if c.admit(unstoppable) {
			c.take(unstoppable)
			c.mu.Unlock()
			return nil
		}
	}
}

// call is one backend call's progress: running, then done, or overdue (its caller was
// answered) and then done.
type call struct {
	state       atomic.Int32
	answered    time.Time // when an overdue call's caller was answered
	unstoppable bool      // acquired as unstoppable
}

const (
	callRunning int32 = iota
	callOverdue
	callDone
)

// abandon marks a running call overdue as its caller is answered. It reports false when
// the backend returned first.
func (c *calls) abandon(k *call) bool {
	k.answered = time.Now()
	if !k.state.CompareAndSwap(callRunning, callOverdue) {
		return false
	}
	c.mu.Lock()
	c.overdue++
	c.overdueTotal++
	c.mu.Unlock()
	return true
}

// release frees the call's slot once its backend has returned, with failed telling whether
// the backend returned an error.
func (c *calls) release(k *call, failed bool) {
	prev := callRunning
	if k != nil {
		prev = k.state.Swap(callDone)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev == callOverdue {
		c.overdue--
		c.overdueNanos += int64(time.Since(k.answered))
		c.overdueEnded(failed)
	}
	if k != nil && k.unstoppable {
		c.unstoppable--
	}
	c.freeLocked()
}

// releaseInline frees the slot of a call that ran on its caller's goroutine. A call that
// returned after its deadline counts as overdue for the time it ran past it.
func (c *calls) releaseInline(ctx context.Context, failed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ctx.Err() != nil {
		c.overdueTotal++
		if d, ok := ctx.Deadline(); ok && time.Now().After(d) {
			c.overdueNanos += int64(time.Since(d))
		}
		c.overdueEnded(failed)
	}
	c.freeLocked()
}

// overdueEnded counts how an overdue call ended: stopped by an error, or finished. c.mu is
// held.
func (c *calls) overdueEnded(failed bool) {
	if failed {
		c.stopped++
	} else {
		c.finished++
	}
}

// freeLocked returns a slot and wakes the calls waiting for one. c.mu is held.
func (c *calls) freeLocked() {
	c.running--
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}
