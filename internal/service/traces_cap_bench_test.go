package service_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// BenchmarkRefusedSpans: the repro, scaled: three concurrent batches of 20,000
// spans (each 1 KB, each of its own trace) of a tenant whose open spans are full, all
// refused, while another tenant imports one run every 20 ms, on SQLite. It reports the
// batches' time (refused-s) and the other tenant's imports meanwhile, their median and
// slowest (import-p50-ms, import-max-ms).
func BenchmarkRefusedSpans(b *testing.B) {
	ctx := context.Background()
	svc, err := service.Open(ctx, service.Config{DB: filepath.Join(b.TempDir(), "scorekit.db"), Host: host.New(servicetest.Registry(b, nil)), MaxOpenSpanBytes: 8 << 20})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = svc.Close(ctx) })
	tn, err := svc.CreateTenant(ctx, "acme", store.Policy{})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; ; i++ {
		res, err := svc.IngestTraces(ctx, tn, waitingBatch(i*1000, 1000, 1000))
		if err != nil {
			b.Fatal(err)
		}
		if res.Rejected > 0 {
			break
		}
	}
	other, err := svc.CreateTenant(ctx, "other", store.Policy{})
	if err != nil {
		b.Fatal(err)
	}
	var (
		imports []time.Duration
		runs    int
	)
	for i := range b.N {
		var wg sync.WaitGroup
		for j := range 3 {
			batch := waitingBatch(10_000_000*(i+1)+100_000*j, 20_000, 1000)
			wg.Go(func() {
				if res, err := svc.IngestTraces(ctx, tn, batch); err != nil || res.Rejected != 20_000 {
					b.Errorf("%+v, %v", res, err)
				}
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		for waiting := true; waiting; {
			select {
			case <-done:
				waiting = false
			case <-time.After(20 * time.Millisecond):
				runs++
				start := time.Now()
				body := fmt.Sprintf(`{"id":"r%d","agent":"a","input":"q","output":"a"}`+"\n", runs)
				if _, err := svc.ImportRuns(ctx, other, []byte(body), service.ImportOptions{}); err != nil {
					b.Fatal(err)
				}
				imports = append(imports, time.Since(start))
			}
		}
	}
	slices.Sort(imports)
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "refused-s")
	if len(imports) > 0 {
		b.ReportMetric(float64(imports[len(imports)/2].Microseconds())/1000, "import-p50-ms")
		b.ReportMetric(float64(imports[len(imports)-1].Microseconds())/1000, "import-max-ms")
	}
}
