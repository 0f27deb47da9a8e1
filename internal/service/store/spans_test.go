package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service/store"
)

// TestOpenSpans: kept spans are the tenant's alone, kept once per (trace, span), read
// until they expire, kept open while their trace gets spans, counted in bytes, and
// deleted once expired.
func TestOpenSpans(t *testing.T) {
	databases(t, func(t *testing.T, dsn string) {
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

// TestKeptSpans: one read gives a request's traces' kept spans (bodies only of the traces
// asked for, with when they expire) and the traces whose runs were made, the tenant's
// alone, on both databases.
func TestKeptSpans(t *testing.T) {
	databases(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		s := open(t, dsn)
		a, _ := s.CreateTenant(ctx, "a", store.Policy{})
		b, _ := s.CreateTenant(ctx, "b", store.Policy{})
		now := time.Now()
		hour, soon := now.Add(time.Hour), now.Add(time.Minute)
		if err := s.PutOpenSpans(ctx, a.ID, []store.OpenSpan{
			{TraceID: "t1", SpanID: "s1", ParentSpanID: "s2", Span: []byte("body1")},
			{TraceID: "t1", SpanID: "s2", Agent: true, Span: []byte{}},
			{TraceID: "t2", SpanID: "s3", Span: []byte("body3")},
		}, hour); err != nil {
			t.Fatal(err)
		}
		if err := s.PutOpenSpans(ctx, a.ID, []store.OpenSpan{{TraceID: "t4", SpanID: "s4", Span: []byte("body4")}}, soon); err != nil {
			t.Fatal(err)
		}
		if err := s.PutOpenSpans(ctx, b.ID, []store.OpenSpan{{TraceID: "t1", SpanID: "s9", Span: []byte("b's")}}, hour); err != nil {
			t.Fatal(err)
		}
		// t2 and t3 (which keeps no span) had their runs made; t1 is open.
		for _, id := range []string{"t2", "t3"} {
			if ok, err := s.ClaimTrace(ctx, a.ID, id, now, hour); !ok || err != nil {
				t.Fatalf("claim %s: %v, %v", id, ok, err)
			}
		}
		if err := s.TouchOpenTraces(ctx, a.ID, []store.TraceTouch{{TraceID: "t1", Rooted: true}}, now, hour); err != nil {
			t.Fatal(err)
		}
		reads := []store.TraceRead{{TraceID: "t1", Bodies: true}, {TraceID: "t2"}, {TraceID: "t3"}, {TraceID: "t4", Bodies: true}, {TraceID: "t5"}}
		got, done, err := s.KeptSpans(ctx, a.ID, reads, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(done) != 2 || !done["t2"] || !done["t3"] {
			t.Errorf("done %v; want t2 and t3", done)
		}
		bySpan := map[string]store.OpenSpan{}
		for _, o := range got {
			bySpan[o.TraceID+"/"+o.SpanID] = o
		}
		if len(got) != 4 {
			t.Fatalf("kept %+v; want a's four spans", got)
		}
		for key, w := range map[string]struct {
			body    string
			nilBody bool
			agent   bool
			parent  string
			expires time.Time
		}{
			"t1/s1": {body: "body1", parent: "s2", expires: hour},
			"t1/s2": {agent: true, expires: hour},
			"t2/s3": {nilBody: true, expires: hour}, // not asked for
			"t4/s4": {body: "body4", expires: soon},
		} {
			o, ok := bySpan[key]
			switch {
			case !ok:
				t.Errorf("%s not read", key)
			case w.nilBody && o.Span != nil, string(o.Span) != w.body, o.Agent != w.agent, o.ParentSpanID != w.parent:
				t.Errorf("%s: %+v (span %q); want %+v", key, o, o.Span, w)
			case o.ExpiresAt.Sub(w.expires).Abs() > time.Millisecond:
				t.Errorf("%s: expires %v; want %v", key, o.ExpiresAt, w.expires)
			}
		}
		// What has expired is not read.
		if got, _, _ := s.KeptSpans(ctx, a.ID, reads, now.Add(2*time.Minute)); len(got) != 3 {
			t.Errorf("after two minutes: %+v; want t4's span gone", got)
		}
		// s1 went into the run of an agent span that arrived (s5): s1 keeps its row, its
		// parent and its window without its body, s5 is kept as ids until the new end.
		later := now.Add(2 * time.Hour)
		if err := s.KeepSpanIDs(ctx, a.ID, []store.OpenSpan{bySpan["t1/s1"], {TraceID: "t1", SpanID: "s5", Agent: true}}, later); err != nil {
			t.Fatal(err)
		}
		got, _, _ = s.KeptSpans(ctx, a.ID, []store.TraceRead{{TraceID: "t1", Bodies: true}}, now)
		bySpan = map[string]store.OpenSpan{}
		for _, o := range got {
			bySpan[o.SpanID] = o
		}
		if s1 := bySpan["s1"]; len(s1.Span) != 0 || s1.ParentSpanID != "s2" || s1.ExpiresAt.Sub(hour).Abs() > time.Millisecond {
			t.Errorf("s1 once in a run: %+v; want its ids and window without its body", s1)
		}
		if s5 := bySpan["s5"]; !s5.Agent || len(s5.Span) != 0 || s5.ExpiresAt.Sub(later).Abs() > time.Millisecond {
			t.Errorf("agent span s5: %+v; want kept as ids until %v", s5, later)
		}
		if n, err := s.OpenSpanBytes(ctx, a.ID, now); err != nil || n != int64(len("body3")+len("body4")) {
			t.Errorf("room taken: %d, %v; want t2's and t4's bodies alone", n, err)
		}
	})
}
