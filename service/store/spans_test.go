package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/scorekit/scorekit/service/store"
)

// TestOpenSpans: kept spans are the tenant's alone, kept once per (trace, span), read
// until they expire, kept open while their trace gets spans, counted in bytes, and
// deleted once expired.
func TestOpenSpans(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		a, err := s.CreateTenant(ctx, "a", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.CreateTenant(ctx, "b", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		hour := now.Add(time.Hour)
		spans := []store.OpenSpan{
			{TraceID: "t1", SpanID: "s1", ParentSpanID: "s2", Span: []byte("0123456789")},
			{TraceID: "t1", SpanID: "s2", Agent: true, Span: []byte("01234")},
			{TraceID: "t2", SpanID: "s3", Span: []byte("012")},
		}
		if err := s.PutOpenSpans(ctx, a.ID, spans, hour); err != nil {
			t.Fatal(err)
		}
		// Sent again, with other content: kept once, as first kept.
		if err := s.PutOpenSpans(ctx, a.ID, []store.OpenSpan{{TraceID: "t1", SpanID: "s1", Span: []byte("x")}}, hour); err != nil {
			t.Fatal(err)
		}
		got, err := s.OpenSpans(ctx, a.ID, []string{"t1"}, now, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].TraceID != "t1" {
			t.Fatalf("trace t1: %+v", got)
		}
		for _, o := range got {
			if o.SpanID == "s1" && (string(o.Span) != "0123456789" || o.ParentSpanID != "s2" || o.Agent) ||
				o.SpanID == "s2" && (!o.Agent || string(o.Span) != "01234") {
				t.Fatalf("kept %+v", o)
			}
		}
		if bare, _ := s.OpenSpans(ctx, a.ID, []string{"t1", "t2"}, now, false); len(bare) != 3 || bare[0].Span != nil {
			t.Fatalf("without the spans: %+v", bare)
		}
		if other, _ := s.OpenSpans(ctx, b.ID, []string{"t1", "t2"}, now, true); len(other) != 0 {
			t.Fatalf("tenant b reads a's spans: %+v", other)
		}
		if n, err := s.OpenSpanBytes(ctx, a.ID, now); err != nil || n != 18 {
			t.Fatalf("bytes %d, %v; want 18", n, err)
		}
		// s1 went into a run: its body goes, its ids stay.
		if err := s.DropSpanBodies(ctx, a.ID, []store.OpenSpan{{TraceID: "t1", SpanID: "s1"}}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.OpenSpanBytes(ctx, a.ID, now); err != nil || n != 8 {
			t.Fatalf("bytes after a body went: %d, %v; want 8", n, err)
		}
		if got, _ := s.OpenSpans(ctx, a.ID, []string{"t1"}, now, true); len(got) != 2 {
			t.Fatalf("after a body went: %+v", got)
		}
		// t1 gets a span: it stays open past the hour; t2 does not.
		if err := s.KeepOpenTraces(ctx, a.ID, []string{"t1"}, now.Add(2*time.Hour), now.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}
		// Asked to move only ends before the hour, it leaves t1's (two hours) alone.
		if err := s.KeepOpenTraces(ctx, a.ID, []string{"t1"}, now.Add(4*time.Hour), hour); err != nil {
			t.Fatal(err)
		}
		later := now.Add(90 * time.Minute)
		if got, _ := s.OpenSpans(ctx, a.ID, []string{"t1", "t2"}, later, false); len(got) != 2 || got[0].TraceID != "t1" || got[1].TraceID != "t1" {
			t.Fatalf("after 90 minutes: %+v; want t1's two spans", got)
		}
		if n, _ := s.OpenSpanBytes(ctx, a.ID, later); n != 5 {
			t.Fatalf("bytes after 90 minutes: %d; want 5", n)
		}
		if n, err := s.DeleteExpiredSpans(ctx, later); err != nil || n != 1 {
			t.Fatalf("deleted %d, %v; want t2's one span", n, err)
		}
		if n, err := s.DeleteExpiredSpans(ctx, now.Add(3*time.Hour)); err != nil || n != 2 {
			t.Fatalf("deleted %d, %v; want t1's two spans", n, err)
		}
	})
}
