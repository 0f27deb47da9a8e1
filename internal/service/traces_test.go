package service_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/redact"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// traceOf builds a request of spans of one trace: each with its id, its parent's (0 for
// none), name, operation (none for "") and an output message of size bytes (none for -1).
type spanSpec struct {
	id, parent byte
	name, op   string
	size       int
}

func traceOf(trace byte, specs ...spanSpec) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "svc")
	ss := rs.ScopeSpans().AppendEmpty()
	for _, sp := range specs {
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(pcommon.TraceID{trace, 1})
		s.SetSpanID(pcommon.SpanID{trace, sp.id})
		if sp.parent != 0 {
			s.SetParentSpanID(pcommon.SpanID{trace, sp.parent})
		}
		s.SetName(sp.name)
		if sp.op != "" {
			s.Attributes().PutStr("gen_ai.operation.name", sp.op)
		}
		if sp.size >= 0 {
			s.Attributes().PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"`+strings.Repeat("x", sp.size)+`"}]}]`)
		}
	}
	return td
}

// capService is a service on dsn that keeps at most capBytes of open spans a tenant, with
// a tenant acme.
func capService(t *testing.T, dsn string, capBytes int64) (*service.Service, store.Tenant) {
	t.Helper()
	ctx := context.Background()
	svc, err := service.Open(ctx, service.Config{DB: dsn, Host: host.New(servicetest.Registry(t, nil)), MaxOpenSpanBytes: capBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(ctx) })
	tn, err := svc.CreateTenant(ctx, "acme", store.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return svc, tn
}

// TestIngestTracesKeepsWithinBounds: spans waiting for their agent span are kept up to
// the tenant's cap in bytes, and those beyond it are rejected with the reason; spans of
// traces without a GenAI span are taken and not kept.
func TestIngestTracesKeepsWithinBounds(t *testing.T) {
	ctx := context.Background()
	svc, tn := capService(t, filepath.Join(t.TempDir(), "scorekit.db"), 4000)
	// A web request's trace: nothing to keep.
	res, err := svc.IngestTraces(ctx, tn, traceOf(1, spanSpec{1, 0, "GET /", "", 10}, spanSpec{2, 1, "SELECT", "", 10}))
	if err != nil || res.Kept != 0 || res.Rejected != 0 || res.Spans != 2 {
		t.Fatalf("plain trace: %+v, %v", res, err)
	}
	// A model call waits for its agent; the next ones fill the cap and are refused.
	res, err = svc.IngestTraces(ctx, tn, traceOf(2, spanSpec{2, 1, "chat", "chat", 1500}))
	if err != nil || res.Kept != 1 || res.Rejected != 0 {
		t.Fatalf("first model call: %+v, %v", res, err)
	}
	res, err = svc.IngestTraces(ctx, tn, traceOf(3, spanSpec{2, 1, "chat", "chat", 1500}, spanSpec{3, 1, "chat", "chat", 1500}))
	if err != nil || res.Kept != 1 || res.Rejected != 1 || !strings.Contains(res.Message(), "keeps at most 4000 bytes of spans and log records of open traces") {
		t.Fatalf("over the cap: %+v, %v", res, err)
	}
	// The agent span of trace 2 arrives: its run is made from the kept model call.
	res, err = svc.IngestTraces(ctx, tn, traceOf(2, spanSpec{1, 0, "invoke_agent helper", "invoke_agent", -1}))
	if err != nil || res.Runs.Stored != 1 || res.Rejected != 0 {
		t.Fatalf("agent span: %+v, %v", res, err)
	}
	rv, err := svc.Run(ctx, tn, res.Runs.Runs[0].ID, false)
	if err != nil || rv.Agent != "helper" || !strings.Contains(string(rv.Run), `"output":"`+strings.Repeat("x", 1500)+`"`) {
		t.Fatalf("the run: %+v, %v", rv, err)
	}
	// The model call went into the run: its room is free again.
	res, err = svc.IngestTraces(ctx, tn, traceOf(4, spanSpec{2, 1, "chat", "chat", 1500}))
	if err != nil || res.Kept != 1 || res.Rejected != 0 {
		t.Fatalf("after the run was made: %+v, %v", res, err)
	}
}

// Requests that arrive together keep no more than the tenant's cap between them: before,
// each read the room left before any stored its spans, and 40 requests of 1.7 KB kept
// 51 KB against a cap of 8 KB.
func TestConcurrentRequestsKeepWithinTheCap(t *testing.T) {
	const cap, requests = 8000, 40
	servicetest.Backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		svc, tn := capService(t, dsn, cap)
		var (
			wg             sync.WaitGroup
			kept, rejected atomic.Int64
			start          = make(chan struct{})
		)
		for i := range requests {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				res, err := svc.IngestTraces(ctx, tn, traceOf(byte(10+i), spanSpec{2, 1, "chat", "chat", 1500}))
				if err != nil {
					t.Error(err)
					return
				}
				kept.Add(int64(res.Kept))
				rejected.Add(int64(res.Rejected))
			}()
		}
		close(start)
		wg.Wait()
		st, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		n, err := st.OpenSpanBytes(ctx, tn.ID, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if n > cap || kept.Load() == 0 || kept.Load()+rejected.Load() != requests {
			t.Fatalf("%d bytes kept by %d requests (%d refused); want at most %d, each request's span kept or refused", n, kept.Load(), rejected.Load(), cap)
		}
	})
}

// redactingService is a service on SQLite with a tenant whose rules redact e-mail
// addresses.
func redactingService(t *testing.T) (*service.Service, store.Tenant) {
	t.Helper()
	ctx := context.Background()
	svc, err := service.Open(ctx, service.Config{DB: filepath.Join(t.TempDir(), "scorekit.db"), Host: host.New(servicetest.Registry(t, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close(ctx) })
	tn, err := svc.CreateTenant(ctx, "acme", store.Policy{Redact: redact.Config{Kinds: []string{redact.Email}}})
	if err != nil {
		t.Fatal(err)
	}
	return svc, tn
}

// A run made from OTLP spans is redacted like any other, and once deleted it does not
// come back from the same batch sent again, whether the service still remembers its
// spans or has forgotten them (then the tombstone stops it).
func TestTracesRedactedAndDeletedStayDeleted(t *testing.T) {
	ctx := context.Background()
	svc, tn := redactingService(t)
	batch := func() ptrace.Traces {
		td := traceOf(5, spanSpec{1, 0, "invoke_agent helper", "invoke_agent", -1}, spanSpec{2, 1, "chat", "chat", -1})
		sp := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1)
		sp.Attributes().PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"Write to ann@example.com"}]}]`)
		return td
	}
	res, err := svc.IngestTraces(ctx, tn, batch())
	if err != nil || res.Runs.Stored != 1 || res.Runs.Redacted != 1 {
		t.Fatalf("ingest: %+v, %v", res, err)
	}
	id := res.Runs.Runs[0].ID
	rv, err := svc.Run(ctx, tn, id, false)
	if err != nil || strings.Contains(string(rv.Run), "ann@example.com") || rv.Redactions["email"] != 1 {
		t.Fatalf("the run: %s %v, %v", rv.Run, rv.Redactions, err)
	}
	if _, err := svc.DeleteRun(ctx, tn, "test", id); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		forget bool
	}{{"spans remembered", false}, {"spans forgotten", true}} {
		if c.forget {
			if _, err := svc.Store().DeleteExpiredSpans(ctx, time.Now().Add(365*24*time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
		res, err := svc.IngestTraces(ctx, tn, batch())
		if err != nil || res.Runs.Stored != 0 || (c.forget && res.Runs.Deleted != 1) {
			t.Fatalf("%s: sent again: %+v, %v", c.name, res, err)
		}
		if _, err := svc.Run(ctx, tn, id, false); err == nil {
			t.Fatalf("%s: the deleted run is back", c.name)
		}
	}
}

// A span that waits for its trace's agent span is stored, so it is redacted before it is:
// its messages, its events' attributes and its status message reach the store redacted,
// and what was replaced counts for the run it joins when the agent span arrives.
func TestWaitingSpansRedactedBeforeStored(t *testing.T) {
	ctx := context.Background()
	svc, tn := redactingService(t)
	child := traceOf(6, spanSpec{2, 1, "chat", "chat", -1}, spanSpec{3, 1, "execute_tool lookup", "execute_tool", -1})
	sp := child.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	sp.Attributes().PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"Sent to ann@example.com"}]}]`)
	sp.Events().AppendEmpty().Attributes().PutStr("note", "cc bob@example.com")
	sp.Status().SetMessage("bounced: carol@example.com")
	// A sender's own counts under the service's attribute are not carried, on a span
	// with something to redact or with nothing.
	sp.Attributes().PutStr("scorekit.redacted", `{"email":100}`)
	child.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(1).Attributes().PutStr("scorekit.redacted", `{"email":100}`)
	res, err := svc.IngestTraces(ctx, tn, child)
	if err != nil || res.Kept != 2 {
		t.Fatalf("the model call: %+v, %v", res, err)
	}
	kept, err := svc.Store().OpenSpans(ctx, tn.ID, []string{sp.TraceID().String()}, time.Now(), true)
	if err != nil || len(kept) != 2 {
		t.Fatalf("kept spans: %v, %v", kept, err)
	}
	for _, k := range kept {
		for _, who := range []string{"ann@", "bob@", "carol@"} {
			if strings.Contains(string(k.Span), who) {
				t.Errorf("the stored span %s holds %q unredacted", k.SpanID, who)
			}
		}
	}
	res, err = svc.IngestTraces(ctx, tn, traceOf(6, spanSpec{1, 0, "invoke_agent helper", "invoke_agent", -1}))
	if err != nil || res.Runs.Stored != 1 || res.Runs.Redacted != 1 {
		t.Fatalf("the agent span: %+v, %v", res, err)
	}
	rv, err := svc.Run(ctx, tn, res.Runs.Runs[0].ID, false)
	if err != nil || rv.Agent != "helper" {
		t.Fatalf("the run: %+v, %v", rv, err)
	}
	if strings.Contains(string(rv.Run), "@example.com") || !strings.Contains(string(rv.Run), "Sent to [redacted:email]") {
		t.Errorf("the run: %s", rv.Run)
	}
	if strings.Contains(string(rv.Run), "scorekit.redacted") {
		t.Errorf("the run shows the span's redaction counts: %s", rv.Run)
	}
	if got := rv.Redactions["email"]; got != 3 {
		t.Errorf("the run counts %d e-mail addresses redacted; want 3 (message, event, status; not the sender's 100)", got)
	}
}
