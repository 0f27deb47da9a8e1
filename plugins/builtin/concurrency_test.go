package builtin_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/plugins/builtin"
	"github.com/scorekit/scorekit/sdk"
)

// TestJudgeScorersWaitTogether holds the built-in judge scorers to what a worker needs of
// them: a call that waits on the judge does not hold one of the few slots the host keeps for
// native code that cannot be stopped (WithMaxOverdue, one per core by default). Before
// they said they observe their context, a worker on two cores made two judge calls at a
// time whatever its concurrency, and a chunk of an evaluation outlived its job timeout on
// every attempt. The figure is the judge's peak of requests in flight, not a timing.
func TestJudgeScorersWaitTogether(t *testing.T) {
	for _, name := range []string{"relevancy", "masis"} {
		t.Run(name, func(t *testing.T) { judgeCallsTogether(t, name) })
	}
}

func judgeCallsTogether(t *testing.T, name string) {
	// One judge per scorer, so the peak in flight is this scorer's own.
	srv := judgetest.New(
		judgetest.Rule{Match: "Decide whether what the agent produced", Reply: `{"reasoning": "it answers", "score": 0.9}`, Delay: 100 * time.Millisecond},
		judgetest.Rule{Match: "Evaluate the agent's answer", Reply: `{"faithfulness": null, "relevance": 0.9, "completeness": 0.8, "reasoning_quality": 0.8, "overall_score": 0.84, "improvement_suggestions": []}`, Delay: 100 * time.Millisecond},
	)
	defer srv.Close()
	b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge-test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	reg := host.NewRegistry()
	for _, f := range builtin.Factories() {
		if err := reg.Register(host.Native(f), false); err != nil {
			t.Fatal(err)
		}
	}
	const overdue, calls = 1, 8
	h := host.New(reg, host.WithLogger(slog.New(slog.DiscardHandler)), host.WithJudge(b), host.WithMaxOverdue(overdue))
	ctx := context.Background()
	s, err := h.Open(ctx, name, host.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := s.Score(ctx, sdk.Run{ID: fmt.Sprint(i), Input: fmt.Sprintf("What is %d + %d?", i, i), Output: fmt.Sprint(2 * i)})
			if res.Status != sdk.StatusScored {
				t.Errorf("run %d: %s %s", i, res.Status, res.Reason)
			}
		}()
	}
	wg.Wait()
	if n := srv.Calls(); n < calls {
		t.Fatalf("%d judge calls, want at least %d", n, calls)
	}
	if peak := srv.MaxInFlight(); peak <= overdue {
		t.Fatalf("at most %d judge call(s) in flight from %d concurrent %s calls: the scorer holds a slot kept for native code that cannot be stopped", peak, calls, name)
	}
}

// TestJudgeScorersObserveTheirContext: every built-in scorer that calls the judge says so
// to the host (host.ContextObserver), for the reason above; a new judge scorer without it
// fails here.
func TestJudgeScorersObserveTheirContext(t *testing.T) {
	for _, f := range builtin.Factories() {
		s := f()
		info := s.Info()
		if !info.Has(sdk.CapJudge) && !info.Has(sdk.CapEmbed) {
			continue
		}
		if o, ok := s.(host.ContextObserver); !ok || !o.ObservesContext() {
			t.Errorf("%s calls the judge but does not implement host.ContextObserver: its calls would hold the host's slots for unstoppable native code", info.Name)
		}
	}
}
