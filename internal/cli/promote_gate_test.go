package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/api"
)

// scorers promote under a tenant policy's promotion_gate: the refusal names both figures,
// --override promotes and prints who overrode and why, and scorers versions lists it.
func TestPromoteUnderTheAgreementGate(t *testing.T) {
	db := filepath.Join(t.TempDir(), "scorekit.db")
	if r := runCLI(t, "", "tenants", "create", "acme", "--policy", writeFile(t, "policy.json", `{"promotion_gate": true}`), "--db", db); r.code != ExitOK {
		t.Fatalf("tenants create: %d %s", r.code, r.stderr)
	}
	e := &env{stderr: &strings.Builder{}, registry: builtinRegistry}
	s, err := e.openStack(t.Context(), db, hostOptions{timeout: time.Second},
		jobFlags{workers: 1, chunk: 50, attempts: 1, rescueAfter: time.Minute, poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.close(context.Background()) })
	ctx := t.Context()
	acme, err := s.svc.Tenant(ctx, "acme")
	if err != nil || !acme.Policy.PromotionGate {
		t.Fatalf("tenant: %+v, %v", acme.Policy, err)
	}
	// Equal to the answer, equal but for case, or different; people pass the first two.
	var runs strings.Builder
	for i := range 30 {
		fmt.Fprintf(&runs, `{"id": "r%02d", "agent": "bot", "input": "q", "output": %q, "expected": "Paris", "time": %q}`+"\n",
			i, []string{"Paris", "paris", "Rome"}[i%3], time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC).Format(time.RFC3339))
	}
	if _, err := s.svc.ImportRuns(ctx, acme, []byte(runs.String()), service.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []string{`{"ignore_case": true}`, `{"ignore_case": false}`} {
		if _, err := s.svc.Publish(ctx, acme, service.PublishRequest{Name: "matcher", Base: "exact_match", Config: json.RawMessage(cfg)}); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := s.svc.CreateEvaluation(ctx, acme, "bot", service.EvaluationRequest{Limit: 30, Scorers: []string{"matcher@1", "matcher@2"}})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := s.svc.WaitEvaluation(ctx, acme, ev.ID, 30*time.Second, service.ViewOptions{}); err != nil || v.Status != service.StatusDone {
		t.Fatalf("evaluation: %+v, %v", v, err)
	}
	for i := range 30 {
		pass := i%3 != 2
		if _, _, err := s.svc.PutLabel(ctx, acme, fmt.Sprintf("r%02d", i), "matcher", service.LabelInput{Labeller: "ana", LabelValue: service.LabelValue{Passed: &pass}}); err != nil {
			t.Fatal(err)
		}
	}
	key, _, err := s.svc.CreateKey(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(api.New(s.svc, api.Options{}))
	t.Cleanup(ts.Close)
	t.Setenv("TEST_GATE_KEY", key)
	server := []string{"--server", ts.URL, "--key-env", "TEST_GATE_KEY"}

	r := runCLI(t, "", append([]string{"scorers", "promote", "matcher@2"}, server...)...)
	if r.code == ExitOK || !strings.Contains(r.stderr, "matcher@2 (candidate) has kappa 0.") || !strings.Contains(r.stderr, "matcher@1 (current) kappa 1.000") {
		t.Fatalf("promote the worse version: %d %s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "", append([]string{"scorers", "promote", "matcher@2", "--override", "the labels predate the policy"}, server...)...)
	who := service.KeyActor(key)
	if r.code != ExitOK || !strings.Contains(r.stdout, "matcher@2") || !strings.Contains(r.stdout, "gate: refused:") ||
		!strings.Contains(r.stdout, "overridden by "+who) || !strings.Contains(r.stdout, ": the labels predate the policy") {
		t.Fatalf("promote with --override: %d %s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "", append([]string{"scorers", "versions", "matcher"}, server...)...)
	if r.code != ExitOK || !strings.Contains(r.stdout, "overridden by "+who) {
		t.Fatalf("scorers versions: %d %s%s", r.code, r.stdout, r.stderr)
	}
}
