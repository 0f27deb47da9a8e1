package service_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/redact"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/service/telemetry"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// A tenant's redaction rules apply before a run is stored: the store, and so every
// scorer and judge, sees the redacted text; the run, the import's answer and the
// metrics count each redaction by kind.
func TestRunsRedactedBeforeStored(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		tel := telemetry.New(telemetry.Options{})
		env := servicetest.New(t, dsn, servicetest.Options{Jobs: jobs.Options{Telemetry: tel}})
		svc := env.Service
		pol := store.Policy{Redact: redact.Config{Kinds: redact.Kinds, Patterns: []redact.Pattern{{Name: "ticket", Regexp: `\bTCK-\d{5}\b`}}}}
		tn, err := svc.CreateTenant(ctx, "acme", pol)
		if err != nil {
			t.Fatal(err)
		}
		body := `{"id": "r1", "agent": "support", "input": "From: ann@example.com\nMy card 4111 1111 1111 1111 was charged twice in 2024 (TCK-12345). Call +1 (415) 555-0132.",
"output": "Refund of $19.99 issued for TCK-12345.", "metadata": {"auth": "Bearer abcDEF123456ghiJKL789mno"}}`
		res, err := svc.ImportRuns(ctx, tn, []byte(body), service.ImportOptions{})
		if err != nil || res.Stored != 1 || res.Redacted != 1 {
			t.Fatalf("import: %+v, %v", res, err)
		}
		want := map[string]int{"email": 1, "card": 1, "phone": 1, "secret": 1, "ticket": 2}
		if got := res.Runs[0].Redactions; !equalCounts(got, want) {
			t.Fatalf("import's counts %v; want %v", got, want)
		}
		v, err := svc.Run(ctx, tn, "r1", false)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"ann@example.com", "4111", "TCK-12345", "555-0132", "abcDEF123456"} {
			if strings.Contains(string(v.Run), secret) {
				t.Errorf("the stored run holds %q: %s", secret, v.Run)
			}
		}
		for _, kept := range []string{"2024", "$19.99", "[redacted:card]", "[redacted:ticket]"} {
			if !strings.Contains(string(v.Run), kept) {
				t.Errorf("the stored run lacks %q: %s", kept, v.Run)
			}
		}
		if !v.Redacted || !equalCounts(v.Redactions, want) {
			t.Fatalf("the run's flag and counts: %v %v", v.Redacted, v.Redactions)
		}
		// Sending it again finds it by its id: a duplicate, not a second run.
		if again, err := svc.ImportRuns(ctx, tn, []byte(body), service.ImportOptions{}); err != nil || again.Duplicates != 1 {
			t.Fatalf("again: %+v, %v", again, err)
		}
		mfs, err := tel.Registry().Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, mf := range mfs {
			if mf.GetName() != telemetry.MetricRedactions {
				continue
			}
			for _, m := range mf.GetMetric() {
				if len(m.GetLabel()) != 1 {
					t.Fatalf("labels %v; want only kind", m.GetLabel())
				}
				got[m.GetLabel()[0].GetValue()] = int(m.GetCounter().GetValue())
			}
		}
		if want := map[string]int{"email": 1, "card": 1, "phone": 1, "secret": 1, "custom": 2}; !equalCounts(got, want) {
			t.Fatalf("%s = %v; want %v", telemetry.MetricRedactions, got, want)
		}
	})
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestRedactionRulesCheckedWhenSaved(t *testing.T) {
	ctx := context.Background()
	env := servicetest.New(t, filepath.Join(t.TempDir(), "scorekit.db"), servicetest.Options{NoWorkers: true})
	svc := env.Service
	if _, err := svc.CreateTenant(ctx, "acme", store.Policy{}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		c    redact.Config
		want string
	}{
		{"backreference", redact.Config{Patterns: []redact.Pattern{{Name: "twice", Regexp: `(\w+) \1`}}}, `redact.patterns[0] (twice): error parsing regexp: invalid escape sequence`},
		{"unknown kind", redact.Config{Kinds: []string{"ssn"}}, `unknown kind "ssn"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := svc.SetTenantPolicy(ctx, "acme", store.Policy{Redact: c.c})
			if !errors.Is(err, service.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v; want invalid with %q", err, c.want)
			}
		})
	}
}
