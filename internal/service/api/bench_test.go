package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// BenchmarkArrivals: 32 clients each POST /v1/runs one email-sized run a request, on
// SQLite, for an agent without a policy and, in the same iteration on a fresh store each,
// for an agent whose policy evaluates every arriving run with prescreen: scored by four
// workers in the same process, and with the workers elsewhere (none in this process: the
// imports join and enqueue, nothing scores). Reports the request rates and their ratios
// to the rate without a policy (the aim: >= 0.8), how fast results were stored (from the
// first request to the last result) and how long after the last request the last result
// was, and how many evaluations and chunk jobs the arrivals made.
func BenchmarkArrivals(b *testing.B) {
	const n, clients = 3200, 32
	set := servicetest.Seed(b)
	bodies := make([][]byte, n)
	for i := range bodies {
		r := set.EmailTriage[i%len(set.EmailTriage)]
		r.ID, r.Agent, r.Time = fmt.Sprintf("run-%05d", i), "bot", nil
		body, err := json.Marshal(r)
		if err != nil {
			b.Fatal(err)
		}
		bodies[i] = body
	}
	var plain, policy, enqueued, scored time.Duration
	var evaluations, chunks int64
	for range b.N {
		posting, _, _, _ := arrivals(b, bodies, clients, false, true)
		plain += posting
		posting, results, evs, jobs := arrivals(b, bodies, clients, true, true)
		policy, scored, evaluations, chunks = policy+posting, scored+results, evaluations+evs, chunks+jobs
		posting, _, _, _ = arrivals(b, bodies, clients, true, false)
		enqueued += posting
	}
	rate := func(d time.Duration) float64 { return float64(n*b.N) / d.Seconds() }
	b.ReportMetric(rate(plain), "req/s_plain")
	b.ReportMetric(rate(policy), "req/s_policy")
	b.ReportMetric(plain.Seconds()/policy.Seconds(), "policy/plain")
	b.ReportMetric(plain.Seconds()/enqueued.Seconds(), "policy/plain_workers_elsewhere")
	b.ReportMetric(rate(scored), "results/s")
	// How long after the last run was posted its result, and every other, was stored.
	b.ReportMetric(float64((scored-policy).Milliseconds())/float64(b.N), "lag_ms")
	b.ReportMetric(float64(evaluations)/float64(b.N), "evaluations")
	b.ReportMetric(float64(chunks)/float64(b.N), "chunk_jobs")
}

// arrivals posts bodies from clients goroutines to a fresh service and returns how long
// the posting took, how long until every result was stored (with a policy and workers),
// and how many evaluations and chunk jobs there are. Without workers the service only
// enqueues, as a serve whose workers run elsewhere does.
func arrivals(b *testing.B, bodies [][]byte, clients int, withPolicy, workers bool) (posting, results time.Duration, evaluations, chunks int64) {
	ctx := context.Background()
	jo := jobs.Options{PollInterval: 10 * time.Millisecond}
	if workers {
		jo.Workers = 4
	}
	env := servicetest.New(b, filepath.Join(b.TempDir(), "scorekit.db"), servicetest.Options{NoWorkers: !workers, Jobs: jo})
	tenant, err := env.Service.CreateTenant(ctx, "bench", store.Policy{})
	if err != nil {
		b.Fatal(err)
	}
	key, _, err := env.Service.CreateKey(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	if withPolicy {
		if _, err := env.Service.SetAgentPolicy(ctx, tenant, "bot", store.AgentPolicy{Scorers: []string{"prescreen"}, SampleRate: 1}); err != nil {
			b.Fatal(err)
		}
	}
	srv := httptest.NewServer(api.New(env.Service, api.Options{MaxInFlight: 4 * clients, MaxInFlightPerTenant: 4 * clients, MaxBodiesPerTenant: 4 * clients}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	defer client.CloseIdleConnections()
	work := make(chan []byte)
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for body := range work {
				req, _ := http.NewRequest("POST", srv.URL+"/v1/runs", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Errorf("POST /v1/runs: %d", resp.StatusCode)
				}
			}
		}()
	}
	for _, body := range bodies {
		work <- body
	}
	close(work)
	wg.Wait()
	posting = time.Since(start)
	db := env.Store.SQLDB()
	if withPolicy && workers {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			var stored int64
			if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM results`).Scan(&stored); err != nil {
				b.Fatal(err)
			}
			if stored == int64(len(bodies)) {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d results after 2 minutes", stored, len(bodies))
			}
			time.Sleep(2 * time.Millisecond)
		}
		results = time.Since(start)
	}
	if err := db.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM evaluations), (SELECT COUNT(*) FROM river_job WHERE kind = 'scorekit_evaluate')`).Scan(&evaluations, &chunks); err != nil {
		b.Fatal(err)
	}
	return posting, results, evaluations, chunks
}
