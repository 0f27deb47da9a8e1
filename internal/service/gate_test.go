package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/agreement"
	"github.com/scorekit/scorekit/internal/service/insights"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// gateTenant makes a tenant with n runs whose output equals the expected answer
// (every third), differs from it only in case (every third), or differs (the rest);
// people label a run pass when output and answer are equal but for case. It publishes
// matcher@1 (exact_match ignoring case: agrees with every label) and matcher@2 (exact
// match: fails the runs that differ in case), promotes @1 (the first version is promoted
// at publish) and scores every run with both.
func gateTenant(t *testing.T, ctx context.Context, svc *service.Service, name string, p store.Policy, n int) store.Tenant {
	t.Helper()
	tn, err := svc.CreateTenant(ctx, name, p)
	if err != nil {
		t.Fatal(err)
	}
	var body strings.Builder
	labels := map[string]bool{}
	for i := range n {
		out := []string{"Paris", "paris", "Lyon"}[i%3]
		id := fmt.Sprintf("r%02d", i)
		fmt.Fprintf(&body, `{"id": %q, "agent": "bot", "input": "capital of France?", "output": %q, "expected": "Paris", "time": %q}`+"\n",
			id, out, time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC).Format(time.RFC3339))
		labels[id] = i%3 != 2
	}
	if _, err := svc.ImportRuns(ctx, tn, []byte(body.String()), service.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []string{`{"ignore_case": true}`, `{"ignore_case": false}`} {
		if _, err := svc.Publish(ctx, tn, service.PublishRequest{Name: "matcher", Base: "exact_match", Config: json.RawMessage(cfg)}); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := svc.CreateEvaluation(ctx, tn, "bot", service.EvaluationRequest{Limit: n, Scorers: []string{"matcher@1", "matcher@2"}})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := svc.WaitEvaluation(ctx, tn, ev.ID, time.Minute, service.ViewOptions{Results: true}); err != nil || v.Status != service.StatusDone || len(v.Results) != 2*n {
		t.Fatalf("evaluation: %s, %d results, %v", v.Status, len(v.Results), err)
	}
	for id, pass := range labels {
		if _, _, err := svc.PutLabel(ctx, tn, id, "matcher", service.LabelInput{Labeller: "ana", LabelValue: service.LabelValue{Passed: &pass}}); err != nil {
			t.Fatal(err)
		}
	}
	return tn
}

// TestPromotionGate: under the tenant's gate a version that agrees less with the labels
// is refused with both figures; an override lets it through and is recorded with its
// reason, who and the figures; the better version is accepted with the gate's report;
// under 30 labelled runs the gate says so and lets the promotion through; a tenant
// without the gate promotes as before.
func TestPromotionGate(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		env := servicetest.New(t, dsn, servicetest.Options{})
		svc := env.Service
		gated := gateTenant(t, ctx, svc, "acme", store.Policy{PromotionGate: true}, 40)

		// matcher@2 fails the 13 runs that differ in case: its kappa is lower.
		_, err := svc.Promote(ctx, gated, "matcher", 2, service.PromoteOptions{Actor: "key sk_12345678"})
		if !errors.Is(err, service.ErrGate) {
			t.Fatalf("promote the worse version: %v; want the gate's refusal", err)
		}
		for _, want := range []string{"matcher@2 (candidate) has kappa 0.", "matcher@1 (current) kappa 1.000 [", "same 40 labelled runs", "interval of -", "override"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("refusal %q does not say %q", err, want)
			}
		}
		if vs, _ := svc.ScorerVersions(ctx, gated, "matcher"); !vs[0].Promoted || vs[1].Promoted || len(vs[1].Promotions) != 0 {
			t.Fatalf("after the refusal: %+v; want @1 still promoted", vs)
		}
		// Both kappas were measured: the insights read them (a version under 0.4 raises
		// no critical insight, internal/service/insights TestLowAgreement).
		cfg, err := jobs.InsightConfig(ctx, env.Store, gated.ID, "bot")
		if err != nil || len(cfg.Agreements) != 2 || cfg.Agreements[0] != (insights.Agreement{Scorer: "matcher", Version: "2", Kappa: cfg.Agreements[0].Kappa, Runs: 40}) ||
			cfg.Agreements[0].Kappa >= 1 || cfg.Agreements[1] != (insights.Agreement{Scorer: "matcher", Version: "1", Kappa: 1, Runs: 40}) {
			t.Fatalf("measured kappas: %+v, %v", cfg.Agreements, err)
		}

		// The agreement of the version scored beside the promoted one (its results are
		// under matcher@2) is found by its number, as the gate found it.
		ag, err := svc.ScorerAgreement(ctx, gated, service.AgreementRequest{Scorer: "matcher", Version: "2"})
		if err != nil || ag.PassFail == nil || ag.PassFail.Runs != 40 || ag.PassFail.Kappa.Value >= 1 {
			t.Fatalf("agreement of matcher@2 before its promotion: %+v, %v", ag.PassFail, err)
		}

		// The override lets it through, recorded with the figures.
		v, err := svc.Promote(ctx, gated, "matcher", 2, service.PromoteOptions{Override: "  the labels predate the new policy ", Actor: "key sk_12345678"})
		if err != nil || !v.Promoted || v.Gate == nil || v.Gate.Report.Decision != agreement.Refuse || v.Gate.Override == nil {
			t.Fatalf("override: %+v, %v", v, err)
		}
		vs, err := svc.ScorerVersions(ctx, gated, "matcher")
		if err != nil || len(vs) != 2 || !vs[1].Promoted || len(vs[1].Promotions) != 1 {
			t.Fatalf("versions after the override: %+v, %v", vs, err)
		}
		g := vs[1].Promotions[0].Gate
		if g == nil || g.Override == nil || g.Override.Reason != "the labels predate the new policy" || g.Override.By != "key sk_12345678" || g.Override.At.IsZero() ||
			g.Report.Runs != 40 || g.Report.Candidate.Value >= g.Report.Current.Value || g.Report.Current.Value != 1 || g.Report.Difference.High >= 0 || g.Current != "matcher@1" {
			t.Fatalf("recorded promotion: %+v", g)
		}

		// Back to @1: it agrees more, accepted, the report in the answer and the record.
		v, err = svc.Promote(ctx, gated, "matcher", 1, service.PromoteOptions{Override: "not needed"})
		if err != nil || !v.Promoted || v.Gate == nil || v.Gate.Report.Decision != agreement.Accept || v.Gate.Override != nil ||
			v.Gate.Report.Candidate.Value != 1 || v.Gate.Report.Runs != 40 || !strings.HasPrefix(v.Gate.Report.Reason, "accepted") {
			t.Fatalf("promote the better version: %+v, %v", v.Gate, err)
		}
		if vs, _ := svc.ScorerVersions(ctx, gated, "matcher"); len(vs[0].Promotions) != 2 || vs[0].Promotions[0].Gate == nil || vs[0].Promotions[1].Gate != nil {
			t.Fatalf("@1's promotions: %+v; want the gated one, then the one at publish", vs[0].Promotions)
		}

		// A version that replaces the service's scorer is compared with that scorer (the
		// default exact_match, case-sensitive, fails the runs that differ in case).
		if _, err := svc.Publish(ctx, gated, service.PublishRequest{Name: "exact_match", Replaces: true, Base: "exact_match", Config: json.RawMessage(`{"ignore_case": true}`)}); err != nil {
			t.Fatal(err)
		}
		ev, err := svc.CreateEvaluation(ctx, gated, "bot", service.EvaluationRequest{Limit: 40, Scorers: []string{"exact_match", "exact_match@1"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.WaitEvaluation(ctx, gated, ev.ID, time.Minute, service.ViewOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := range 40 {
			pass := i%3 != 2
			if _, _, err := svc.PutLabel(ctx, gated, fmt.Sprintf("r%02d", i), "exact_match", service.LabelInput{Labeller: "ana", LabelValue: service.LabelValue{Passed: &pass}}); err != nil {
				t.Fatal(err)
			}
		}
		v, err = svc.Promote(ctx, gated, "exact_match", 1, service.PromoteOptions{})
		if err != nil || v.Gate == nil || v.Gate.Report.Decision != agreement.Accept || !strings.HasPrefix(v.Gate.Current, "exact_match (") ||
			v.Gate.Report.Runs != 40 || v.Gate.Report.Candidate.Value != 1 || v.Gate.Report.Current.Value >= 1 {
			t.Fatalf("promote a replacement of the service's scorer: %+v, %v", v.Gate, err)
		}

		// 12 labelled runs: not enough; the gate says so and lets it through.
		few := gateTenant(t, ctx, svc, "beta", store.Policy{PromotionGate: true}, 12)
		v, err = svc.Promote(ctx, few, "matcher", 2, service.PromoteOptions{})
		if err != nil || !v.Promoted || v.Gate == nil || v.Gate.Report.Decision != agreement.NotEnoughLabels ||
			!strings.Contains(v.Gate.Report.Reason, "12 labelled runs, the gate needs 30") || !strings.Contains(v.Gate.Report.Reason, "goes through") {
			t.Fatalf("under 30 labels: %+v, %v", v.Gate, err)
		}
		if cfg, err := jobs.InsightConfig(ctx, env.Store, few.ID, "bot"); err != nil || len(cfg.Agreements) != 0 {
			t.Fatalf("a kappa on 12 runs is kept: %+v, %v", cfg.Agreements, err)
		}

		// Without the setting: promoted as before, no gate.
		plain := gateTenant(t, ctx, svc, "plain", store.Policy{}, 40)
		v, err = svc.Promote(ctx, plain, "matcher", 2, service.PromoteOptions{})
		if err != nil || !v.Promoted || v.Gate != nil {
			t.Fatalf("no gate: %+v, %v", v, err)
		}
		if vs, _ := svc.ScorerVersions(ctx, plain, "matcher"); vs[1].Promotions[0].Gate != nil {
			t.Fatalf("no gate recorded: %+v", vs[1].Promotions)
		}
	})
}

// A promotion that comes between the gate's measure and the record makes the measure
// stale: the gated promotion is refused, asks to promote again, and records nothing;
// promoted again, it is measured against the version promoted meanwhile.
func TestPromotionGateMeasuredAgainstAStaleVersion(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		env := servicetest.New(t, dsn, servicetest.Options{})
		svc := env.Service
		gated := gateTenant(t, ctx, svc, "acme", store.Policy{PromotionGate: true}, 40)
		if _, err := svc.Publish(ctx, gated, service.PublishRequest{Name: "matcher", Base: "exact_match",
			Config: json.RawMessage(`{"ignore_case": true, "trim": true}`)}); err != nil {
			t.Fatal(err)
		}
		var done atomic.Bool
		service.SetAfterGate(svc, func() {
			if done.Swap(true) {
				return // the promotion below, which passes here too
			}
			// Another promotion lands meanwhile: matcher@3, which has no results yet, so
			// the gate lets it through.
			if _, err := svc.Promote(ctx, gated, "matcher", 3, service.PromoteOptions{}); err != nil {
				t.Error(err)
			}
		})
		_, err := svc.Promote(ctx, gated, "matcher", 2, service.PromoteOptions{Override: "forced"})
		if !errors.Is(err, service.ErrGate) || !strings.Contains(err.Error(), "matcher@3 was promoted while the agreement gate measured matcher@2") ||
			!strings.Contains(err.Error(), "promote again") {
			t.Fatalf("a promotion measured against a stale version: %v; want the gate's refusal to promote again", err)
		}
		vs, err := svc.ScorerVersions(ctx, gated, "matcher")
		if err != nil || len(vs) != 3 || !vs[2].Promoted || vs[1].Promoted || len(vs[1].Promotions) != 0 {
			t.Fatalf("versions after the refusal: %+v, %v; want @3 promoted and nothing recorded for @2", vs, err)
		}
		// Promoted again, @2 is measured against @3.
		v, err := svc.Promote(ctx, gated, "matcher", 2, service.PromoteOptions{Override: "forced"})
		if err != nil || !v.Promoted || v.Gate == nil || v.Gate.Current != "matcher@3" {
			t.Fatalf("promoted again: %+v, %v", v.Gate, err)
		}
	})
}
