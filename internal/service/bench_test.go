package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/internal/pgtest"
	"github.com/scorekit/scorekit/internal/seed"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/redact"
	"github.com/scorekit/scorekit/internal/service/secrets"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/sdk"
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

// BenchmarkImportRedaction: the cost of a tenant's redaction rules on import (SQLite):
// the same 2,000 seed runs (raw emails with addresses, triage outputs) imported by a
// tenant without rules and by one with every built-in kind and a pattern of its own,
// alternately in each iteration, so both are measured in the same run.
func BenchmarkImportRedaction(b *testing.B) {
	set := seedSet(&testing.T{})
	const n = 2000
	env := servicetest.New(b, filepath.Join(b.TempDir(), "scorekit.db"), servicetest.Options{NoWorkers: true})
	ctx := context.Background()
	plain, _ := env.Service.CreateTenant(ctx, "plain", store.Policy{})
	red, err := env.Service.CreateTenant(ctx, "redacted", store.Policy{Redact: redact.Config{Kinds: redact.Kinds,
		Patterns: []redact.Pattern{{Name: "ticket", Regexp: `\bTCK-\d{5}\b`}}}})
	if err != nil {
		b.Fatal(err)
	}
	var (
		took       [2]time.Duration
		cpuTook    [2]time.Duration
		redactions int
	)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		body := benchRuns(b, set, "a", fmt.Sprintf("r%d-%d", seq.Add(1), i), n)
		b.StartTimer()
		for k := range 2 {
			which := (i + k) % 2 // alternate which goes first
			t := []store.Tenant{plain, red}[which]
			t0, c0 := time.Now(), testkit.CPUTime()
			res, err := env.Service.ImportRuns(ctx, t, body, service.ImportOptions{})
			took[which] += time.Since(t0)
			cpuTook[which] += testkit.CPUTime() - c0
			if err != nil || res.Stored != n {
				b.Fatalf("%v, %d stored", err, res.Stored)
			}
			for _, r := range res.Runs {
				for _, c := range r.Redactions {
					redactions += c
				}
			}
		}
	}
	runs := float64(n * b.N)
	b.ReportMetric(runs/took[0].Seconds(), "plain-runs/s")
	b.ReportMetric(runs/took[1].Seconds(), "redacted-runs/s")
	b.ReportMetric(took[1].Seconds()/took[0].Seconds(), "redacted/plain")
	b.ReportMetric(float64(cpuTook[0])/runs, "plain-cpu-ns/run")
	b.ReportMetric(float64(cpuTook[1])/runs, "redacted-cpu-ns/run")
	b.ReportMetric(float64(cpuTook[1])/float64(cpuTook[0]), "cpu-redacted/plain")
	b.ReportMetric(float64(redactions)/runs, "redactions/run")
}

// BenchmarkRetentionWithWriters: what a retention sweep costs the writers beside it, on
// SQLite (one write transaction at a time). 8 writers store one run each per
// transaction, first alone (for as long as the sweep will take), then while the sweep
// deletes 20,000 expired runs with their 40,000 results, DeleteBatch runs a
// transaction. Reported: the writers' median and 99th-percentile latency in both
// phases, and the sweep's rate.
func BenchmarkRetentionWithWriters(b *testing.B) {
	set := seedSet(&testing.T{})
	const old, writers = 20_000, 8
	for i := range b.N {
		b.StopTimer()
		env := servicetest.New(b, filepath.Join(b.TempDir(), "scorekit.db"), servicetest.Options{NoWorkers: true})
		ctx := context.Background()
		st := env.Store
		tn, _ := env.Service.CreateTenant(ctx, fmt.Sprintf("t%d", i), store.Policy{RetentionDays: 30})
		body, _ := json.Marshal(set.EmailTriage[0])
		past := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
		for start := 0; start < old; start += 1000 {
			err := st.InTx(ctx, func(tx *store.Tx) error {
				runs := make([]store.NewRun, 1000)
				for j := range runs {
					runs[j] = store.NewRun{ID: fmt.Sprintf("old-%d", start+j), Agent: "a", Time: past.Add(time.Duration(start+j) * time.Second), Body: body}
				}
				pks, err := tx.PutRuns(ctx, tn.ID, runs)
				if err != nil {
					return err
				}
				ev, err := tx.CreateEvaluation(ctx, store.NewEvaluation{TenantID: tn.ID, Agent: "a", Trigger: store.TriggerArrival,
					Spec: store.Spec{Scorers: []store.ScorerRef{{Name: "s1"}, {Name: "s2"}}}, RunPKs: pks})
				if err != nil {
					return err
				}
				var rs []store.Result
				for _, pk := range pks {
					for _, sc := range []string{"s1", "s2"} {
						rs = append(rs, store.Result{TenantID: tn.ID, EvaluationPK: ev.PK, RunPK: pk, Scorer: sc, ScorerVersion: "1", Status: "scored", Body: []byte(`{"status":"scored","score":1}`)})
					}
				}
				_, err = tx.InsertResults(ctx, rs)
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		// write runs one per transaction until stop is closed; return the latencies.
		write := func(phase string, stop <-chan struct{}) []time.Duration {
			var (
				mu  sync.Mutex
				lat []time.Duration
				wg  sync.WaitGroup
			)
			for w := range writers {
				wg.Go(func() {
					for k := 0; ; k++ {
						select {
						case <-stop:
							return
						default:
						}
						r := []store.NewRun{{ID: fmt.Sprintf("%s-%d-%d", phase, w, k), Agent: "a", Time: time.Now(), Body: body}}
						t0 := time.Now()
						if err := st.InTx(ctx, func(tx *store.Tx) error { _, err := tx.PutRuns(ctx, tn.ID, r); return err }); err != nil {
							b.Error(err)
							return
						}
						mu.Lock()
						lat = append(lat, time.Since(t0))
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			return lat
		}
		b.StartTimer()
		stop := make(chan struct{})
		var during []time.Duration
		done := make(chan struct{})
		go func() { during = write("during", stop); close(done) }()
		t0 := time.Now()
		d, err := st.ExpireRuns(ctx, tn.ID, time.Now().Add(-30*24*time.Hour), 0)
		sweep := time.Since(t0)
		close(stop)
		<-done
		b.StopTimer()
		if err != nil || d.Runs != old || d.Results != 2*old {
			b.Fatalf("sweep: %+v, %v", d, err)
		}
		stop = make(chan struct{})
		time.AfterFunc(sweep, func() { close(stop) })
		alone := write("alone", stop)
		p := func(l []time.Duration, q float64) float64 {
			slices.Sort(l)
			return float64(l[int(q*float64(len(l)-1))].Microseconds()) / 1000
		}
		b.ReportMetric(float64(old)/sweep.Seconds(), "swept-runs/s")
		b.ReportMetric(p(alone, 0.5), "alone-p50-ms")
		b.ReportMetric(p(alone, 0.99), "alone-p99-ms")
		b.ReportMetric(p(during, 0.5), "during-p50-ms")
		b.ReportMetric(p(during, 0.99), "during-p99-ms")
		b.ReportMetric(p(during, 1), "during-max-ms")
		b.ReportMetric(float64(len(alone))/sweep.Seconds(), "alone-writes/s")
		b.ReportMetric(float64(len(during))/sweep.Seconds(), "during-writes/s")
		b.StartTimer()
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
