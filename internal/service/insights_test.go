package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/insights"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// example reads one of the checked-in example files of runs.
func example(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", "service", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// webhookSink records the deliveries it receives; it answers 500 to the first attempt of
// each delivery, so that every delivery is retried once.
type webhookSink struct {
	mu       sync.Mutex
	attempts map[string]int
	bodies   map[string][]byte
	sigs     map[string]string
}

func (w *webhookSink) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	id := r.Header.Get(jobs.DeliveryHeader)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.attempts[id]++
	if w.attempts[id] == 1 {
		http.Error(rw, "try again", http.StatusInternalServerError)
		return
	}
	w.bodies[id], w.sigs[id] = body, r.Header.Get(jobs.SignatureHeader)
}

func (w *webhookSink) delivered() map[string][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string][]byte{}
	for k, v := range w.bodies {
		out[k] = v
	}
	return out
}

func evaluateAndWait(t *testing.T, svc *service.Service, tenant store.Tenant, agent string, limit int) {
	t.Helper()
	ctx := context.Background()
	ev, err := svc.CreateEvaluation(ctx, tenant, agent, service.EvaluationRequest{Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	v, err := svc.WaitEvaluation(ctx, tenant, ev.ID, time.Minute, service.ViewOptions{})
	if err != nil || v.Status != service.StatusDone {
		t.Fatalf("evaluation of %s: %s, %v", agent, v.Status, err)
	}
	ok, err := svc.WaitInsights(ctx, tenant, agent, time.Minute)
	if err != nil || !ok {
		t.Fatalf("the insights of %s are not up to date after a minute: %v", agent, err)
	}
}

// The seed platform's correct runs raise no insight; the broken deploy raises a critical
// one with its evidence, which reaches the tenant's webhook signed (after a retry); the
// agent's window and the tenant's experimental list update the insights.
func TestInsightsFollowEvaluations(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		env := servicetest.New(t, dsn, servicetest.Options{})
		svc := env.Service
		tenant, err := svc.CreateTenant(ctx, "acme", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		sink := &webhookSink{attempts: map[string]int{}, bodies: map[string][]byte{}, sigs: map[string]string{}}
		hook := httptest.NewServer(sink)
		defer hook.Close()
		secret, err := svc.SetWebhook(ctx, tenant, hook.URL+"/scorekit")
		if err != nil || !strings.HasPrefix(secret, service.WebhookSecretPrefix) {
			t.Fatalf("set webhook: %q, %v", secret, err)
		}
		for _, f := range []string{"email-triage.jsonl", "assistant.jsonl"} {
			if res, err := svc.ImportRuns(ctx, tenant, example(t, f), service.ImportOptions{}); err != nil || res.Rejected != 0 {
				t.Fatalf("import %s: %+v %v", f, res, err)
			}
		}
		evaluateAndWait(t, svc, tenant, "email-triage", 270)
		evaluateAndWait(t, svc, tenant, "assistant", 40)

		// No false alarm on correct runs.
		page, err := svc.Insights(ctx, tenant, service.InsightQuery{Limit: 100, State: service.InsightsAll})
		if err != nil || len(page.Insights) != 0 {
			t.Fatalf("insights on the correct runs: %+v, %v; want none", page.Insights, err)
		}
		series, err := svc.AgentSeries(ctx, tenant, "email-triage", 1000, 20)
		if err != nil || len(series) != 1 {
			t.Fatalf("series: %+v, %v", series, err)
		}
		se := series[0]
		if se.Scorer != "prescreen" || se.Window != 100 || se.Runs != 100 || se.Scored != 100 || se.PassRate == nil || *se.PassRate < 0.9 ||
			se.TrendRuns != 270 || len(se.Trend) != 20 || !se.Trend[0].From.Before(se.Trend[19].From) {
			t.Fatalf("email-triage/prescreen = %+v", se)
		}

		// The bad deploy: 40 broken runs among the newest 100.
		if res, err := svc.ImportRuns(ctx, tenant, example(t, "email-triage-broken.jsonl"), service.ImportOptions{}); err != nil || res.Stored != 40 {
			t.Fatalf("import broken: %+v %v", res, err)
		}
		evaluateAndWait(t, svc, tenant, "email-triage", 100)
		crit, err := svc.Insights(ctx, tenant, service.InsightQuery{Limit: 100, Severity: "critical"})
		if err != nil || len(crit.Insights) == 0 {
			t.Fatalf("critical insights after the broken deploy: %+v, %v; want some", crit.Insights, err)
		}
		var gross *store.Insight
		for i, in := range crit.Insights {
			if in.Agent != "email-triage" || in.Scorer != "prescreen" {
				t.Errorf("critical insight about %s/%s; want email-triage/prescreen", in.Agent, in.Scorer)
			}
			if in.Kind == insights.KindGrossFailures {
				gross = &crit.Insights[i]
			}
		}
		if gross == nil {
			t.Fatalf("no critical gross_failures insight among %+v", crit.Insights)
		}
		ev := gross.Evidence
		if ev.Window.Runs != 100 || ev.ScorerVersion == "" || len(ev.Worst) == 0 || ev.Flags["error_text"] == 0 || ev.Measured.Low <= ev.Measured.Level {
			t.Fatalf("evidence = %+v", ev)
		}
		for _, w := range ev.Worst {
			if w.RunID <= "email-triage-0270" {
				t.Errorf("worst run %s is one of the correct runs", w.RunID)
			}
		}
		// The assistant stays quiet.
		if p, err := svc.AgentInsights(ctx, tenant, "assistant", service.InsightQuery{Limit: 10, State: service.InsightsAll}); err != nil || len(p.Insights) != 0 {
			t.Fatalf("assistant insights: %+v %v", p.Insights, err)
		}

		// Each new critical insight reaches the webhook once, signed, after one retry.
		deadline := time.Now().Add(time.Minute)
		for len(sink.delivered()) < len(crit.Insights) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		got := sink.delivered()
		if len(got) != len(crit.Insights) {
			t.Fatalf("%d deliveries; want one per critical insight (%d)", len(got), len(crit.Insights))
		}
		var ids []string
		for id, body := range got {
			if !jobs.Verify(secret, body, sink.sigs[id]) {
				t.Errorf("delivery %s: signature %q does not verify", id, sink.sigs[id])
			}
			if jobs.Verify("whsec_other", body, sink.sigs[id]) {
				t.Errorf("delivery %s verifies under another secret", id)
			}
			var e jobs.WebhookEvent
			if err := json.Unmarshal(body, &e); err != nil || e.Event != jobs.EventCritical || e.Tenant != "acme" || e.Delivery != id || e.Insight.Severity != insights.SeverityCritical {
				t.Errorf("delivery %s: %s (%v)", id, body, err)
			}
			ids = append(ids, e.Insight.ID)
			if sink.attempts[id] != 2 {
				t.Errorf("delivery %s: %d attempts; want 2 (one refused, one retried)", id, sink.attempts[id])
			}
		}
		for _, in := range crit.Insights {
			if !slices.Contains(ids, in.ID) {
				t.Errorf("critical insight %s was not delivered", in.ID)
			}
		}

		// A smaller window: the insights are recomputed over the newest 50 runs.
		if _, err := svc.SetAgentPolicy(ctx, tenant, "email-triage", store.AgentPolicy{Scorers: []string{"prescreen"}, Window: 50}); err != nil {
			t.Fatal(err)
		}
		if ok, err := svc.WaitInsights(ctx, tenant, "email-triage", time.Minute); err != nil || !ok {
			t.Fatalf("insights after the window change are not up to date: %v", err)
		}
		in, err := svc.Insight(ctx, tenant, gross.ID)
		if err != nil || in.Evidence.Window.Runs != 50 || in.ResolvedAt != nil {
			t.Fatalf("after window 50: %+v, %v", in, err)
		}
		if _, err := svc.SetAgentPolicy(ctx, tenant, "email-triage", store.AgentPolicy{Scorers: []string{"prescreen"}, Window: 20000}); !errors.Is(err, service.ErrInvalid) {
			t.Fatalf("window 20000: %v; want invalid", err)
		}

		// Experimental scorers: unknown names are refused; the list round-trips.
		if err := svc.SetExperimental(ctx, tenant, []string{"no-such-scorer"}); !errors.Is(err, service.ErrUnknownScorer) {
			t.Fatalf("experimental no-such-scorer: %v", err)
		}
		if err := svc.SetExperimental(ctx, tenant, []string{"relevancy", "prescreen", "relevancy"}); err != nil {
			t.Fatal(err)
		}
		set, err := svc.InsightSettings(ctx, tenant)
		if err != nil || !slices.Equal(set.Experimental, []string{"prescreen", "relevancy"}) || set.Webhook != hook.URL+"/scorekit" {
			t.Fatalf("settings = %+v, %v", set, err)
		}
		if ok, err := svc.WaitInsights(ctx, tenant, "", time.Minute); err != nil || !ok {
			t.Fatalf("insights after the experimental change are not up to date: %v", err)
		}

		// Another tenant sees none of it.
		other, err := svc.CreateTenant(ctx, "globex", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		if p, err := svc.Insights(ctx, other, service.InsightQuery{Limit: 10, State: service.InsightsAll}); err != nil || len(p.Insights) != 0 {
			t.Fatalf("globex sees %+v, %v", p.Insights, err)
		}
		if _, err := svc.AgentInsights(ctx, other, "email-triage", service.InsightQuery{Limit: 10}); !errors.Is(err, service.ErrNotFound) {
			t.Fatalf("globex reads acme's agent: %v", err)
		}
		if _, err := svc.Insight(ctx, other, gross.ID); !errors.Is(err, service.ErrNotFound) {
			t.Fatalf("globex reads acme's insight: %v", err)
		}
	})
}

// Deleting runs assesses their agent's insights again: once the broken deploy's runs are
// deleted, the window holds correct runs only and the gross-failures insight they raised
// is resolved, not left open on results that no longer exist.
func TestDeletedRunsReassessInsights(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		svc := servicetest.New(t, dsn, servicetest.Options{}).Service
		tenant, err := svc.CreateTenant(ctx, "acme", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		if res, err := svc.ImportRuns(ctx, tenant, example(t, "email-triage.jsonl"), service.ImportOptions{}); err != nil || res.Rejected != 0 {
			t.Fatalf("import: %+v %v", res, err)
		}
		evaluateAndWait(t, svc, tenant, "email-triage", 100)
		broken, err := svc.ImportRuns(ctx, tenant, example(t, "email-triage-broken.jsonl"), service.ImportOptions{})
		if err != nil || broken.Stored != 40 {
			t.Fatalf("import broken: %+v %v", broken, err)
		}
		evaluateAndWait(t, svc, tenant, "email-triage", 100)
		var gross *store.Insight
		crit, err := svc.Insights(ctx, tenant, service.InsightQuery{Limit: 100, Severity: "critical"})
		for i, in := range crit.Insights {
			if in.Kind == insights.KindGrossFailures {
				gross = &crit.Insights[i]
			}
		}
		if err != nil || gross == nil {
			t.Fatalf("no gross_failures insight after the broken deploy: %+v, %v", crit.Insights, err)
		}
		for _, r := range broken.Runs {
			if _, err := svc.DeleteRun(ctx, tenant, "test", r.ID); err != nil {
				t.Fatal(err)
			}
		}
		if ok, err := svc.WaitInsights(ctx, tenant, "email-triage", time.Minute); err != nil || !ok {
			t.Fatalf("the insights are not up to date a minute after the deletions: %v", err)
		}
		in, err := svc.Insight(ctx, tenant, gross.ID)
		if err != nil || in.ResolvedAt == nil {
			t.Fatalf("the gross_failures insight after its runs were deleted: resolved %v, %v; want resolved", in.ResolvedAt, err)
		}
	})
}
