package host

import (
	"context"
	"encoding/json"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorekit/scorekit/sdk"
)

// observer is a fake scorer that says it observes its context.
type observer struct{ *fake }

func (observer) ObservesContext() bool { return true }

// settle waits until cond holds, for at most a minute: the test asserts states, not times.
func settle(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(time.Millisecond) {
		if time.Since(start) > time.Minute {
			t.Fatalf("%s never happened", what)
		}
	}
}

// TestOverdueCallKeepsItsSlot: a native scorer that ignores its context is answered
// timeout at the deadline, and its work, still running, keeps its slot: with
// WithMaxOverdue(1) the next call waits and is shed at its own deadline without starting.
// When the work returns, the slot frees and calls run again. Counters show every step.
func TestOverdueCallKeepsItsSlot(t *testing.T) {
	release := make(chan struct{})
	var first atomic.Bool
	r := newRig(t, info("stubborn"), func(ctx context.Context, _ sdk.Call) (sdk.Result, error) {
		if first.CompareAndSwap(false, true) {
			<-release // ignores ctx
		}
		return sdk.Scored(1, "done"), nil
	}, WithTimeout(20*time.Millisecond), WithMaxOverdue(1))
	s := r.open(t, OpenOptions{})
	ctx := context.Background()

	if res := s.Score(ctx, sdk.Run{Output: "x"}); res.Status != sdk.StatusFailed || res.Error.Code != sdk.CodeTimeout {
		t.Fatalf("first call: %s %+v, want failed timeout", res.Status, res.Error)
	}
	if st := r.host.Calls(); st.Running != 1 || st.Overdue != 1 || st.OverdueTotal != 1 {
		t.Fatalf("after the timeout: %+v, want 1 running, 1 overdue", st)
	}
	res := s.Score(ctx, sdk.Run{Output: "x"})
	if res.Status != sdk.StatusFailed || res.Error.Code != sdk.CodeTimeout {
		t.Fatalf("second call: %s %+v, want failed timeout while the slot is held", res.Status, res.Error)
	}
	if got := r.calls.Load(); got != 1 {
		t.Fatalf("the scorer was called %d times, want 1: the second call must not start", got)
	}
	if st := r.host.Calls(); st.Shed != 1 || st.Waited != 1 {
		t.Fatalf("after the shed call: %+v, want 1 waited, 1 shed", st)
	}
	close(release)
	settle(t, "the overdue call returning", func() bool { return r.host.Calls().Running == 0 })
	if st := r.host.Calls(); st.Overdue != 0 || st.OverdueFinished != 1 || st.OverdueStopped != 0 || st.OverdueSeconds <= 0 {
		t.Fatalf("after the work returned: %+v, want 0 overdue, 1 finished late", st)
	}
	if res := s.Score(ctx, sdk.Run{Output: "x"}); res.Status != sdk.StatusScored {
		t.Fatalf("third call: %s %+v, want scored once the slot is free", res.Status, res.Error)
	}
}

// TestMaxOverdueHoldsForCallsStartedTogether: 54 calls to a native scorer that ignores
// its context, started at once, leave at most WithMaxOverdue(2) of them running past
// their deadline: the others wait for one of those to return, and are shed at their own
// deadline without starting, however many arrive before any deadline passes.
func TestMaxOverdueHoldsForCallsStartedTogether(t *testing.T) {
	release := make(chan struct{})
	r := newRig(t, info("stubborn"), func(ctx context.Context, _ sdk.Call) (sdk.Result, error) {
		<-release // ignores ctx
		return sdk.Scored(1, "done"), nil
	}, WithTimeout(50*time.Millisecond), WithMaxOverdue(2))
	s := r.open(t, OpenOptions{})
	var wg sync.WaitGroup
	for range 54 {
		wg.Go(func() {
			if res := s.Score(context.Background(), sdk.Run{Output: "x"}); res.Status != sdk.StatusFailed || res.Error.Code != sdk.CodeTimeout {
				t.Errorf("call: %s %+v, want failed timeout", res.Status, res.Error)
			}
		})
	}
	wg.Wait()
	st := r.host.Calls()
	if got := r.calls.Load(); got > 2 || st.Overdue > 2 || st.Shed != 54-uint64(got) {
		t.Fatalf("%d calls started, %+v; want at most 2 running past their deadline and the rest shed", got, st)
	}
	close(release)
	settle(t, "the overdue calls returning", func() bool { return r.host.Calls().Running == 0 })
	if res := s.Score(context.Background(), sdk.Run{Output: "x"}); res.Status != sdk.StatusScored {
		t.Fatalf("after they returned: %s %+v, want scored", res.Status, res.Error)
	}
}

// TestMaxCallsHoldsSlotsUntilReturn: WithMaxCalls(1) lets one call run; another waits for
// it and starts when it returns (allowed), or is shed at its deadline (denied).
func TestMaxCallsHoldsSlotsUntilReturn(t *testing.T) {
	gate := make(chan struct{})
	started := make(chan struct{}, 2)
	r := newRig(t, info("gated"), func(ctx context.Context, _ sdk.Call) (sdk.Result, error) {
		started <- struct{}{}
		select {
		case <-gate:
			return sdk.Scored(1, "done"), nil
		case <-ctx.Done():
			return sdk.Result{}, ctx.Err()
		}
	}, WithTimeout(time.Minute), WithMaxCalls(1))
	s := r.open(t, OpenOptions{})
	firstDone := make(chan sdk.Result, 1)
	go func() { firstDone <- s.Score(context.Background(), sdk.Run{Output: "x"}) }()
	<-started

	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if res := s.Score(short, sdk.Run{Output: "x"}); res.Status != sdk.StatusFailed || res.Error.Code != sdk.CodeTimeout {
		t.Fatalf("denied: %s %+v, want failed timeout while the only slot is taken", res.Status, res.Error)
	}
	secondDone := make(chan sdk.Result, 1)
	go func() { secondDone <- s.Score(context.Background(), sdk.Run{Output: "x"}) }()
	settle(t, "the third call waiting", func() bool { return r.host.Calls().Waited == 2 })
	gate <- struct{}{} // the first call returns
	if res := <-firstDone; res.Status != sdk.StatusScored {
		t.Fatalf("first call: %s", res.Status)
	}
	<-started
	gate <- struct{}{}
	if res := <-secondDone; res.Status != sdk.StatusScored {
		t.Fatalf("allowed: %s %+v, want scored after waiting for the slot", res.Status, res.Error)
	}
	if st := r.host.Calls(); st.Started != 2 || st.Shed != 1 || st.Running != 0 {
		t.Fatalf("counters %+v, want 2 started, 1 shed, none running", st)
	}
}

// TestObserverRunsInlineAndStops: a scorer that observes its context runs on the caller's
// goroutine (no goroutine is left at any point) and stops at the deadline; the call counts
// as overdue and stopped, and nothing runs afterwards.
func TestObserverRunsInlineAndStops(t *testing.T) {
	var goroutines atomic.Int64
	var calls atomic.Int32
	var cfg json.RawMessage
	f := &fake{info: info("spinner"), config: &cfg, calls: &calls, score: func(ctx context.Context, _ sdk.Call) (sdk.Result, error) {
		goroutines.Store(int64(runtime.NumGoroutine()))
		for i := 0; ; i++ {
			if i%1024 == 0 && ctx.Err() != nil {
				return sdk.Result{}, ctx.Err()
			}
		}
	}}
	reg := NewRegistry()
	if err := reg.Register(Native(func() sdk.Scorer { return observer{f} }), false); err != nil {
		t.Fatal(err)
	}
	h := New(reg, WithTimeout(20*time.Millisecond), WithLogger(slog.New(slog.DiscardHandler)))
	s, err := h.Open(context.Background(), "spinner", OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	res := s.Score(context.Background(), sdk.Run{Output: "x"})
	if res.Status != sdk.StatusFailed || res.Error.Code != sdk.CodeTimeout {
		t.Fatalf("%s %+v, want failed timeout", res.Status, res.Error)
	}
	if g := goroutines.Load(); g != int64(before) {
		t.Fatalf("%d goroutines while scoring, %d before: the call did not run inline", g, before)
	}
	if st := h.Calls(); st.Running != 0 || st.Overdue != 0 || st.OverdueStopped != 1 || st.OverdueFinished != 0 {
		t.Fatalf("counters %+v, want nothing running and one call stopped on its deadline", st)
	}
}
