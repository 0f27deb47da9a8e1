package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// A tiered evaluation needs the pre-screen to gate the judge scorers. When the tenant's
// policy does not allow it, tiering is refused with a message that names the fix, on a
// request and on an agent's policy alike; untiered evaluations of the same scorers run.
func TestTieredNeedsThePrescreenAllowed(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		svc := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true}).Service
		tenant, err := svc.CreateTenant(ctx, "acme", store.Policy{Scorers: []string{"relevancy", "completeness"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.ImportRuns(ctx, tenant, []byte(`{"id": "r1", "agent": "bot", "input": "q?", "output": "a."}`), service.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		tiered, untiered := true, false
		for _, tt := range []struct {
			name string
			do   func() error
			ok   bool
		}{
			{"request, tiered", func() error {
				_, err := svc.CreateEvaluation(ctx, tenant, "bot", service.EvaluationRequest{Limit: 1, Scorers: []string{"relevancy"}, Tiered: &tiered})
				return err
			}, false},
			{"agent policy, tiered", func() error {
				_, err := svc.SetAgentPolicy(ctx, tenant, "bot", store.AgentPolicy{Scorers: []string{"relevancy"}, SampleRate: 1, Tiered: true})
				return err
			}, false},
			{"request, untiered", func() error {
				_, err := svc.CreateEvaluation(ctx, tenant, "bot", service.EvaluationRequest{Limit: 1, Scorers: []string{"relevancy"}, Tiered: &untiered})
				return err
			}, true},
		} {
			t.Run(tt.name, func(t *testing.T) {
				err := tt.do()
				if tt.ok {
					if err != nil {
						t.Fatal(err)
					}
					return
				}
				if !errors.Is(err, service.ErrNotAllowed) {
					t.Fatalf("err = %v; want ErrNotAllowed", err)
				}
				for _, want := range []string{"tiered", `"prescreen"`, `add "prescreen" to tenant acme's scorers`, "or set tiered to false"} {
					if !strings.Contains(err.Error(), want) {
						t.Fatalf("error %q does not say %q", err, want)
					}
				}
			})
		}
	})
}

// A stored result whose body does not decode is shown with the reason, from the columns
// that did, instead of as a result with nothing to say.
func TestStoredResultThatDoesNotDecodeIsReported(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		env := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true})
		svc := env.Service
		tenant, err := svc.CreateTenant(ctx, "acme", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		body := `{"id": "good", "agent": "bot", "input": "q?", "output": "a.", "time": "2025-01-01T00:00:00Z"}
{"id": "bad", "agent": "bot", "input": "q?", "output": "a.", "time": "2025-01-02T00:00:00Z"}`
		if _, err := svc.ImportRuns(ctx, tenant, []byte(body), service.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		ev, err := svc.CreateEvaluation(ctx, tenant, "bot", service.EvaluationRequest{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		stored, err := env.Store.Evaluation(ctx, tenant.ID, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		one := 1.0
		var rs []store.Result
		for id, body := range map[string]string{
			// Valid JSON (both backends store it), but "dimensions" is not an object.
			"bad":  `{"status":"scored","score":1,"dimensions":[1]}`,
			"good": `{"status":"scored","score":1,"reason":"fine"}`,
		} {
			r, err := env.Store.Run(ctx, tenant.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, store.Result{TenantID: tenant.ID, EvaluationPK: stored.PK, RunPK: r.PK, Scorer: "prescreen", ScorerVersion: "1",
				Status: "scored", Score: &one, Body: json.RawMessage(body)})
		}
		if _, err := env.Store.InsertResults(ctx, rs); err != nil {
			t.Fatal(err)
		}
		v, err := svc.Evaluation(ctx, tenant, ev.ID, service.ViewOptions{Results: true})
		if err != nil {
			t.Fatal(err)
		}
		run, err := svc.Run(ctx, tenant, "bad", false)
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Results) != 2 || len(run.Results) != 1 {
			t.Fatalf("%d results in the evaluation, %d on the run; want 2 and 1", len(v.Results), len(run.Results))
		}
		for _, r := range append(v.Results, run.Results...) {
			switch r.RunID {
			case "bad":
				if !strings.Contains(r.DecodeError, "dimensions") || r.Score == nil || *r.Score != 1 || r.Status != "scored" {
					t.Fatalf("result of run bad: %+v; want its stored status and score, and a decode error naming the field", r)
				}
			case "good":
				if r.DecodeError != "" || r.Reason != "fine" {
					t.Fatalf("result of run good: %+v; want its reason and no decode error", r)
				}
			}
		}
	})
}
