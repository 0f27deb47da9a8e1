package service_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// waitingBatch is n model-call spans of n traces numbered from first, none with its agent
// span: every one waits for it, and is kept if the tenant has room.
func waitingBatch(first, n, size int) ptrace.Traces {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	for i := range n {
		t := first + i
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(pcommon.TraceID{byte(t >> 24), byte(t >> 16), byte(t >> 8), byte(t), 9})
		s.SetSpanID(pcommon.SpanID{2})
		s.SetParentSpanID(pcommon.SpanID{1})
		s.SetName("chat")
		s.Attributes().PutStr("gen_ai.operation.name", "chat")
		s.Attributes().PutStr("gen_ai.output.messages", strings.Repeat("x", size))
	}
	return td
}

// TestRefusedSpansTakeNoWriter: spans refused because their tenant's open spans are full
// are refused before anything is written, without the tenant's turn to keep spans and,
// on SQLite, without the store's one writer connection, which every tenant's writes wait
// for: three concurrent batches of a tenant over its cap (17 MB, refused in full) held
// the writer 20 s each, and another tenant's import of runs waited 10 s behind them. Here
// the test holds the tenant's turn (and on SQLite the writer) while three such batches
// come: they are answered, every span refused, before it lets go; then another
// tenant's import is stored.
func TestRefusedSpansTakeNoWriter(t *testing.T) {
	const capBytes = 16 << 10
	servicetest.Backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		svc, tn := capService(t, dsn, capBytes)
		for i := 0; ; i++ { // fill acme's open spans
			res, err := svc.IngestTraces(ctx, tn, waitingBatch(i*10, 10, 1000))
			if err != nil {
				t.Fatal(err)
			}
			if res.Rejected > 0 {
				break
			}
		}
		other, err := svc.CreateTenant(ctx, "other", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}

		held, release, holder := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		var once sync.Once
		let := func() { once.Do(func() { close(release) }) }
		go func() {
			holder <- svc.Store().WithOpenSpans(ctx, tn.ID, time.Now(), func(*store.Tx, int64) error {
				close(held)
				<-release
				return nil
			})
		}()
		<-held
		// Only so that a batch that waits for the turn fails the test rather than hangs it.
		watchdog := time.AfterFunc(time.Minute, let)
		var (
			wg      sync.WaitGroup
			results [3]service.TracesResult
			errs    [3]error
		)
		for j := range results {
			batch := waitingBatch(1_000_000*(j+1), 2000, 1000)
			wg.Go(func() { results[j], errs[j] = svc.IngestTraces(ctx, tn, batch) })
		}
		wg.Wait()
		if !watchdog.Stop() {
			t.Fatal("the refused batches waited for the tenant's turn to keep spans (on SQLite, the store's writer)")
		}
		let()
		if err := <-holder; err != nil {
			t.Fatal(err)
		}
		for j, res := range results {
			if errs[j] != nil || res.Kept != 0 || res.Rejected != 2000 || !strings.Contains(res.Message(), "they are full") {
				t.Fatalf("batch %d: %+v, %v; want its 2000 spans refused for the cap", j, res, errs[j])
			}
		}
		imp, err := svc.ImportRuns(ctx, other, []byte(`{"id":"r1","agent":"a","input":"q","output":"a"}`+"\n"), service.ImportOptions{})
		if err != nil || imp.Stored != 1 {
			t.Fatalf("the other tenant's import: %+v, %v", imp, err)
		}
	})
}
