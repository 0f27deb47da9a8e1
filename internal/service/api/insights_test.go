package api_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

func exampleRuns(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "service", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The insights over HTTP: none on the correct runs, a critical one with its evidence
// after the broken deploy, filters and pages; tenant B with its key gets 404 for A's
// agent and insight and an empty list, and no key gets 401 everywhere.
func TestInsightsHTTP(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		h := newHarness(t, dsn, servicetest.Options{}, "a", "b")
		a, b := h.as(t, "a"), h.as(t, "b")
		none := client{t: t, url: h.srv.URL}
		tenantA, err := h.env.Service.Tenant(context.Background(), "a")
		if err != nil {
			t.Fatal(err)
		}
		settle := func() {
			if ok, err := h.env.Service.WaitInsights(context.Background(), tenantA, "", time.Minute); err != nil || !ok {
				t.Fatalf("insights not up to date: %v", err)
			}
		}
		if r := a.do("POST", "/v1/runs", exampleRuns(t, "email-triage.jsonl")); r.status != 200 {
			t.Fatalf("import: %d %s", r.status, r.body)
		}
		evaluate(t, a, "email-triage", `{"limit": 270}`)
		var page service.InsightsPage
		r := a.do("GET", "/v1/agents/email-triage/insights?state=all&wait=30s", nil)
		r.json(t, &page)
		if r.status != 200 || len(page.Insights) != 0 {
			t.Fatalf("insights on correct runs: %d %s", r.status, r.body)
		}

		if r := a.do("POST", "/v1/runs", exampleRuns(t, "email-triage-broken.jsonl")); r.status != 200 {
			t.Fatalf("import broken: %d %s", r.status, r.body)
		}
		evaluate(t, a, "email-triage", `{"limit": 100}`)
		settle()
		r = a.do("GET", "/v1/insights?severity=critical", nil)
		r.json(t, &page)
		if r.status != 200 || len(page.Insights) == 0 {
			t.Fatalf("critical insights: %d %s", r.status, r.body)
		}
		crit := page.Insights[0]
		if crit.Severity != "critical" || crit.Agent != "email-triage" || crit.Evidence.Window.Runs != 100 || len(crit.Evidence.Worst) == 0 || !strings.Contains(crit.Title, "email-triage") {
			t.Fatalf("critical insight = %+v", crit)
		}
		var one store.Insight
		r = a.do("GET", "/v1/insights/"+crit.ID, nil)
		r.json(t, &one)
		if r.status != 200 || one.ID != crit.ID || one.Title != crit.Title {
			t.Fatalf("get insight: %d %s", r.status, r.body)
		}
		// Pages of one.
		var all service.InsightsPage
		a.do("GET", "/v1/agents/email-triage/insights", nil).json(t, &all)
		seen := map[string]bool{}
		cursor := ""
		for range len(all.Insights) + 1 {
			var p service.InsightsPage
			r := a.do("GET", "/v1/agents/email-triage/insights?limit=1&cursor="+cursor, nil)
			r.json(t, &p)
			if r.status != 200 || len(p.Insights) != 1 || seen[p.Insights[0].ID] {
				t.Fatalf("page after %q: %d %s", cursor, r.status, r.body)
			}
			seen[p.Insights[0].ID] = true
			if cursor = p.Next; cursor == "" {
				break
			}
		}
		if len(seen) != len(all.Insights) {
			t.Fatalf("paged %d insights; the agent has %d open", len(seen), len(all.Insights))
		}
		// Bad filters are 400s that say what is allowed.
		for _, q := range []string{"severity=high", "state=closed", "limit=0", "cursor=zzz", "wait=soon", "wait=1h"} {
			r := a.do("GET", "/v1/insights?"+q, nil)
			if p := r.problem(t); r.status != 400 || p.Code != api.CodeInvalidRequest || p.Detail == "" {
				t.Errorf("?%s: %d %s; want 400 invalid_request", q, r.status, r.body)
			}
		}
		// The agent's window lives in its policy.
		r = a.do("PUT", "/v1/agents/email-triage/policy", []byte(`{"scorers": ["prescreen"], "sample_rate": 0, "window": 50}`))
		if r.status != 200 || !strings.Contains(string(r.body), `"window":50`) {
			t.Fatalf("policy with a window: %d %s", r.status, r.body)
		}
		if r := a.do("PUT", "/v1/agents/email-triage/policy", []byte(`{"scorers": ["prescreen"], "sample_rate": 0, "window": 100000}`)); r.status != 400 {
			t.Fatalf("window 100000: %d %s", r.status, r.body)
		}
		settle()
		a.do("GET", "/v1/insights/"+crit.ID, nil).json(t, &one)
		if one.Evidence.Window.Runs != 50 {
			t.Fatalf("after window 50 the insight measures %d runs", one.Evidence.Window.Runs)
		}

		// Isolation.
		for _, c := range []struct {
			path    string
			bStatus int
		}{
			{"/v1/agents/email-triage/insights", 404},
			{"/v1/agents/email-triage/insights?state=all", 404},
			{"/v1/insights/" + crit.ID, 404},
			{"/v1/insights", 200},
			{"/v1/insights?severity=critical&state=all", 200},
		} {
			r := b.do("GET", c.path, nil)
			leaks := strings.Contains(string(r.body), "evidence") || strings.Contains(string(r.body), crit.Title) ||
				(c.bStatus == 200 && (strings.Contains(string(r.body), crit.ID) || strings.Contains(string(r.body), "email-triage")))
			if r.status != c.bStatus || leaks {
				t.Errorf("B GET %s: %d %s; want %d and nothing of A's", c.path, r.status, r.body, c.bStatus)
			}
			if r := none.do("GET", c.path, nil); r.status != http.StatusUnauthorized || r.problem(t).Code != api.CodeUnauthorized {
				t.Errorf("no key GET %s: %d %s; want 401", c.path, r.status, r.body)
			}
		}
	})
}
