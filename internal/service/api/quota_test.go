package api_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/buildtest"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// TestPublishQuotas: a tenant's scorers, versions and stored module bytes each stop at
// their quota with an error that names it (422 for counts, 413 for bytes) and stores
// nothing; deleting a version frees its place; a tenant's policy sets its own quotas over
// the service's.
func TestPublishQuotas(t *testing.T) {
	root := buildtest.ModuleRoot(t)
	wasmPath := filepath.Join(t.TempDir(), "ok.wasm")
	if out, err := exec.Command("wat2wasm", filepath.Join(root, "host", "wasm", "testdata", "ok.wat"), "-o", wasmPath).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm (apt-get install wabt): %v\n%s", err, out)
	}
	module, err := os.ReadFile(wasmPath)
	if err != nil {
		t.Fatal(err)
	}
	backends(t, func(t *testing.T, dsn string) {
		pc := service.PublishConfig{MaxScorers: 2, MaxVersions: 3, MaxStoredBytes: int64(len(module)) - 1}
		h := newHarness(t, dsn, servicetest.Options{Publish: pc}, "acme", "other")
		c := h.as(t, "acme")
		refusedWith := func(body map[string]any, status int, code, detail string) {
			t.Helper()
			_, r := publish(t, c, body)
			p := r.problem(t)
			if r.status != status || p.Code != code || !strings.Contains(p.Detail, detail) {
				t.Fatalf("publish %v: %d %s %q; want %d %s containing %q", body["name"], r.status, p.Code, p.Detail, status, code, detail)
			}
		}
		ok := func(body map[string]any) service.PublishedVersion {
			t.Helper()
			v, r := publish(t, c, body)
			if r.status != 201 {
				t.Fatalf("publish %v: %d %s", body["name"], r.status, r.body)
			}
			return v
		}
		ok(map[string]any{"name": "a", "base": "prescreen"})
		ok(map[string]any{"name": "b", "base": "prescreen"})
		refusedWith(map[string]any{"name": "c", "base": "prescreen"}, 422, api.CodeScorerRefused, "quota: 2 scorers")
		// Quotas are each tenant's own: another tenant publishes while acme is at its limit.
		if v, r := publish(t, h.as(t, "other"), map[string]any{"name": "c", "base": "prescreen"}); r.status != 201 || v.Version != 1 {
			t.Fatalf("another tenant's publish while acme is at its quota: %d %s", r.status, r.body)
		}
		ok(map[string]any{"name": "a", "base": "prescreen", "config": map[string]any{"cutoff_min_words": 9}})
		refusedWith(map[string]any{"name": "a", "base": "prescreen", "config": map[string]any{"cutoff_min_words": 10}}, 422, api.CodeScorerRefused, "quota: 3 versions")
		// A deleted version's place is free again.
		if r := c.do("DELETE", "/v1/scorers/a/versions/2", nil); r.status != 204 {
			t.Fatalf("delete a@2: %d %s", r.status, r.body)
		}
		ok(map[string]any{"name": "a", "base": "prescreen", "config": map[string]any{"cutoff_min_words": 10}})
		// A module over the stored-bytes quota: 413, nothing stored.
		ctx := context.Background()
		if err := h.env.Service.SetTenantPolicy(ctx, "acme", store.Policy{Quotas: store.Quotas{Scorers: 10, Versions: 10}}); err != nil {
			t.Fatal(err)
		}
		refusedWith(map[string]any{"name": "m", "module": module}, 413, api.CodeBodyTooLarge, "quota: stored module bytes")
		tn, err := h.env.Store.Tenant(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if n, _, err := h.env.Store.ModuleUsage(ctx, tn.ID); err != nil || n != 0 {
			t.Fatalf("modules stored after the refusal: %d, %v", n, err)
		}
		// The tenant's policy raises its quotas over the service's.
		if err := h.env.Service.SetTenantPolicy(ctx, "acme", store.Policy{Quotas: store.Quotas{Scorers: 10, Versions: 10, StoredBytes: 1 << 20}}); err != nil {
			t.Fatal(err)
		}
		ok(map[string]any{"name": "c", "base": "prescreen"})
		ok(map[string]any{"name": "m", "module": module})
	})
}

// TestDryRunEvaluation: dry_run answers 200 with the judge estimate, no Location, and
// creates nothing.
func TestDryRunEvaluation(t *testing.T) {
	h := newHarness(t, filepath.Join(t.TempDir(), "scorekit.db"), servicetest.Options{}, "acme", "other")
	c := h.as(t, "acme")
	if r := c.do("POST", "/v1/runs", []byte(`{"id": "r1", "agent": "bot", "input": "q?", "output": "a"}`)); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	r := c.do("POST", "/v1/agents/bot/evaluations", []byte(`{"limit": 5, "scorers": ["prescreen", "relevancy"], "dry_run": true}`))
	var v service.EvaluationView
	r.json(t, &v)
	if r.status != 200 || r.header.Get("Location") != "" || v.ID != "" || v.Runs != 1 || v.JudgeEstimate == nil || v.JudgeEstimate.JudgeCalls != 1 {
		t.Fatalf("dry run: %d %s", r.status, r.body)
	}
	// Another tenant's dry run sees none of acme's runs.
	if r := h.as(t, "other").do("POST", "/v1/agents/bot/evaluations", []byte(`{"limit": 5, "dry_run": true}`)); r.status != 404 || strings.Contains(string(r.body), "judge_estimate") {
		t.Fatalf("another tenant's dry run: %d %s", r.status, r.body)
	}
	if r := c.do("GET", "/v1/agents/bot/evaluations", nil); r.status != 200 || strings.TrimSpace(string(r.body)) != "[]" {
		t.Fatalf("evaluations after a dry run: %d %s", r.status, r.body)
	}
	if r := c.do("POST", "/v1/agents/bot/evaluations", []byte(`{"limit": 5, "scorers": ["prescreen"]}`)); r.status != 202 || r.header.Get("Location") == "" {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
}
