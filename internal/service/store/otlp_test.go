package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service/store"
)

// TestOpenLogsAndTraces: kept log records are the tenant's alone, kept once per key (a
// resend keeps nothing twice), counted in bytes until their run empties them; a trace is
// due once a root came and it went quiet, or its window ends, and one claim of it wins;
// counters add up and keep the last trace ids.
func TestOpenLogsAndTraces(t *testing.T) {
	databases(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		a, _ := s.CreateTenant(ctx, "a", store.Policy{})
		b, _ := s.CreateTenant(ctx, "b", store.Policy{})
		now := time.Now()
		hour := now.Add(time.Hour)
		logs := []store.OpenLog{
			{TraceID: "t1", SpanID: "s1", EventName: "gen_ai.user.message", TimeNanos: 5, BodyHash: "h1", Record: []byte("0123456789")},
			{TraceID: "t1", SpanID: "s1", EventName: "gen_ai.choice", TimeNanos: 6, BodyHash: "h2", Record: []byte("01234")},
		}
		for range 2 {
			if err := s.PutOpenLogs(ctx, a.ID, logs, hour); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.OpenLogs(ctx, a.ID, []string{"t1"}, now, true)
		if err != nil || len(got) != 2 || string(got[0].Record)+string(got[1].Record) != "012345678901234" && string(got[1].Record)+string(got[0].Record) != "012345678901234" {
			t.Fatalf("kept %+v, %v", got, err)
		}
		if other, _ := s.OpenLogs(ctx, b.ID, []string{"t1"}, now, true); len(other) != 0 {
			t.Fatalf("tenant b reads a's records: %+v", other)
		}
		if n, err := s.OpenLogBytes(ctx, a.ID, now); err != nil || n != 15 {
			t.Fatalf("bytes %d, %v", n, err)
		}
		if _, n, _ := s.Waiting(ctx, a.ID, now); n != 2 {
			t.Fatalf("waiting records %d", n)
		}
		if err := s.DropLogRecords(ctx, a.ID, []string{"t1/s1"}); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.OpenLogBytes(ctx, a.ID, now); n != 0 {
			t.Fatalf("bytes after the run %d", n)
		}
		if keys, _ := s.OpenLogs(ctx, a.ID, []string{"t1"}, now, false); len(keys) != 2 {
			t.Fatalf("keys after the run: %+v", keys)
		}

		// t1 rooted, quiet; t2 only a span waiting, whose window ends.
		if err := s.TouchOpenTraces(ctx, a.ID, []store.TraceTouch{{TraceID: "t1", Rooted: true}}, now, hour); err != nil {
			t.Fatal(err)
		}
		if err := s.PutOpenSpans(ctx, a.ID, []store.OpenSpan{{TraceID: "t2", SpanID: "s9", ParentSpanID: "s8", Span: []byte("x")}}, hour); err != nil {
			t.Fatal(err)
		}
		if err := s.TouchOpenTraces(ctx, a.ID, []store.TraceTouch{{TraceID: "t1"}}, now, hour); err != nil {
			t.Fatal(err)
		}
		due, err := s.DueTraces(ctx, now, now, 10)
		if err != nil || len(due) != 1 || due[0].TraceID != "t1" || due[0].Ended {
			t.Fatalf("due %+v, %v; want t1, which has its root", due, err)
		}
		if due, _ := s.DueTraces(ctx, now.Add(-time.Second), now, 10); len(due) != 0 {
			t.Fatalf("due while not quiet: %+v", due)
		}
		if due, _ := s.DueTraces(ctx, now.Add(-time.Second), hour.Add(time.Second), 10); len(due) != 1 || !due[0].Ended || due[0].TraceID != "t2" {
			t.Fatalf("due at the window's end: %+v", due)
		}
		for _, id := range []string{"t1", "t2"} {
			if ok, err := s.ClaimTrace(ctx, a.ID, id, now, hour); !ok || err != nil {
				t.Fatalf("claim %s: %v, %v", id, ok, err)
			}
			if ok, _ := s.ClaimTrace(ctx, a.ID, id, now, hour); ok {
				t.Fatalf("%s claimed twice", id)
			}
		}
		if done, _ := s.DoneTraces(ctx, a.ID, []string{"t1", "t2", "t3"}); !done["t1"] || !done["t2"] || done["t3"] {
			t.Fatalf("done %v", done)
		}
		if due, _ := s.DueTraces(ctx, now, hour.Add(time.Second), 10); len(due) != 0 {
			t.Fatalf("due once claimed: %+v", due)
		}
		if _, err := s.DeleteExpiredSpans(ctx, hour.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteExpiredOTLP(ctx, hour.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if due, _ := s.DueTraces(ctx, hour, hour.Add(time.Hour), 10); len(due) != 0 {
			t.Fatalf("after the window: %+v", due)
		}

		for _, c := range [][]store.IngestCount{{{Name: "spans", Count: 3}, {Name: "dropped:late", Count: 1, Examples: []string{"t1"}}},
			{{Name: "spans", Count: 2}, {Name: "dropped:late", Count: 1}}} {
			if err := s.AddIngestCounts(ctx, a.ID, c); err != nil {
				t.Fatal(err)
			}
		}
		counts, err := s.IngestCounts(ctx, a.ID)
		if err != nil || len(counts) != 2 || counts[0].Name != "dropped:late" || counts[0].Count != 2 || len(counts[0].Examples) != 1 || counts[1].Count != 5 {
			t.Fatalf("counts %+v, %v", counts, err)
		}
	})
}
