package service_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/wasm"
	"github.com/scorekit/scorekit/internal/pgtest"
	"github.com/scorekit/scorekit/internal/seed"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// TestMain runs a module's check when the tests' publish started this binary as its child
// (wasm.VetChild), and otherwise the tests, with a PostgreSQL when they ask for one.
func TestMain(m *testing.M) {
	if code, ok := wasm.VetChild(); ok {
		os.Exit(code)
	}
	pgtest.Main(m)
}

func backends(t *testing.T, f func(t *testing.T, dsn string)) { servicetest.Backends(t, f) }

func seedSet(t *testing.T) seed.Set { return servicetest.Seed(t) }

func jsonl(t *testing.T, runs any) []byte {
	var b []byte
	switch rs := runs.(type) {
	case seed.File:
		out, err := seed.Encode(rs.Runs)
		if err != nil {
			t.Fatal(err)
		}
		b = out
	}
	return b
}

func TestImportEvaluateAndCompareVersions(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		set := seedSet(t)
		env := servicetest.New(t, dsn, servicetest.Options{})
		svc := env.Service
		tenant, err := svc.CreateTenant(ctx, "acme", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		files := set.Files()
		for _, f := range files[:2] {
			res, err := svc.ImportRuns(ctx, tenant, jsonl(t, f), service.ImportOptions{})
			if err != nil || res.Stored != len(f.Runs) || res.Rejected != 0 {
				t.Fatalf("import %s: %+v, %v", f.Name, res, err)
			}
			again, err := svc.ImportRuns(ctx, tenant, jsonl(t, f), service.ImportOptions{})
			if err != nil || again.Stored != 0 || again.Duplicates != len(f.Runs) {
				t.Fatalf("import %s again: stored %d, duplicates %d, %v", f.Name, again.Stored, again.Duplicates, err)
			}
		}
		ev, err := svc.CreateEvaluation(ctx, tenant, seed.AgentEmailTriage, service.EvaluationRequest{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		v, err := svc.WaitEvaluation(ctx, tenant, ev.ID, 30*time.Second, service.ViewOptions{Results: true})
		if err != nil || v.Status != service.StatusDone || len(v.Results) != 10 {
			t.Fatalf("evaluation: status %s, %d results, %v", v.Status, len(v.Results), err)
		}
		// Exactly the 10 newest runs, newest first.
		newest := set.EmailTriage[len(set.EmailTriage)-10:]
		for i, r := range v.Results {
			if want := newest[9-i].ID; r.RunID != want {
				t.Fatalf("result %d is run %s; want %s (the newest first)", i, r.RunID, want)
			}
			if r.Previous != nil {
				t.Fatalf("first evaluation shows a previous result")
			}
		}
		sum := v.Scorers[0]
		if sum.Name != "prescreen" || sum.Scored != 10 || sum.Mean == nil || sum.PassRate == nil || *sum.PassRate < 0.8 {
			t.Fatalf("summary = %+v; the seed's correct triage runs should pass the pre-screen", sum)
		}
		oldVersion := sum.Version
		// The scorer is fixed: a new version on the same data (and the old workers gone).
		if err := env.Queue.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		env2 := servicetest.New(t, dsn, servicetest.Options{Host: host.New(servicetest.Registry(t, map[string]string{"prescreen": oldVersion + "-fix"}))})
		ev2, err := env2.Service.CreateEvaluation(ctx, tenant, seed.AgentEmailTriage, service.EvaluationRequest{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		v2, err := env2.Service.WaitEvaluation(ctx, tenant, ev2.ID, 30*time.Second, service.ViewOptions{Results: true})
		if err != nil || v2.Status != service.StatusDone {
			t.Fatalf("second evaluation: %+v, %v", v2, err)
		}
		if p := v2.Scorers[0].Previous; p == nil || p.Runs != 10 || p.Versions[0] != oldVersion {
			t.Fatalf("summary previous = %+v; want the 10 runs of version %s", p, oldVersion)
		}
		for _, r := range v2.Results {
			if r.ScorerVersion != oldVersion+"-fix" || r.Previous == nil || r.Previous.ScorerVersion != oldVersion || r.Previous.EvaluationID != ev.ID {
				t.Fatalf("result %+v; want the new version with the old one beside it", r)
			}
		}
		// The run keeps both results.
		rv, err := svc.Run(ctx, tenant, newest[9].ID, false)
		if err != nil || len(rv.Results) != 2 {
			t.Fatalf("run history: %d results, %v", len(rv.Results), err)
		}
	})
}

func TestImportRejectsBadLinesKeepsGoodOnes(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		svc := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true}).Service
		tenant, _ := svc.CreateTenant(ctx, "acme", store.Policy{})
		body := strings.Join([]string{
			`{"id": "a", "agent": "bot", "input": "q", "output": "fine"}`,
			`{"id": "b", "agent": "bot", "input": "q"`,
			``,
			`{"id": "c", "input": "q", "output": "no agent"}`,
			`{"id": "d", "agent": "bot", "input": "q", "output": 3}`,
			`{"id": "a", "agent": "bot", "input": "q", "output": "again"}`,
			`{"agent": "bot", "input": "q", "output": "no id"}`,
		}, "\n")
		res, err := svc.ImportRuns(ctx, tenant, []byte(body), service.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Stored != 2 || res.Rejected != 3 || res.Duplicates != 1 {
			t.Fatalf("stored %d rejected %d duplicates %d: %+v", res.Stored, res.Rejected, res.Duplicates, res.Runs)
		}
		want := map[int]string{2: "", 4: `missing "agent"`, 5: "output"}
		for _, r := range res.Runs {
			if w, ok := want[r.Line]; ok {
				if r.Status != service.RunRejected || !strings.Contains(r.Error, w) || strings.Contains(r.Error, "run: run:") {
					t.Fatalf("line %d: %+v; want rejected naming %q", r.Line, r, w)
				}
			}
		}
		if _, err := svc.Run(ctx, tenant, "b", false); !errors.Is(err, service.ErrNotFound) {
			t.Fatalf("a rejected run was stored: %v", err)
		}
		// The same body with --agent fills in the agent of line 4.
		res, err = svc.ImportRuns(ctx, tenant, []byte(body), service.ImportOptions{Agent: "bot"})
		if err != nil || res.Stored != 1 || res.Rejected != 2 {
			t.Fatalf("with agent: %+v, %v", res, err)
		}
		// A JSON array is one body; invalid JSON stores nothing.
		if _, err := svc.ImportRuns(ctx, tenant, []byte(`[{"id": "z", "agent": "bot", "output": "x"},`), service.ImportOptions{}); !errors.Is(err, service.ErrInvalid) {
			t.Fatalf("broken array: %v", err)
		}
		if _, err := svc.Run(ctx, tenant, "z", false); !errors.Is(err, service.ErrNotFound) {
			t.Fatalf("a run of a broken array was stored: %v", err)
		}
		for _, limit := range []int{0, -1, 1e9} {
			if _, err := svc.CreateEvaluation(ctx, tenant, "bot", service.EvaluationRequest{Limit: limit}); !errors.Is(err, service.ErrInvalid) || !strings.Contains(err.Error(), "want 1 to") {
				t.Fatalf("limit %d: %v", limit, err)
			}
		}
		if _, err := svc.CreateEvaluation(ctx, tenant, "bot", service.EvaluationRequest{Limit: 1, Scorers: []string{"nope"}}); !errors.Is(err, service.ErrUnknownScorer) {
			t.Fatalf("unknown scorer: %v", err)
		}
		if _, err := svc.CreateEvaluation(ctx, tenant, "ghost", service.EvaluationRequest{Limit: 1}); !errors.Is(err, service.ErrNotFound) {
			t.Fatalf("unknown agent: %v", err)
		}
	})
}

func TestPolicyEvaluatesOnArrival(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		set := seedSet(t)
		svc := servicetest.New(t, dsn, servicetest.Options{}).Service
		tenant, _ := svc.CreateTenant(ctx, "acme", store.Policy{})
		if _, err := svc.SetAgentPolicy(ctx, tenant, seed.AgentAssistant, store.AgentPolicy{Scorers: []string{"prescreen"}, SampleRate: 0.5}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.SetAgentPolicy(ctx, tenant, "x", store.AgentPolicy{Scorers: []string{"prescreen"}, SampleRate: 2}); !errors.Is(err, service.ErrInvalid) {
			t.Fatalf("sample rate 2: %v", err)
		}
		res, err := svc.ImportRuns(ctx, tenant, jsonl(t, set.Files()[1]), service.ImportOptions{})
		if err != nil || len(res.Evaluations) != 1 {
			t.Fatalf("import: %v evaluations %v", err, res.Evaluations)
		}
		v, err := svc.WaitEvaluation(ctx, tenant, res.Evaluations[0], 30*time.Second, service.ViewOptions{})
		if err != nil || v.Status != service.StatusDone || v.Trigger != store.TriggerArrival {
			t.Fatalf("arrival evaluation: %+v, %v", v, err)
		}
		// About half of the 40 runs, decided by run id.
		if v.Runs < 10 || v.Runs > 30 {
			t.Fatalf("sampled %d of 40 runs at rate 0.5", v.Runs)
		}
		// Re-sending the runs stores nothing and starts nothing.
		again, err := svc.ImportRuns(ctx, tenant, jsonl(t, set.Files()[1]), service.ImportOptions{})
		if err != nil || len(again.Evaluations) != 0 {
			t.Fatalf("import again: %v, %v", again.Evaluations, err)
		}
	})
}
