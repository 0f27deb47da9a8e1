package service_test

import (
	"context"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/service/redact"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

// echo scores every run 1 and says what it was given: the text a scorer saw.
type echo struct{}

func (echo) Info() sdk.Info {
	return sdk.Info{Name: "echo", Version: "1.0.0", ABIVersion: sdk.ABIVersion, Description: "says what it saw", Threshold: 0.5}
}

func (echo) Score(_ context.Context, call sdk.Call) (sdk.Result, error) {
	var ids []string
	for _, p := range call.Run.Context {
		ids = append(ids, p.ID+"="+p.Text)
	}
	return sdk.Scored(1, call.Run.Input+" | "+call.Run.Output+" | "+strings.Join(ids, ",")), nil
}

// TestScoreRedactsTheRun: POST /v1/score's run (Service.Score) reaches the scorer
// redacted by the tenant's rules, as a stored run does, decoded again by the host's
// decoder; a tenant without rules has it scored as sent.
func TestScoreRedactsTheRun(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		reg := servicetest.Registry(t, nil)
		if err := reg.Register(host.Native(func() sdk.Scorer { return echo{} }), false); err != nil {
			t.Fatal(err)
		}
		svc := servicetest.New(t, dsn, servicetest.Options{Host: host.New(reg), NoWorkers: true}).Service
		run, err := host.DecodeCheckedRun([]byte(`{"input": "mail ann@example.com", "output": "done", "context": ["call +1 (415) 555-0132", {"id": "k", "text": "kept"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			tenant string
			policy store.Policy
			want   string
		}{
			{"plain", store.Policy{}, "mail ann@example.com | done | 1=call +1 (415) 555-0132,k=kept"},
			{"careful", store.Policy{Redact: redact.Config{Kinds: redact.Kinds}}, "mail [redacted:email] | done | 1=call [redacted:phone],k=kept"},
		} {
			tn, err := svc.CreateTenant(ctx, c.tenant, c.policy)
			if err != nil {
				t.Fatal(err)
			}
			res, err := svc.Score(ctx, tn, "echo", run, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != sdk.StatusScored || res.Reason != c.want {
				t.Errorf("%s: %s %q; the scorer should see %q", c.tenant, res.Status, res.Reason, c.want)
			}
		}
	})
}
