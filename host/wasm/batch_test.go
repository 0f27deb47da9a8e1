package wasm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// outcome is what a run came to, in the terms both ABI paths must agree on.
func outcome(res sdk.Result, err error) string {
	if err != nil {
		var se *sdk.Error
		if errors.As(err, &se) {
			return "error " + se.Code + ": " + firstLine(se.Message)
		}
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%s %v %q", res.Status, res.Value(), res.Reason)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// TestBatch holds a batch of ABI v2 to what ABI v1 does with the same runs called one by
// one: each run's result, and each failure (a spin past the deadline, a panic, an exit,
// a reply over the size limit, an endless sleep) failing that run alone, with the same
// code and message, the runs after it scored on another instance.
func TestBatch(t *testing.T) {
	inputs := []string{"a", "spin", "b", "panic", "c", "huge", "d", "exit", "e", "sleep", "f", "random", "g"}
	lim := host.Limits{TimeoutMS: 300, MaxResultBytes: 1 << 20}
	ctx := context.Background()
	runs := make([]sdk.Run, len(inputs))
	for i, in := range inputs {
		runs[i] = sdk.Run{Input: in, Output: strings.Repeat("word ", i)}
	}
	v1 := open(t, newEngineWith(t, Options{abiV1: true}), goGuest(t, "goguest", goGuestPkg), lim, "tester", "t")
	var want []string
	for i := range runs {
		want = append(want, outcome(v1.Score(ctx, &runs[i], nil)))
	}
	if v1.p.a.batch {
		t.Fatal("the engine with abiV1 calls the guest in batches")
	}
	v2 := open(t, newEngine(t, nil), goGuest(t, "goguest", goGuestPkg), lim, "tester", "t")
	if !v2.p.a.batch {
		t.Fatal("the Go guest does not speak ABI v2")
	}
	items := make([]host.BatchItem, len(runs))
	for i := range runs {
		items[i].Run = &runs[i]
	}
	v2.ScoreBatch(ctx, items, 0)
	for i, it := range items {
		got := outcome(it.Result, it.Err)
		if inputs[i] == "random" { // 16 random bytes: equal only in shape
			got, want[i] = got[:len(got)-34], want[i][:len(want[i])-34]
		}
		if got != want[i] {
			t.Errorf("run %d (%s): batch %s\nwant (one call each) %s", i, inputs[i], got, want[i])
		}
		if it.Elapsed <= 0 {
			t.Errorf("run %d (%s): no elapsed time", i, inputs[i])
		}
	}
	// Five failures, each discarding the instance it ran on, as one call each would.
	if st := v2.Stats(); st.Created != 6 || st.Discarded != 5 {
		t.Errorf("pool created %d and discarded %d instances, want 6 and 5 (the first and one after each failure)", st.Created, st.Discarded)
	}
}

// TestBatchRunDeadline: each run of a batch has the whole deadline from its own start,
// so runs that each take most of it all score, busy or asleep; a run over it fails with
// timeout and the next one scores.
func TestBatchRunDeadline(t *testing.T) {
	b := open(t, newEngine(t, nil), goGuest(t, "goguest", goGuestPkg), host.Limits{TimeoutMS: 400}, "tester", "t")
	inputs := []string{"nap", "churn", "nap", "churn", "spin", "nap", "a"}
	items := make([]host.BatchItem, len(inputs))
	for i, in := range inputs {
		items[i].Run = &sdk.Run{Input: in, Output: "one"}
	}
	// The four runs before the spin take 600 ms together, past a deadline for the batch.
	b.ScoreBatch(context.Background(), items, 0)
	for i, it := range items {
		if inputs[i] == "spin" {
			var se *sdk.Error
			if !errors.As(it.Err, &se) || se.Code != sdk.CodeTimeout {
				t.Errorf("run %d (spin): %v, want timeout", i, it.Err)
			}
			continue
		}
		if it.Err != nil || it.Result.Status != sdk.StatusScored {
			t.Errorf("run %d (%s): %v %v, want scored within its own deadline", i, inputs[i], it.Result.Status, it.Err)
		}
	}

	t.Run("the caller's timeout", func(t *testing.T) {
		// The host's timeout, below the manifest's, fails the run with host.ErrRunDeadline
		// for the pipeline to name.
		items := []host.BatchItem{{Run: &sdk.Run{Input: "a", Output: "x"}}, {Run: &sdk.Run{Input: "spin", Output: "x"}}, {Run: &sdk.Run{Input: "b", Output: "x"}}}
		b.ScoreBatch(context.Background(), items, 200*time.Millisecond)
		if items[0].Err != nil || items[2].Err != nil || !errors.Is(items[1].Err, host.ErrRunDeadline) {
			t.Fatalf("errors %v, %v, %v; want the spin alone past host.ErrRunDeadline", items[0].Err, items[1].Err, items[2].Err)
		}
	})
	t.Run("canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		items := []host.BatchItem{{Run: &sdk.Run{Input: "a", Output: "x"}}, {Run: &sdk.Run{Input: "spin", Output: "x"}}, {Run: &sdk.Run{Input: "b", Output: "x"}}}
		b.ScoreBatch(ctx, items, 0)
		for i, code := range []string{"", sdk.CodeCanceled, sdk.CodeCanceled} {
			var se *sdk.Error
			if code == "" && items[i].Err != nil || code != "" && (!errors.As(items[i].Err, &se) || se.Code != code) {
				t.Errorf("run %d: %v, want %q", i, items[i].Err, code)
			}
		}
	})
}

// TestBatchOutputPerRun: stdout, stderr and log lines are capped per run in a batch, as
// per call: a run flooding its output leaves the next run's log line whole.
func TestBatchOutputPerRun(t *testing.T) {
	var log records
	e := newEngineWith(t, Options{Logger: slog.New(&log)})
	b := open(t, e, goGuest(t, "goguest", goGuestPkg), host.Limits{}, "tester", "t")
	inputs := []string{"flood", "log", "flood", "a"}
	items := make([]host.BatchItem, len(inputs))
	for i, in := range inputs {
		items[i].Run = &sdk.Run{Input: in, Output: "x"}
	}
	b.ScoreBatch(context.Background(), items, 0)
	for i, it := range items {
		if it.Err != nil {
			t.Fatalf("run %d: %v", i, it.Err)
		}
	}
	var recs []map[string]slog.Value
	for _, r := range log.find("guest output") {
		if r["bytes"].Int64() > 1<<10 { // the log line's run writes its line alone
			recs = append(recs, r)
		}
	}
	if len(recs) != 2 {
		t.Fatalf("%d guest output records of floods, want one per flooding run", len(recs))
	}
	for _, r := range recs {
		if r["bytes"].Int64() != 10<<20 || !r["truncated"].Bool() || r["kept"].Int64() != 16<<10 {
			t.Errorf("logged bytes=%v kept=%v truncated=%v; want each run's 10 MiB, its own 16 KiB kept", r["bytes"], r["kept"], r["truncated"])
		}
	}
	if got := log.find("tester logs answer=42"); len(got) != 1 {
		t.Fatalf("the log line after a flood: %d records, want 1", len(got))
	}
}

// TestBatchMaxCalls: an instance serves limits.max_calls runs, batch or not.
func TestBatchMaxCalls(t *testing.T) {
	b := open(t, newEngine(t, nil), goGuest(t, "goguest", goGuestPkg), host.Limits{MaxCalls: 3}, "tester", "t")
	items := make([]host.BatchItem, 10)
	for i := range items {
		items[i].Run = &sdk.Run{Input: "a", Output: "x"}
	}
	b.ScoreBatch(context.Background(), items, 0)
	for i, it := range items {
		if it.Err != nil {
			t.Fatalf("run %d: %v", i, it.Err)
		}
	}
	// Open's configure counts no call; 10 runs at 3 a instance take 4 instances.
	if st := b.Stats(); st.Created != 4 {
		t.Fatalf("created %d instances for 10 runs at max_calls 3, want 4", st.Created)
	}
}

// TestBatchJudge: the judge reaches each run of a batch that has one, and a batch mixing
// runs with and without a judge gives each what one call would.
func TestBatchJudge(t *testing.T) {
	b := open(t, newEngine(t, nil), goGuest(t, "goguest", goGuestPkg), host.Limits{}, "asker", "t")
	items := []host.BatchItem{
		{Run: &sdk.Run{Input: "q1", Output: "o"}, Judge: fakeJudge{}},
		{Run: &sdk.Run{Input: "q2", Output: "o"}, Judge: fakeJudge{}},
		{Run: &sdk.Run{Input: "q3", Output: "o"}},
		{Run: &sdk.Run{Input: "q4", Output: "o"}, Judge: fakeJudge{}},
	}
	b.ScoreBatch(context.Background(), items, 0)
	for i, it := range items {
		if it.Err != nil {
			t.Fatalf("run %d: %v", i, it.Err)
		}
		if it.Judge == nil {
			if it.Result.Status != sdk.StatusSkipped {
				t.Errorf("run %d without a judge: %s, want skipped", i, it.Result.Status)
			}
			continue
		}
		if want := "echo: " + it.Run.Input; !strings.HasPrefix(it.Result.Reason, want) {
			t.Errorf("run %d: reason %q, want it to start with %q", i, it.Result.Reason, want)
		}
	}
}

// TestBatchV1Guest: a guest of ABI v1 (the C example as built before v2, committed in
// testdata) serves batches one call per run, with the results of the C example of ABI v2
// scoring the same runs in one batch.
func TestBatchV1Guest(t *testing.T) {
	e := newEngine(t, nil)
	v1 := open(t, e, mustAbs(t, filepath.Join("testdata", "c_contains_v1.wasm")), host.Limits{}, "c_contains", "t")
	v2 := open(t, e, cGuest(t), host.Limits{}, "c_contains", "t")
	if v1.p.a.batch || !v2.p.a.batch {
		t.Fatalf("batches: v1 guest %v, v2 guest %v; want false, true", v1.p.a.batch, v2.p.a.batch)
	}
	runs := []sdk.Run{{Output: "It is PARIS.", Expected: "Paris"}, {Output: "Lyon", Expected: "Paris"}, {Output: "x"},
		{Output: "caf\u00e9 \"x\"", Expected: "\"X\""}, {Output: "no", Expected: "yes", Metadata: map[string]any{"output": "yes"}}}
	batch := func(b *backend) []string {
		items := make([]host.BatchItem, len(runs))
		for i := range runs {
			items[i].Run = &runs[i]
		}
		b.ScoreBatch(context.Background(), items, 0)
		out := make([]string, len(items))
		for i, it := range items {
			out[i] = outcome(it.Result, it.Err)
		}
		return out
	}
	got1, got2 := batch(v1), batch(v2)
	for i := range runs {
		want := outcome(v1.Score(context.Background(), &runs[i], nil))
		if got1[i] != want || got2[i] != want {
			t.Errorf("run %d: v1 batch %s, v2 batch %s, one call %s", i, got1[i], got2[i], want)
		}
	}
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
