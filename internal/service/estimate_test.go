package service_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// TestJudgeEstimate: an evaluation says what its judge calls will cost, and with dry_run
// says it before anything is created: one call a run while the agent has no result of the
// scorer to measure from, then the measured calls and tokens of its latest results, next
// to the tenant's token budget; a scorer without a judge costs nothing.
func TestJudgeEstimate(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		srv := judgetest.New(judgetest.Rule{Reply: `{"reasoning": "it answers the question asked", "score": 0.9}`})
		defer srv.Close()
		b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge-model", MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		svc := servicetest.New(t, dsn, servicetest.Options{Judge: b}).Service
		tenant, err := svc.CreateTenant(ctx, "acme", store.Policy{Judge: store.JudgeLimits{TokenBudget: 50000}})
		if err != nil {
			t.Fatal(err)
		}
		var runs strings.Builder
		for i := range 8 {
			fmt.Fprintf(&runs, `{"id": "r%d", "agent": "bot", "input": "What is %d + %d?", "output": "%d"}`+"\n", i, i, i, 2*i)
		}
		if _, err := svc.ImportRuns(ctx, tenant, []byte(runs.String()), service.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		dry := func(scorers ...string) service.EvaluationView {
			t.Helper()
			before, _ := svc.Evaluations(ctx, tenant, "bot", 100)
			v, err := svc.CreateEvaluation(ctx, tenant, "bot", service.EvaluationRequest{Limit: 4, Scorers: scorers, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			after, _ := svc.Evaluations(ctx, tenant, "bot", 100)
			if v.ID != "" || v.Status != "dry_run" || len(after) != len(before) || v.Runs != 4 || v.JudgeEstimate == nil {
				t.Fatalf("dry run: %+v; %d evaluations before, %d after; want nothing created", v, len(before), len(after))
			}
			return v
		}
		if e := dry("prescreen").JudgeEstimate; e.JudgeCalls != 0 || !strings.Contains(e.Basis, "no scorer of this evaluation calls a judge") {
			t.Fatalf("prescreen: %+v", e)
		}
		if e := dry("relevancy").JudgeEstimate; e.JudgeCalls != 4 || e.Tokens != 0 || !strings.Contains(e.Basis, "no earlier scored result") {
			t.Fatalf("relevancy before any result: %+v", e)
		}
		calls := srv.Calls()
		ev, err := svc.CreateEvaluation(ctx, tenant, "bot", service.EvaluationRequest{Limit: 8, Scorers: []string{"relevancy"}})
		if err != nil || ev.JudgeEstimate == nil || ev.JudgeEstimate.JudgeCalls != 8 {
			t.Fatalf("create: %+v, %v", ev.JudgeEstimate, err)
		}
		if v, err := svc.WaitEvaluation(ctx, tenant, ev.ID, time.Minute, service.ViewOptions{}); err != nil || v.Status != service.StatusDone {
			t.Fatalf("evaluation: %v", err)
		}
		perRun := float64(srv.Calls()-calls) / 8
		e := dry("relevancy").JudgeEstimate
		if e.JudgeCalls != 4*perRun || e.Tokens <= 0 || e.TokenBudget != 50000 || !strings.Contains(e.Basis, "the mean of its latest 8 scored results") {
			t.Fatalf("relevancy after 8 results (%.1f judge calls a run): %+v", perRun, e)
		}
	})
}
