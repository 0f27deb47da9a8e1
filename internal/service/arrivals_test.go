package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

// oneRun is run i of agent as the body of a single-run import.
func oneRun(t *testing.T, agent string, i int) []byte {
	t.Helper()
	b, err := json.Marshal(sdk.Run{ID: fmt.Sprintf("%s-%05d", agent, i), Agent: agent,
		Input: fmt.Sprintf("Since when is Paris the capital of France? (asked %d)", i), Output: fmt.Sprintf("Since year %d.", 500+i)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitDone waits for the evaluation to be done and returns it with its results.
func waitDone(t *testing.T, svc *service.Service, tenant store.Tenant, id string) service.EvaluationView {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		v, err := svc.WaitEvaluation(context.Background(), tenant, id, 10*time.Second, service.ViewOptions{Results: true})
		if err != nil {
			t.Fatal(err)
		}
		if v.Status == service.StatusDone {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("evaluation %s: %d of %d results after 90s", id, v.DoneResults, v.ExpectedResults)
		}
	}
}

// 400 runs posted one a request by 32 clients at once, under a policy: each run is scored
// exactly once, and they make 400/50 evaluations of 50 runs, not 400 of one.
func TestArrivalsCoalesceAndScoreEachRunOnce(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		const runs, clients, maxRuns = 400, 32, 50
		svc := servicetest.New(t, dsn, servicetest.Options{ArrivalMaxRuns: maxRuns, Jobs: jobs.Options{ChunkSize: 20}}).Service
		tenant, _ := svc.CreateTenant(ctx, "acme", store.Policy{})
		if _, err := svc.SetAgentPolicy(ctx, tenant, "bot", store.AgentPolicy{Scorers: []string{"prescreen"}, SampleRate: 1}); err != nil {
			t.Fatal(err)
		}
		var (
			mu   sync.Mutex
			ids  = map[string]int{} // evaluation -> runs the imports said joined it
			wg   sync.WaitGroup
			work = make(chan int)
		)
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					res, err := svc.ImportRuns(ctx, tenant, oneRun(t, "bot", i), service.ImportOptions{})
					if err != nil || res.Stored != 1 || len(res.Evaluations) != 1 {
						t.Errorf("run %d: %+v, %v", i, res, err)
						continue
					}
					mu.Lock()
					ids[res.Evaluations[0]]++
					mu.Unlock()
				}
			}()
		}
		for i := range runs {
			work <- i
		}
		close(work)
		wg.Wait()
		if t.Failed() {
			return
		}
		if len(ids) != runs/maxRuns {
			t.Fatalf("%d arrival evaluations for %d runs; want %d of %d runs", len(ids), runs, runs/maxRuns, maxRuns)
		}
		seen := map[string]int{}
		for id, n := range ids {
			v := waitDone(t, svc, tenant, id)
			if v.Trigger != store.TriggerArrival || v.Runs != maxRuns || n != maxRuns || v.Open {
				t.Fatalf("evaluation %s: trigger %s, %d runs (imports said %d), open %v; want arrival, %d, closed (full)", id, v.Trigger, v.Runs, n, v.Open, maxRuns)
			}
			for _, r := range v.Results {
				if r.Status != string(sdk.StatusScored) {
					t.Fatalf("run %s: %s %+v", r.RunID, r.Status, r.Error)
				}
				seen[r.RunID]++
			}
		}
		for i := range runs {
			if id := fmt.Sprintf("bot-%05d", i); seen[id] != 1 {
				t.Fatalf("run %s has %d results; want exactly 1", id, seen[id])
			}
		}
		// The agent's evaluations list shows the same evaluations, each closed and done.
		list, err := svc.Evaluations(ctx, tenant, "bot", 100)
		if err != nil || len(list) != len(ids) {
			t.Fatalf("list: %d evaluations, %v; want %d", len(list), err, len(ids))
		}
	})
}

// An open arrival evaluation takes the runs of later imports; a changed policy or age
// closes it and the next runs open another. Each shows whether it is open.
func TestArrivalEvaluationClosesOnPolicyChangeAndAge(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		svc := servicetest.New(t, dsn, servicetest.Options{}).Service
		tenant, _ := svc.CreateTenant(ctx, "acme", store.Policy{})
		pol := store.AgentPolicy{Scorers: []string{"prescreen"}, SampleRate: 1}
		if _, err := svc.SetAgentPolicy(ctx, tenant, "bot", pol); err != nil {
			t.Fatal(err)
		}
		imp := func(i int) string {
			t.Helper()
			res, err := svc.ImportRuns(ctx, tenant, oneRun(t, "bot", i), service.ImportOptions{})
			if err != nil || len(res.Evaluations) != 1 {
				t.Fatalf("import %d: %+v, %v", i, res, err)
			}
			return res.Evaluations[0]
		}
		first := imp(0)
		if again := imp(1); again != first {
			t.Fatalf("a second run opened evaluation %s beside the open %s", again, first)
		}
		v := waitDone(t, svc, tenant, first)
		if !v.Open || v.Runs != 2 || v.DoneResults != 2 {
			t.Fatalf("open arrival evaluation: open %v, %d runs, %d results; want open, 2, 2", v.Open, v.Runs, v.DoneResults)
		}
		pol.Scorers = append(pol.Scorers, "completeness")
		if _, err := svc.SetAgentPolicy(ctx, tenant, "bot", pol); err != nil {
			t.Fatal(err)
		}
		second := imp(2)
		if second == first {
			t.Fatal("a run under the changed policy joined the evaluation made under the old one")
		}
		old := waitDone(t, svc, tenant, first)
		cur := waitDone(t, svc, tenant, second)
		if old.Open || old.Runs != 2 || len(old.Scorers) != 1 || !cur.Open || cur.Runs != 1 || cur.DoneResults != 2 {
			t.Fatalf("after the policy change: old open %v, %d runs, %d scorers; new open %v, %d runs, %d results",
				old.Open, old.Runs, len(old.Scorers), cur.Open, cur.Runs, cur.DoneResults)
		}

		// Every evaluation is past its age at once: each run opens its own.
		aged := servicetest.New(t, dsn, servicetest.Options{ArrivalMaxAge: time.Nanosecond}).Service
		a, b := "", ""
		for i, id := range []*string{&a, &b} {
			res, err := aged.ImportRuns(ctx, tenant, oneRun(t, "bot", 10+i), service.ImportOptions{})
			if err != nil || len(res.Evaluations) != 1 {
				t.Fatalf("import: %+v, %v", res, err)
			}
			*id = res.Evaluations[0]
		}
		if a == b || a == second {
			t.Fatalf("evaluations past their age were joined: %s, %s, %s", second, a, b)
		}
		for _, id := range []string{a, b} {
			if v := waitDone(t, aged, tenant, id); v.Open || v.Runs != 1 {
				t.Fatalf("aged evaluation %s: open %v, %d runs", id, v.Open, v.Runs)
			}
		}
	})
}

// A worker dies in the middle of an arrival evaluation's chunk, holding the chunk's job
// (half its results written) and the flush job of the runs still waiting: a worker that
// starts later scores every run exactly once, the dead worker's results kept.
func TestArrivalCrashMidChunkLosesAndDoublesNothing(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		// A process that takes arrivals, with no workers of its own.
		o := servicetest.Options{NoWorkers: true, Jobs: jobs.Options{ChunkSize: 10, RescueAfter: 2 * time.Second}}
		api := servicetest.New(t, dsn, o)
		tenant, _ := api.Service.CreateTenant(ctx, "acme", store.Policy{})
		if _, err := api.Service.SetAgentPolicy(ctx, tenant, "bot", store.AgentPolicy{Scorers: []string{"prescreen", "completeness"}, SampleRate: 1}); err != nil {
			t.Fatal(err)
		}
		var (
			id string
			wg sync.WaitGroup
			mu sync.Mutex
		)
		for c := range 5 { // 5 clients x 5 runs: two chunks cut on arrival, 5 runs waiting for the flush
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 5 {
					res, err := api.Service.ImportRuns(ctx, tenant, oneRun(t, "bot", c*5+i), service.ImportOptions{})
					if err != nil || len(res.Evaluations) != 1 {
						t.Errorf("import: %+v, %v", res, err)
						return
					}
					mu.Lock()
					id = res.Evaluations[0]
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		ev, err := api.Store.Evaluation(ctx, tenant.ID, id)
		if err != nil || ev.Runs != 25 || ev.Queued != 20 || !ev.Flushing {
			t.Fatalf("evaluation: %d runs, %d queued, flushing %v, %v; want 25, 20, true", ev.Runs, ev.Queued, ev.Flushing, err)
		}
		// The dead worker took the first chunk and wrote the results of its first run, and
		// took the flush job; then nothing.
		runs, _, err := api.Store.ChunkRuns(ctx, tenant.ID, ev.PK, 0, 10)
		if err != nil || len(runs) != 10 {
			t.Fatalf("first chunk: %d runs, %v", len(runs), err)
		}
		var part []store.Result
		for _, sc := range []string{"prescreen", "completeness"} {
			part = append(part, store.Result{TenantID: tenant.ID, EvaluationPK: ev.PK, RunPK: runs[0].PK, Scorer: sc, ScorerVersion: "dead",
				Status: "scored", Score: new(float64), Body: json.RawMessage(`{"status":"scored","score":0}`)})
		}
		if _, err := api.Store.InsertResults(ctx, part); err != nil {
			t.Fatal(err)
		}
		for _, kind := range []string{(jobs.EvaluateArgs{}).Kind(), (jobs.FlushArgs{}).Kind()} {
			if err := markRunning(api.Store, kind); err != nil {
				t.Fatal(err)
			}
		}
		// A worker process starts.
		o.NoWorkers, o.Jobs.Workers = false, 2
		worker := servicetest.New(t, dsn, o)
		v := waitDone(t, worker.Service, tenant, id)
		if v.DoneResults != 50 || len(v.Results) != 50 {
			t.Fatalf("%d results (%d listed); want 25 runs x 2 scorers", v.DoneResults, len(v.Results))
		}
		seen := map[string]int{}
		for _, r := range v.Results {
			seen[r.RunID+" "+r.Scorer]++
			if r.RunID == runs[0].ID && r.ScorerVersion != "dead" {
				t.Fatalf("the rescued chunk scored run %s again", r.RunID)
			}
		}
		if len(seen) != 50 {
			t.Fatalf("%d distinct (run, scorer) of 50 results: some doubled", len(seen))
		}
	})
}

// markRunning makes the first job of kind look taken by a worker that died an hour ago.
func markRunning(st *store.Store, kind string) error {
	ctx := context.Background()
	past := time.Now().Add(-time.Hour)
	q := `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = $1 WHERE id = (SELECT MIN(id) FROM river_job WHERE kind = $2)`
	if st.Pool() != nil {
		_, err := st.Pool().Exec(ctx, q, past, kind)
		return err
	}
	_, err := st.SQLDB().ExecContext(ctx, strings.NewReplacer("$1", "?", "$2", "?").Replace(q), past.UTC().Format("2006-01-02 15:04:05.999999"), kind)
	return err
}

// A run deleted from an open arrival evaluation leaves the runs that join after it their
// own places: each is scored and the evaluation ends. Before, a deletion lowered the run
// count the evaluation also used as its next position, so a run that joined later took a
// place whose chunk had been scored already, and the evaluation never ended.
func TestArrivalAfterADeletionIsScored(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		svc := servicetest.New(t, dsn, servicetest.Options{Jobs: jobs.Options{ChunkSize: 3}}).Service
		tenant, _ := svc.CreateTenant(ctx, "acme", store.Policy{})
		if _, err := svc.SetAgentPolicy(ctx, tenant, "bot", store.AgentPolicy{Scorers: []string{"prescreen"}, SampleRate: 1}); err != nil {
			t.Fatal(err)
		}
		var evID string
		for i := range 3 { // a full chunk: handed to a job at once, and scored
			res, err := svc.ImportRuns(ctx, tenant, oneRun(t, "bot", i), service.ImportOptions{})
			if err != nil || len(res.Evaluations) != 1 {
				t.Fatalf("import %d: %+v, %v", i, res, err)
			}
			evID = res.Evaluations[0]
		}
		if v := waitDone(t, svc, tenant, evID); v.DoneResults != 3 {
			t.Fatalf("first chunk: %d results", v.DoneResults)
		}
		if _, err := svc.DeleteRun(ctx, tenant, "test", "bot-00000"); err != nil {
			t.Fatal(err)
		}
		for i := 3; i < 5; i++ {
			res, err := svc.ImportRuns(ctx, tenant, oneRun(t, "bot", i), service.ImportOptions{})
			if err != nil || len(res.Evaluations) != 1 || res.Evaluations[0] != evID {
				t.Fatalf("import %d: %+v, %v; want it to join %s", i, res, err, evID)
			}
		}
		v := waitDone(t, svc, tenant, evID)
		if v.Runs != 4 || v.DoneResults != 4 {
			t.Fatalf("evaluation: %d runs, %d results; want 4 and 4", v.Runs, v.DoneResults)
		}
	})
}
