package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/pgtest"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/insights"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/service/web"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// instance is a seeded service behind the dashboard: tenant a has the example runs
// (email-triage with its broken deploy, assistant) evaluated by the real workers, and
// optionally an agent with 10,000 evaluated runs; tenant b has one run of its own.
type instance struct {
	env        *servicetest.Env
	srv        *httptest.Server
	keyA, keyB string
	a, b       store.Tenant
	// evaluation is the broken deploy's evaluation; critical one of its critical insights.
	evaluation string
	critical   store.Insight
}

// loadAgent is the agent with 10,000 runs.
const loadAgent = "load-test"

func examples(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "service", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func seed(t testing.TB, dsn string, load int, o web.Options) *instance {
	t.Helper()
	ctx := context.Background()
	env := servicetest.New(t, dsn, servicetest.Options{})
	svc := env.Service
	in := &instance{env: env}
	var err error
	for _, name := range []string{"a", "b"} {
		tn, err := svc.CreateTenant(ctx, name, store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		key, _, err := svc.CreateKey(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if name == "a" {
			in.a, in.keyA = tn, key
		} else {
			in.b, in.keyB = tn, key
		}
	}
	evaluate := func(agent string, limit int) string {
		ev, err := svc.CreateEvaluation(ctx, in.a, agent, service.EvaluationRequest{Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if v, err := svc.WaitEvaluation(ctx, in.a, ev.ID, time.Minute, service.ViewOptions{}); err != nil || v.Status != service.StatusDone {
			t.Fatalf("evaluation of %s: %v", agent, err)
		}
		return ev.ID
	}
	for _, f := range []string{"email-triage.jsonl", "assistant.jsonl"} {
		if _, err := svc.ImportRuns(ctx, in.a, examples(t, f), service.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	evaluate("email-triage", 270)
	evaluate("assistant", 40)
	if _, err := svc.ImportRuns(ctx, in.a, examples(t, "email-triage-broken.jsonl"), service.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	in.evaluation = evaluate("email-triage", 100)
	if load > 0 {
		seedLoad(t, env, in.a, loadAgent, load)
	}
	if ok, err := svc.WaitInsights(ctx, in.a, "", time.Minute); err != nil || !ok {
		t.Fatalf("insights not up to date: %v", err)
	}
	crit, err := svc.Insights(ctx, in.a, service.InsightQuery{Limit: 10, Severity: string(insights.SeverityCritical)})
	if err != nil || len(crit.Insights) == 0 {
		t.Fatalf("the broken deploy raised no critical insight: %v", err)
	}
	in.critical = crit.Insights[0]
	if _, err := svc.ImportRuns(ctx, in.b, []byte(`{"id": "b-run", "agent": "b-agent", "input": "q", "output": "a"}`), service.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	o.Next = api.New(svc, api.Options{Open: o.Open})
	h, err := web.New(svc, o)
	if err != nil {
		t.Fatal(err)
	}
	in.srv = httptest.NewServer(h)
	t.Cleanup(in.srv.Close)
	return in
}

// agentPrefix is the run id prefix of a loaded agent: load-00042 for load-test.
func agentPrefix(agent string) string {
	if agent == loadAgent {
		return "load"
	}
	return agent
}

// seedLoad stores n runs of agent with a prescreen result each, as an evaluation
// would (written straight to the store: the point is what the dashboard reads), and
// updates the series' insights through the real job.
func seedLoad(t testing.TB, env *servicetest.Env, tenant store.Tenant, agent string, n int) {
	t.Helper()
	ctx := context.Background()
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	runs := make([]store.NewRun, n)
	for i := range runs {
		id := fmt.Sprintf("%s-%05d", agentPrefix(agent), i)
		at := start.Add(time.Duration(i) * time.Minute)
		body, _ := json.Marshal(map[string]any{"id": id, "agent": agent, "time": at, "input": fmt.Sprintf("question %d", i), "output": fmt.Sprintf("answer %d", i)})
		runs[i] = store.NewRun{ID: id, Agent: agent, Time: at, Body: body}
	}
	// Several small transactions: on SQLite, one connection serves the workers too.
	var (
		pks []int64
		ev  store.Evaluation
	)
	for lo := 0; lo < n; lo += 1000 {
		err := env.Store.InTx(ctx, func(tx *store.Tx) error {
			got, err := tx.PutRuns(ctx, tenant.ID, runs[lo:min(lo+1000, n)])
			pks = append(pks, got...)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	order := slices.Clone(pks)
	slices.Reverse(order) // an evaluation lists its runs newest first
	err := env.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		ev, err = tx.CreateEvaluation(ctx, store.NewEvaluation{TenantID: tenant.ID, Agent: agent, Trigger: store.TriggerRequest,
			Spec: store.Spec{Limit: n, Scorers: []store.ScorerRef{{Name: "prescreen", Version: "0.1.0"}}}, RunPKs: order})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < n; lo += 1000 {
		err := env.Store.InTx(ctx, func(tx *store.Tx) error {
			var results []store.Result
			for i := lo; i < min(lo+1000, n); i++ {
				score := 0.55 + 0.45*float64((i*37)%100)/100 // varied, every one passing
				passed := true
				body, _ := json.Marshal(map[string]any{"status": "scored", "score": score, "passed": passed, "reason": "seeded"})
				results = append(results, store.Result{TenantID: tenant.ID, EvaluationPK: ev.PK, RunPK: pks[i], Scorer: "prescreen", ScorerVersion: "0.1.0",
					Status: "scored", Score: &score, Passed: &passed, Body: body, CreatedAt: start.Add(time.Duration(n+i) * time.Minute)})
			}
			_, err := tx.InsertResults(ctx, results)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	err = env.Store.InTx(ctx, func(tx *store.Tx) error {
		return env.Queue.RefreshInsights(ctx, tx, tenant.ID, agent, []string{"prescreen"})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func backends(t *testing.T, f func(t *testing.T, dsn string)) {
	t.Run("sqlite", func(t *testing.T) { f(t, filepath.Join(t.TempDir(), "scorekit.db")) })
	t.Run("postgres", func(t *testing.T) { f(t, pgtest.Shared(t).Database(t)) })
}

func newJar(t testing.TB) http.CookieJar {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return jar
}
