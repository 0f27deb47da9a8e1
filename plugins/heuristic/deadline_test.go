package heuristic_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/sizematrix"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// watched hides a scorer's ObservesContext, so the host runs it on a goroutine of its own
// and answers at the deadline while the work goes on: the path a third-party scorer takes.
type watched struct{ s sdk.Scorer }

func (w watched) Info() sdk.Info { return w.s.Info() }
func (w watched) Score(ctx context.Context, c sdk.Call) (sdk.Result, error) {
	return w.s.Score(ctx, c)
}

// TestTimedOutCallLeavesNoWork: a built-in scorer called with a 1 MiB run under a 1 ms
// deadline is answered timeout, and its work stops on the context instead of running to
// the end: the host counts it stopped (never finished late), nothing stays running, and the
// goroutine count returns to where it was. Both ways a host calls a scorer are checked:
// inline (the built-ins observe their context) and on a watched goroutine.
func TestTimedOutCallLeavesNoWork(t *testing.T) {
	var big sdk.Run
	for _, c := range sizematrix.Runs(1 << 20) {
		if c.Kind == "different" {
			big = c.Run
		}
	}
	// The scorers whose work on 1 MiB is long enough (tens of milliseconds) to be sure to
	// outlast a 1 ms deadline; the linear ones finish in a few and look at the context
	// between their passes.
	for _, f := range []func() sdk.Scorer{heuristic.NewLevenshtein, heuristic.NewTextualDifference,
		heuristic.NewListContains, heuristic.NewCompleteness} {
		name := f().Info().Name
		for _, inline := range []bool{true, false} {
			factory, mode := f, "inline"
			if !inline {
				factory, mode = func() sdk.Scorer { return watched{f()} }, "watched"
			}
			t.Run(name+"/"+mode, func(t *testing.T) {
				reg := host.NewRegistry()
				if err := reg.Register(host.Native(factory), false); err != nil {
					t.Fatal(err)
				}
				h := host.New(reg, host.WithTimeout(time.Millisecond), host.WithLogger(slog.New(slog.DiscardHandler)))
				s, err := h.Open(context.Background(), name, host.OpenOptions{Config: json.RawMessage(`{}`)})
				if err != nil {
					t.Fatal(err)
				}
				runtime.GC()
				before := runtime.NumGoroutine()
				res := s.Score(context.Background(), big)
				if res.Status != sdk.StatusFailed || res.Error.Code != sdk.CodeTimeout {
					t.Fatalf("%s %+v, want failed timeout under a 1 ms deadline", res.Status, res.Error)
				}
				for start := time.Now(); h.Calls().Running > 0 || runtime.NumGoroutine() > before; time.Sleep(time.Millisecond) {
					if time.Since(start) > time.Minute {
						t.Fatalf("work left behind: %+v, %d goroutines (%d before)", h.Calls(), runtime.NumGoroutine(), before)
					}
				}
				st := h.Calls()
				if st.OverdueStopped != 1 || st.OverdueFinished != 0 {
					t.Fatalf("counters %+v: the scorer did not stop on its context", st)
				}
			})
		}
	}
}
