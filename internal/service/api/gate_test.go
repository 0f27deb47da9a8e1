package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/agreement"
	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// TestPromotionGateOverHTTP: with the tenant's promotion_gate set, promoting a version
// that agrees less with the labels is a 409 agreement_gate naming both figures; the same
// request with an override is promoted, and the versions listing shows the override with
// the key that made it.
func TestPromotionGateOverHTTP(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		h := newHarness(t, dsn, servicetest.Options{}, "acme")
		if err := h.env.Service.SetTenantPolicy(context.Background(), "acme", store.Policy{PromotionGate: true}); err != nil {
			t.Fatal(err)
		}
		c := h.as(t, "acme")
		// Runs equal to the answer, equal but for case, or different; people pass the
		// first two kinds.
		var runs strings.Builder
		for i := range 36 {
			fmt.Fprintf(&runs, `{"id": "r%02d", "agent": "bot", "input": "capital of France?", "output": %q, "expected": "Paris", "time": %q}`+"\n",
				i, []string{"Paris", "PARIS", "Rome"}[i%3], time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC).Format(time.RFC3339))
		}
		if r := c.do("POST", "/v1/runs", []byte(runs.String())); r.status != 200 {
			t.Fatalf("import: %d %s", r.status, r.body)
		}
		for _, cfg := range []map[string]any{{"ignore_case": true}, {"ignore_case": false}} {
			if _, r := publish(t, c, map[string]any{"name": "matcher", "base": "exact_match", "config": cfg}); r.status != http.StatusCreated {
				t.Fatalf("publish: %d %s", r.status, r.body)
			}
		}
		if v := evaluate(t, c, "bot", `{"limit": 36, "scorers": ["matcher@1", "matcher@2"]}`); len(v.Results) != 72 {
			t.Fatalf("evaluation: %d results", len(v.Results))
		}
		for i := range 36 {
			body := fmt.Sprintf(`{"labeller": "ana", "passed": %t}`, i%3 != 2)
			if r := c.do("PUT", fmt.Sprintf("/v1/runs/r%02d/labels/matcher", i), []byte(body)); r.status != http.StatusCreated {
				t.Fatalf("label: %d %s", r.status, r.body)
			}
		}

		r := c.do("POST", "/v1/scorers/matcher/versions/2/promote", nil)
		if p := r.problem(t); r.status != http.StatusConflict || p.Code != api.CodeAgreementGate ||
			!strings.Contains(p.Detail, "matcher@2 (candidate) has kappa 0.") || !strings.Contains(p.Detail, "matcher@1 (current) kappa 1.000") ||
			!strings.Contains(p.Detail, "36 labelled runs") || !strings.Contains(p.Detail, `"override"`) {
			t.Fatalf("promote the worse version: %d %s", r.status, r.body)
		}
		r = c.do("POST", "/v1/scorers/matcher/versions/2/promote", []byte(`{"override": "the labels predate the policy"}`))
		var v service.PublishedVersion
		if r.json(t, &v); r.status != http.StatusOK || !v.Promoted || v.Gate == nil || v.Gate.Report.Decision != agreement.Refuse || v.Gate.Override == nil {
			t.Fatalf("override: %d %s", r.status, r.body)
		}
		r = c.do("GET", "/v1/scorers/matcher/versions", nil)
		var vs []service.PublishedVersion
		if r.json(t, &vs); len(vs) != 2 || len(vs[1].Promotions) != 1 || vs[1].Promotions[0].Gate == nil {
			t.Fatalf("versions: %s", r.body)
		}
		o := vs[1].Promotions[0].Gate.Override
		if o == nil || o.Reason != "the labels predate the policy" || o.By != service.KeyActor(h.keys["acme"]) || vs[1].Promotions[0].Gate.Report.Runs != 36 {
			t.Fatalf("the recorded override: %s", r.body)
		}
	})
}
