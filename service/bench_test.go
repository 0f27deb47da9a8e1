package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/internal/pgtest"
	"github.com/scorekit/scorekit/internal/seed"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/service"
	"github.com/scorekit/scorekit/service/jobs"
	"github.com/scorekit/scorekit/service/secrets"
	"github.com/scorekit/scorekit/service/store"
)

// benchRuns returns n seed runs of one agent with fresh ids (prefix) as JSONL.
func benchRuns(b *testing.B, set seed.Set, agent, prefix string, n int) []byte {
	all := append(append([]sdk.Run(nil), set.EmailTriage...), set.Assistant...)
	out := make([]sdk.Run, n)
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range out {
		r := all[i%len(all)]
		r.ID, r.Agent = fmt.Sprintf("%s-%06d", prefix, i), agent
		// A text of its own, so the judge's cache answers no run for another.
		r.Input += "\n(" + r.ID + ")"
		at := t0.Add(time.Duration(i) * time.Second)
		r.Time = &at
		out[i] = r
	}
	body, err := seed.Encode(out)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

func benchBackends(b *testing.B, f func(b *testing.B, dsn func() string)) {
	b.Run("sqlite", func(b *testing.B) { f(b, func() string { return filepath.Join(b.TempDir(), "scorekit.db") }) })
	b.Run("postgres", func(b *testing.B) { f(b, func() string { return pgtest.Shared(b).Database(b) }) })
}

// pollInterval is how often benchmark workers look for jobs.
var pollInterval = 10 * time.Millisecond

// seq makes run ids unique across benchmark invocations.
var seq atomic.Int64

// BenchmarkIngest: runs/s stored, in batches of 5,000: the store's batched insert alone,
// and a whole import (split, validate against the run contract, store).
func BenchmarkIngest(b *testing.B) {
	set := seedSet(&testing.T{})
	const n = 5000
	benchBackends(b, func(b *testing.B, dsn func() string) {
		env := servicetest.New(b, dsn(), servicetest.Options{NoWorkers: true})
		ctx := context.Background()
		tenant, _ := env.Service.CreateTenant(ctx, "bench", store.Policy{})
		b.Run("store", func(b *testing.B) {
			var runs [][]store.NewRun
			for i := range b.N {
				var batch []store.NewRun
				for j := range n {
					body, _ := json.Marshal(set.EmailTriage[j%len(set.EmailTriage)])
					batch = append(batch, store.NewRun{ID: fmt.Sprintf("s%d-%d-%d", seq.Add(1), i, j), Agent: "a", Time: time.Now(), Body: body})
				}
				runs = append(runs, batch)
			}
			b.ResetTimer()
			for i := range b.N {
				if err := env.Store.InTx(ctx, func(tx *store.Tx) error {
					_, err := tx.PutRuns(ctx, tenant.ID, runs[i])
					return err
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "runs/s")
		})
		b.Run("import", func(b *testing.B) {
			var bodies [][]byte
			for i := range b.N {
				bodies = append(bodies, benchRuns(b, set, "a", fmt.Sprintf("i%d-%d", seq.Add(1), i), n))
			}
			b.ResetTimer()
			for i := range b.N {
				res, err := env.Service.ImportRuns(ctx, tenant, bodies[i], service.ImportOptions{})
				if err != nil || res.Stored != n {
					b.Fatalf("%v, %d stored", err, res.Stored)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "runs/s")
		})
	})
}

// BenchmarkEvaluatePrescreen: runs/s through the queue and the store (an evaluation of
// 2,000 runs, created and waited for) against the same scoring done as scorekit score
// does it (decode, validate, score on GOMAXPROCS goroutines), on the same runs.
func BenchmarkEvaluatePrescreen(b *testing.B) {
	set := seedSet(&testing.T{})
	const n = 2000
	body := benchRuns(b, set, "a", "r", n)
	b.Run("direct", func(b *testing.B) {
		h := host.New(servicetest.Registry(b, nil))
		sc, err := h.Open(context.Background(), "prescreen", host.OpenOptions{})
		if err != nil {
			b.Fatal(err)
		}
		var lines [][]byte
		for _, l := range splitLines(body) {
			lines = append(lines, l)
		}
		b.ResetTimer()
		for range b.N {
			work := make(chan []byte)
			var wg sync.WaitGroup
			for range runtime.GOMAXPROCS(0) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for l := range work {
						run, err := host.DecodeRun(l)
						if err != nil {
							b.Error(err)
							continue
						}
						if r := sc.Score(context.Background(), run); r.Status != sdk.StatusScored {
							b.Error(r.Error)
						}
					}
				}()
			}
			for _, l := range lines {
				work <- l
			}
			close(work)
			wg.Wait()
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "runs/s")
	})
	benchBackends(b, func(b *testing.B, dsn func() string) {
		env := servicetest.New(b, dsn(), servicetest.Options{Jobs: jobs.Options{Workers: 4, PollInterval: pollInterval}})
		ctx := context.Background()
		tenant, _ := env.Service.CreateTenant(ctx, "bench", store.Policy{})
		if _, err := env.Service.ImportRuns(ctx, tenant, body, service.ImportOptions{}); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			evaluateAll(b, env.Service, tenant, "a", n, nil)
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "runs/s")
	})
}

func evaluateAll(b *testing.B, svc *service.Service, t store.Tenant, agent string, n int, scorers []string) {
	ctx := context.Background()
	ev, err := svc.CreateEvaluation(ctx, t, agent, service.EvaluationRequest{Limit: n, Scorers: scorers})
	if err != nil {
		b.Fatal(err)
	}
	for {
		v, err := svc.WaitEvaluation(ctx, t, ev.ID, 10*time.Second, service.ViewOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if v.Status == service.StatusDone {
			for _, s := range v.Scorers {
				if s.Failed > 0 {
					b.Fatalf("%s: %d failed", s.Name, s.Failed)
				}
			}
			return
		}
	}
}

func splitLines(body []byte) [][]byte {
	var out [][]byte
	start := 0
	for i, c := range body {
		if c == '\n' {
			if i > start {
				out = append(out, body[start:i])
			}
			start = i + 1
		}
	}
	return out
}

// judgeEnv is a service whose relevancy asks a judge that answers after delay, through a
// broker of maxConc requests in flight.
func judgeEnv(b *testing.B, dsn string, srv *judgetest.Server, maxConc int, o jobs.Options) *servicetest.Env {
	br, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "m", MaxConcurrency: maxConc})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = br.Close() })
	return servicetest.New(b, dsn, servicetest.Options{Host: host.New(servicetest.Registry(b, nil), host.WithJudge(br)), Judge: br, Jobs: o})
}

// BenchmarkJudgeCeiling: with a judge at 200 ms, the share of the broker's concurrency
// ceiling (16) an evaluation keeps busy: (calls x 200 ms) / (elapsed x 16).
func BenchmarkJudgeCeiling(b *testing.B) {
	set := seedSet(&testing.T{})
	const n, ceiling, delay = 400, 16, 200 * time.Millisecond
	benchBackends(b, func(b *testing.B, dsn func() string) {
		srv := judgetest.New(judgetest.Rule{Reply: `{"reasoning": "ok", "score": 1}`, Delay: delay})
		defer srv.Close()
		env := judgeEnv(b, dsn(), srv, ceiling, jobs.Options{Workers: 4, JobConcurrency: 8, ChunkSize: 25})
		ctx := context.Background()
		tenant, _ := env.Service.CreateTenant(ctx, "bench", store.Policy{})
		b.ResetTimer()
		for i := range b.N {
			b.StopTimer()
			agent := fmt.Sprintf("a%d-%d", seq.Add(1), i)
			if _, err := env.Service.ImportRuns(ctx, tenant, benchRuns(b, set, agent, agent, n), service.ImportOptions{}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			evaluateAll(b, env.Service, tenant, agent, n, []string{"relevancy"})
		}
		busy := float64(srv.Calls()) * delay.Seconds()
		b.ReportMetric(busy/(b.Elapsed().Seconds()*ceiling), "ceiling_share")
		b.ReportMetric(float64(srv.MaxInFlight()), "max_in_flight")
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "runs/s")
	})
}

// BenchmarkWorkersPostgres: one against two workers on one PostgreSQL, each a River
// client with its own broker (8 judge requests in flight, 50 ms each), as two scorekit
// worker processes would be.
func BenchmarkWorkersPostgres(b *testing.B) {
	set := seedSet(&testing.T{})
	const n = 800
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			srv := judgetest.New(judgetest.Rule{Reply: `{"reasoning": "ok", "score": 1}`, Delay: 50 * time.Millisecond})
			defer srv.Close()
			dsn := pgtest.Shared(b).Database(b)
			o := jobs.Options{Workers: 2, JobConcurrency: 8, ChunkSize: 25}
			api := judgeEnv(b, dsn, srv, 8, o)
			for range workers - 1 {
				judgeEnv(b, dsn, srv, 8, o)
			}
			ctx := context.Background()
			tenant, _ := api.Service.CreateTenant(ctx, "bench", store.Policy{})
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				agent := fmt.Sprintf("a%d-%d", seq.Add(1), i)
				if _, err := api.Service.ImportRuns(ctx, tenant, benchRuns(b, set, agent, agent, n), service.ImportOptions{}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				evaluateAll(b, api.Service, tenant, agent, n, []string{"relevancy"})
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "runs/s")
		})
	}
}

// BenchmarkTenantJudgeKey: what a tenant's own judge key costs an evaluation. Two
// tenants evaluate the same 400 runs with relevancy (chunks of 25, so 16 jobs, each
// reading and opening the tenant's sealed keys first) against a judge on loopback; one
// stored its own key, the other uses the operator's. Reported: each one's runs/s and the
// ratio of their times (tenant key / operator key), measured alternately in one run.
func BenchmarkTenantJudgeKey(b *testing.B) {
	set := seedSet(&testing.T{})
	const n = 400
	srv := judgetest.New(judgetest.Rule{Reply: `{"reasoning": "ok", "score": 1}`})
	defer srv.Close()
	keyring, err := secrets.New(secrets.NewKey())
	if err != nil {
		b.Fatal(err)
	}
	br, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "m", APIKey: "sk-operator", TokenBudget: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = br.Close() })
	env := servicetest.New(b, filepath.Join(b.TempDir(), "scorekit.db"), servicetest.Options{
		Host: host.New(servicetest.Registry(b, nil), host.WithJudge(br)), Judge: br, Secrets: keyring,
		Jobs: jobs.Options{Workers: 4, JobConcurrency: 8, ChunkSize: 25, PollInterval: pollInterval}})
	ctx := context.Background()
	operator, _ := env.Service.CreateTenant(ctx, "operator-key", store.Policy{})
	own, _ := env.Service.CreateTenant(ctx, "own-key", store.Policy{})
	if err := env.Service.SetJudgeKey(ctx, own, broker.DefaultEndpoint, "sk-own-0123456789"); err != nil {
		b.Fatal(err)
	}
	var took [2]time.Duration
	b.ResetTimer()
	for i := range b.N {
		for j, tn := range []store.Tenant{operator, own} {
			b.StopTimer()
			agent := fmt.Sprintf("a%d-%d", seq.Add(1), i)
			if _, err := env.Service.ImportRuns(ctx, tn, benchRuns(b, set, agent, agent, n), service.ImportOptions{}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			start := time.Now()
			evaluateAll(b, env.Service, tn, agent, n, []string{"relevancy"})
			took[j] += time.Since(start)
		}
	}
	b.StopTimer()
	seen := map[string]int{}
	for _, q := range srv.Requests() {
		seen[q.Authorization]++
	}
	if seen["Bearer sk-own-0123456789"] == 0 || seen["Bearer sk-operator"] == 0 {
		b.Fatalf("calls by key: %v; want both keys used", seen)
	}
	b.ReportMetric(float64(n*b.N)/took[0].Seconds(), "operator_runs/s")
	b.ReportMetric(float64(n*b.N)/took[1].Seconds(), "tenant_key_runs/s")
	b.ReportMetric(took[1].Seconds()/took[0].Seconds(), "tenant_key/operator")
}
