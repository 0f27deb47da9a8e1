package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorekit/scorekit/sdk"
)

// batchPlugin is a plugin whose backend scores batches (a BatchBackend, as a WASM guest
// of ABI v2 is), so that ScoreBatch's batch path is the one taken.
type batchPlugin struct {
	info  sdk.Info
	calls int // runs the backend was given
}

func (p *batchPlugin) Info() sdk.Info  { return p.info }
func (p *batchPlugin) Runtime() string { return RuntimeWASM }
func (p *batchPlugin) Close(context.Context) error {
	return nil
}

func (p *batchPlugin) Open(context.Context, Tenant, json.RawMessage) (Backend, error) {
	return batchBackend{p}, nil
}

type batchBackend struct{ p *batchPlugin }

func (b batchBackend) Score(_ context.Context, run *sdk.Run, _ sdk.Judge) (sdk.Result, error) {
	b.p.calls++
	return scored(1), nil
}

func (b batchBackend) ScoreBatch(_ context.Context, items []BatchItem, _ time.Duration) {
	for i := range items {
		b.p.calls++
		items[i].Result = scored(1)
	}
}

func (b batchBackend) Close(context.Context) error { return nil }

var _ BatchBackend = batchBackend{}

// scorers opens n native fakes and n batch scorers (2n in all) on one host.
func checkScorers(t *testing.T, n int) ([]*Scorer, []*batchPlugin) {
	t.Helper()
	reg := NewRegistry()
	h := New(reg, WithLogger(slog.New(slog.DiscardHandler)))
	var out []*Scorer
	var batches []*batchPlugin
	for i := range n {
		f := &fake{info: info(fmt.Sprint("native", i)), score: fixed(scored(1)), config: new(json.RawMessage), calls: new(atomic.Int32)}
		if err := reg.Register(Native(func() sdk.Scorer { return f }), false); err != nil {
			t.Fatal(err)
		}
		s, err := h.Open(context.Background(), f.info.Name, OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
		p := &batchPlugin{info: info(fmt.Sprint("batch", i))}
		if s, err = h.OpenPlugin(context.Background(), p, OpenOptions{}); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
		batches = append(batches, p)
	}
	for _, s := range out {
		t.Cleanup(func() { s.Close(context.Background()) })
	}
	return out, batches
}

// TestRunCheckedOnce: a run decoded as checked (DecodeCheckedRun) or checked in code
// (CheckRun) is checked once, however many scorers score it, one by one or in batches;
// a run handed to the scorers as an sdk.Run is checked by each of them again.
func TestRunCheckedOnce(t *testing.T) {
	const n = 3 // 2n scorers
	scorers, _ := checkScorers(t, n)
	line := []byte(`{"id":"r1","input":"q","output":"Paris [1].","context":["Paris is in France.",{"id":"b","text":"Lyon too."}]}`)
	ctx := context.Background()
	counted := func(t *testing.T, f func()) int64 {
		t.Helper()
		before := runChecks.Load()
		f()
		return runChecks.Load() - before
	}
	scoreAll := func(t *testing.T, score func(*Scorer) []sdk.Result) {
		t.Helper()
		for _, s := range scorers {
			for _, res := range score(s) {
				if res.Status != sdk.StatusScored {
					t.Fatalf("%s: %s %v", s.Info().Name, res.Status, res.Error)
				}
			}
		}
	}

	t.Run("decoded checked", func(t *testing.T) {
		if got := counted(t, func() {
			run, err := DecodeCheckedRun(line)
			if err != nil {
				t.Fatal(err)
			}
			if ids := []string{run.Run().Context[0].ID, run.Run().Context[1].ID}; ids[0] != "1" || ids[1] != "b" {
				t.Fatalf("passages numbered %v, want [1 b]", ids)
			}
			scoreAll(t, func(s *Scorer) []sdk.Result { return []sdk.Result{s.ScoreChecked(ctx, run)} })
			scoreAll(t, func(s *Scorer) []sdk.Result { return s.ScoreCheckedBatch(ctx, []CheckedRun{run, run, run}) })
		}); got != 1 {
			t.Errorf("a run decoded once and scored by %d scorers, one by one and in a batch, was checked %d times; want 1", 2*n, got)
		}
	})
	t.Run("checked in code", func(t *testing.T) {
		if got := counted(t, func() {
			run, err := CheckRun(sdk.Run{Input: "q", Output: "a", Context: []sdk.Passage{{Text: "p"}}})
			if err != nil {
				t.Fatal(err)
			}
			if id := run.Run().Context[0].ID; id != "1" {
				t.Fatalf("passage numbered %q, want 1", id)
			}
			scoreAll(t, func(s *Scorer) []sdk.Result { return s.ScoreCheckedBatch(ctx, []CheckedRun{run, run}) })
		}); got != 1 {
			t.Errorf("a run checked in code and scored by %d scorers was checked %d times; want 1", 2*n, got)
		}
	})
	t.Run("raw runs", func(t *testing.T) {
		// What the service and the command line did before runs were checked once: decode,
		// then every scorer checks the run again (N+1).
		if got := counted(t, func() {
			run, err := DecodeRun(line)
			if err != nil {
				t.Fatal(err)
			}
			scoreAll(t, func(s *Scorer) []sdk.Result { return []sdk.Result{s.Score(ctx, run)} })
		}); got != 2*n+1 {
			t.Errorf("a raw run scored by %d scorers was checked %d times; want %d (each scorer checks what it cannot trust)", 2*n, got, 2*n+1)
		}
		if got := counted(t, func() {
			run := sdk.Run{Output: "a"}
			scoreAll(t, func(s *Scorer) []sdk.Result { return s.ScoreBatch(ctx, []sdk.Run{run, run}) })
		}); got != 2*2*n {
			t.Errorf("two raw runs in a batch for %d scorers were checked %d times; want %d", 2*n, got, 2*2*n)
		}
	})
}

// TestRawInvalidRunFailedByEachScorer: an embedder that hands the host an invalid run of
// its own gets invalid_run from every scorer, one by one and in batches, and no scorer is
// called; the same run cannot be made a CheckedRun.
func TestRawInvalidRunFailedByEachScorer(t *testing.T) {
	scorers, batches := checkScorers(t, 2)
	bad := sdk.Run{Output: "x", Context: []sdk.Passage{{Text: "a"}, {ID: "d", Text: ""}}}
	good := sdk.Run{Output: "y"}
	ctx := context.Background()
	const msg = `context[1] (id "d") has empty text`
	invalid := func(s *Scorer, res sdk.Result) {
		t.Helper()
		if res.Status != sdk.StatusFailed || res.Error == nil || res.Error.Code != sdk.CodeInvalidRun || !strings.Contains(res.Error.Message, msg) {
			t.Errorf("%s: %s %v; want failed with invalid_run naming the passage", s.Info().Name, res.Status, res.Error)
		}
	}
	for _, s := range scorers {
		invalid(s, s.Score(ctx, bad))
		got := s.ScoreBatch(ctx, []sdk.Run{bad, good, bad})
		invalid(s, got[0])
		if got[1].Status != sdk.StatusScored {
			t.Errorf("%s: the valid run of the batch: %s %v", s.Info().Name, got[1].Status, got[1].Error)
		}
		invalid(s, got[2])
	}
	for _, p := range batches {
		if p.calls != 1 {
			t.Errorf("%s was given %d runs; want only the valid one", p.info.Name, p.calls)
		}
	}
	if _, err := CheckRun(bad); !errors.Is(err, sdk.ErrInvalidRun) {
		t.Errorf("CheckRun: %v; want an error wrapping sdk.ErrInvalidRun", err)
	}
	if _, err := DecodeCheckedRun([]byte(`{"output":"x","context":["a",{"id":"d","text":""}]}`)); !errors.Is(err, sdk.ErrInvalidRun) {
		t.Errorf("DecodeCheckedRun: %v; want an error wrapping sdk.ErrInvalidRun", err)
	}
}
