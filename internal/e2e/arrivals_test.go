package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/sdk"
)

// 16 clients post 3,000 runs one a request to an API process under a policy that judges
// each on arrival; two worker processes score them, and one is killed with SIGKILL
// mid-way. Every run is judged exactly once, and the runs made 3 arrival evaluations
// (1,000 runs each), not 3,000.
func TestArrivalsScaleOut(t *testing.T) {
	sk := newScaleStack(t)
	dsn, c, api, victim, survivor := sk.dsn, sk.c, sk.api, sk.victim, sk.survivor
	if st := c.do(t, "PUT", "/v1/agents/bot/policy", []byte(`{"scorers": ["relevancy"], "sample_rate": 1}`), nil); st != 200 {
		t.Fatalf("set the policy: %d", st)
	}

	const n, clients = 3000, 16 // 16: a tenant's share of requests with bodies (api.DefaultMaxBodiesPerTenant)
	posted := make(chan error, 1)
	go func() { posted <- postEach(c, n, clients) }()
	killed := false
	deadline := time.Now().Add(2 * time.Minute)
	var done int64
	queue, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer queue.Close()
	for {
		var evs []service.EvaluationView
		if st := c.do(t, "GET", "/v1/agents/bot/evaluations?limit=100", nil, &evs); st != 200 {
			t.Fatalf("list evaluations: %d", st)
		}
		done = 0
		for _, ev := range evs {
			done += ev.DoneResults
		}
		// The victim is killed once both workers hold a chunk: killed while idle between
		// chunks (arrivals come in gaps on a quiet machine), it would leave nothing to rescue.
		if !killed && done >= n/5 && holders(t, queue) >= 2 {
			if done == n {
				t.Fatal("the runs were scored before a worker could be killed; slow the judge down")
			}
			if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = victim.wait(t, 10*time.Second)
			killed = true
			t.Logf("killed a worker at %d of %d results", done, n)
		}
		if done == n {
			break
		}
		select {
		case err := <-posted:
			if err != nil {
				t.Fatalf("posting: %v", err)
			}
			posted <- nil
		default:
		}
		select {
		case err := <-survivor.done:
			survivor.done <- err
			t.Fatalf("the surviving worker exited (%v) at %d of %d results:\n%s", err, done, n, survivor.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Logf("the queue:\n%s", queueState(t, dsn))
			t.Fatalf("%d of %d results after 2 minutes\nsurvivor:\n%s\napi:\n%s", done, n, survivor.stderr.String(), api.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := <-posted; err != nil {
		t.Fatal(err)
	}
	if !killed {
		t.Fatal("no worker was killed")
	}
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var total, distinct, judged, evaluations, rescued int64
	row := st.Pool().QueryRow(context.Background(), `SELECT COUNT(*), COUNT(DISTINCT run_pk), COUNT(*) FILTER (WHERE status = 'scored' AND judge_model = 'judge-model'),
		(SELECT COUNT(*) FROM evaluations WHERE trigger = 'arrival'), (SELECT COUNT(*) FROM river_job WHERE attempt > 1) FROM results`)
	if err := row.Scan(&total, &distinct, &judged, &evaluations, &rescued); err != nil {
		t.Fatal(err)
	}
	if total != n || distinct != n || judged != n {
		t.Fatalf("results: %d, distinct runs %d, judged %d; want %d each", total, distinct, judged, n)
	}
	if evaluations != n/service.DefaultArrivalMaxRuns {
		t.Fatalf("%d arrival evaluations for %d runs; want %d", evaluations, n, n/service.DefaultArrivalMaxRuns)
	}
	t.Logf("%d jobs ran more than once (the killed worker's, rescued)", rescued)
	if rescued == 0 {
		t.Fatal("no job was rescued: the killed worker held none")
	}
}

// postEach posts n single-run requests from clients goroutines and returns the first
// failure.
func postEach(c client, n, clients int) error {
	work := make(chan int)
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				b, _ := json.Marshal(sdk.Run{ID: fmt.Sprintf("run-%05d", i), Agent: "bot", Input: fmt.Sprintf("Question number %d?", i), Output: fmt.Sprintf("Answer number %d.", i)})
				req, _ := http.NewRequest("POST", c.url+"/v1/runs", bytes.NewReader(b))
				req.Header.Set("Authorization", "Bearer "+c.key)
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					var res service.ImportResult
					err = json.NewDecoder(resp.Body).Decode(&res)
					resp.Body.Close()
					if err == nil && (resp.StatusCode != 200 || res.Stored != 1 || len(res.Evaluations) != 1) {
						err = fmt.Errorf("run %d: %d, %+v", i, resp.StatusCode, res)
					}
				}
				if err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// queueState describes the jobs and the arrival evaluations, for a failure's message.
func queueState(t *testing.T, dsn string) string {
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		return err.Error()
	}
	defer st.Close()
	var b strings.Builder
	rows, err := st.Pool().Query(context.Background(), `SELECT kind, state, attempt, COUNT(*), MIN(COALESCE(array_to_string(errors, ' | '), '')) FROM river_job GROUP BY kind, state, attempt ORDER BY kind, state`)
	if err != nil {
		return err.Error()
	}
	for rows.Next() {
		var kind, state, errs string
		var attempt, n int64
		if err := rows.Scan(&kind, &state, &attempt, &n, &errs); err != nil {
			return err.Error()
		}
		fmt.Fprintf(&b, "%s %s attempt %d: %d %.300s\n", kind, state, attempt, n, errs)
	}
	rows.Close()
	rows, err = st.Pool().Query(context.Background(), `SELECT public_id, runs, queued, open, flushing FROM evaluations ORDER BY id`)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var runs, queued int64
		var open, flushing int16
		if err := rows.Scan(&id, &runs, &queued, &open, &flushing); err != nil {
			return err.Error()
		}
		fmt.Fprintf(&b, "%s: %d runs, %d queued, open %d, flushing %d\n", id, runs, queued, open, flushing)
	}
	return b.String()
}

// holders counts the worker processes holding a running evaluation job (River records
// the client that took a job last in attempted_by).
func holders(t *testing.T, st *store.Store) int {
	t.Helper()
	var n int
	err := st.Pool().QueryRow(context.Background(), `SELECT COUNT(DISTINCT attempted_by[array_length(attempted_by, 1)]) FROM river_job
		WHERE state = 'running' AND kind = 'scorekit_evaluate'`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
