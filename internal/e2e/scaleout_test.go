package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/sdk"
)

// One API process and two worker processes on one PostgreSQL evaluate 5,000 runs; one
// worker is killed with SIGKILL mid-way; every result is there exactly once.
func TestScaleOut(t *testing.T) {
	sk := newScaleStack(t)
	dsn, c, victim, survivor := sk.dsn, sk.c, sk.victim, sk.survivor

	const n = 5000
	var body strings.Builder
	for i := range n {
		r := sdk.Run{ID: fmt.Sprintf("run-%05d", i), Agent: "bot", Input: fmt.Sprintf("Question number %d?", i), Output: fmt.Sprintf("Answer number %d.", i)}
		b, _ := json.Marshal(r)
		body.Write(b)
		body.WriteByte('\n')
	}
	var imp service.ImportResult
	if st := c.do(t, "POST", "/v1/runs", []byte(body.String()), &imp); st != 200 || imp.Stored != n {
		t.Fatalf("import: %d, stored %d", st, imp.Stored)
	}
	var ev service.EvaluationView
	if st := c.do(t, "POST", "/v1/agents/bot/evaluations", []byte(`{"limit": 5000, "scorers": ["relevancy"]}`), &ev); st != 202 {
		t.Fatalf("create evaluation: %d", st)
	}
	killed := false
	deadline := time.Now().Add(5 * time.Minute)
	var v service.EvaluationView
	for {
		if st := c.do(t, "GET", "/v1/evaluations/"+ev.ID+"?results=false&wait=1s", nil, &v); st != 200 {
			t.Fatalf("get evaluation: %d", st)
		}
		if !killed && v.DoneResults >= n/5 {
			if v.DoneResults == n {
				t.Fatal("the evaluation finished before a worker could be killed; slow the judge down")
			}
			if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = victim.wait(t, 10*time.Second)
			killed = true
			t.Logf("killed a worker at %d of %d results", v.DoneResults, n)
		}
		if v.Status == service.StatusDone {
			break
		}
		for _, w := range []*proc{victim, survivor} {
			if w == victim && killed {
				continue
			}
			select {
			case err := <-w.done:
				w.done <- err
				t.Fatalf("a worker exited (%v) at %d of %d results:\n%s", err, v.DoneResults, n, w.stderr.String())
			default:
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d results after 5 minutes\nsurvivor:\n%s", v.DoneResults, n, survivor.stderr.String())
		}
	}
	if !killed {
		t.Fatal("no worker was killed")
	}
	// Every (run, scorer) exactly once, each scored by the judge: none lost, none doubled,
	// no failure written for the killed worker's jobs.
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var total, distinct, scored, judged int64
	row := st.Pool().QueryRow(context.Background(), `SELECT COUNT(*), COUNT(DISTINCT run_pk), COUNT(*) FILTER (WHERE status = 'scored'),
		COUNT(*) FILTER (WHERE judge_model = 'judge-model') FROM results`)
	if err := row.Scan(&total, &distinct, &scored, &judged); err != nil {
		t.Fatal(err)
	}
	if total != n || distinct != n || scored != n || judged != n {
		t.Fatalf("results: %d, distinct runs %d, scored %d, judged %d; want %d each", total, distinct, scored, judged, n)
	}
	var rescued int64
	if err := st.Pool().QueryRow(context.Background(), `SELECT COUNT(*) FROM river_job WHERE attempt > 1`).Scan(&rescued); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d jobs ran more than once (the killed worker's, rescued)", rescued)
	if rescued == 0 {
		t.Fatal("no job was rescued: the killed worker held none")
	}
}

// scaleStack is what the scale-out tests run: tenant acme on a throwaway PostgreSQL with
// no judge token budget (thousands of calls are over the default), an API process that
// takes no jobs, and two worker processes, victim and survivor, judging with a judge
// that takes 20 ms a call (long enough to kill a worker mid-way); every process cuts
// chunks of 50 runs (the process that creates an evaluation cuts it).
type scaleStack struct {
	dsn                   string
	c                     client
	api, victim, survivor *proc
}

func newScaleStack(t *testing.T) *scaleStack {
	dsn := postgres(t)
	dir := t.TempDir()
	judge := judgetest.New(judgetest.Rule{Reply: `{"reasoning": "it answers", "score": 0.9}`, Delay: 20 * time.Millisecond})
	t.Cleanup(judge.Close)
	policy := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(policy, []byte(`{"judge": {"token_budget": -1}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	scorekit(t, dir, "tenants", "create", "acme", "--db", dsn, "--policy", policy)
	key := strings.TrimSpace(scorekit(t, dir, "keys", "create", "--tenant", "acme", "--db", dsn))
	addr := freeAddr(t)
	api := start(t, dir, "serve", "--addr", addr, "--db", dsn, "--workers", "0", "--chunk", "50")
	waitHealthy(t, api, addr)
	workerArgs := []string{"worker", "--db", dsn, "--workers", "4", "--chunk", "50", "--rescue-after", "3s", "--poll", "100ms",
		"--judge-url", judge.URL(), "--judge-model", "judge-model", "--judge-key-env", "none"}
	return &scaleStack{dsn: dsn, c: client{url: "http://" + addr, key: key}, api: api,
		victim: start(t, dir, workerArgs...), survivor: start(t, dir, workerArgs...)}
}
