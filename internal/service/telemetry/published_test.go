package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/scorekit/scorekit/host/wasm"
	"github.com/scorekit/scorekit/internal/pgtest"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/service/telemetry"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// TestMain runs a module's check when the tests' publish started this binary as its child
// (wasm.VetChild), and otherwise the tests, with a PostgreSQL when they ask for one.
func TestMain(m *testing.M) {
	if code, ok := wasm.VetChild(); ok {
		os.Exit(code)
	}
	pgtest.Main(m)
}

// perScorer are the families with a scorer label.
var perScorer = []string{telemetry.MetricResults, telemetry.MetricScore, telemetry.MetricScorerDuration, telemetry.MetricAdjustments,
	telemetry.MetricJudgeCalls, telemetry.MetricJudgeTokens, telemetry.MetricJudgeRetries, telemetry.MetricJudgeCacheHits}

// series counts the series of the per-scorer families.
func series(fams map[string]*dto.MetricFamily) int {
	n := 0
	for _, name := range perScorer {
		n += len(fams[name].GetMetric())
	}
	return n
}

// metricsEnv is a service whose jobs report to tel, watched as serve watches it, with
// tenant tenant holding the fixture's two runs.
func metricsEnv(t *testing.T, dsn string, tel *telemetry.T, tenant string) (*servicetest.Env, store.Tenant) {
	t.Helper()
	env := servicetest.New(t, dsn, servicetest.Options{Jobs: jobs.Options{Telemetry: tel}})
	tel.Watch(env.Queue.TelemetrySources())
	tn, err := env.Service.CreateTenant(context.Background(), tenant, store.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := env.Service.ImportRuns(context.Background(), tn, []byte(runs), service.ImportOptions{}); err != nil || res.Stored != 2 {
		t.Fatalf("import: %+v %v", res, err)
	}
	return env, tn
}

// publishAndScore publishes the names (configured pre-screens) and scores the two runs
// with them and with the service's own prescreen.
func publishAndScore(t *testing.T, svc *service.Service, tn store.Tenant, names []string) {
	t.Helper()
	ctx := context.Background()
	for i, name := range names {
		cfg := json.RawMessage(fmt.Sprintf(`{"cutoff_min_words": %d}`, i+1))
		if _, err := svc.Publish(ctx, tn, service.PublishRequest{Name: name, Base: "prescreen", Config: cfg}); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := svc.CreateEvaluation(ctx, tn, "docs", service.EvaluationRequest{Limit: 2, Scorers: append([]string{"prescreen"}, names...)})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := svc.WaitEvaluation(ctx, tn, ev.ID, time.Minute, service.ViewOptions{}); err != nil || v.Status != service.StatusDone {
		t.Fatalf("evaluation: %s %v", v.Status, err)
	}
}

// A tenant's published scorers are in /metrics (which takes no key) under the scorer
// label "published", never under the names the tenant chose; the service's own scorer
// keeps its name. Publishing more names adds no series. Before, each name was a label
// value: anyone could read what a tenant published and how much it ran, and a tenant
// could add series at will.
func TestMetricsNameNoPublishedScorer(t *testing.T) {
	servicetest.Backends(t, func(t *testing.T, dsn string) {
		tel := telemetry.New(telemetry.Options{})
		env, tn := metricsEnv(t, dsn, tel, "acme")
		publishAndScore(t, env.Service, tn, []string{"secret-plan-a", "secret-plan-b"})
		first := scrape(t, tel)
		publishAndScore(t, env.Service, tn, []string{"secret-plan-c", "secret-plan-d", "secret-plan-e", "secret-plan-f"})
		second := scrape(t, tel)
		if lines := grep(scrapeText(t, tel), "secret-plan"); len(lines) > 0 {
			t.Fatalf("/metrics names published scorers:\n%s", strings.Join(lines, "\n"))
		}
		for _, tt := range []struct {
			fams    map[string]*dto.MetricFamily
			scorer  string
			results float64
		}{
			{first, telemetry.PublishedScorer, 2 * 2}, {first, "prescreen", 2},
			{second, telemetry.PublishedScorer, 2*2 + 2*4}, {second, "prescreen", 2 * 2},
		} {
			if v, _ := value(tt.fams, telemetry.MetricResults, map[string]string{"scorer": tt.scorer, "status": "scored"}); v != tt.results {
				t.Errorf("results of %s: %v; want %v", tt.scorer, v, tt.results)
			}
		}
		if a, b := series(first), series(second); a == 0 || a != b {
			t.Fatalf("per-scorer series: %d with 2 published names, %d with 6; want the same, not 0", a, b)
		}
	})
}

// With tenant labels (--metrics-tenants), a tenant's series carry its name, its
// published scorers still under "published"; once the tenant is deleted its series are
// gone at the next scrape, and a later tenant of the same name starts from nothing.
// Before, a deleted tenant's series stayed for the life of the process.
func TestMetricsTenantSeriesGoWithTheTenant(t *testing.T) {
	servicetest.Backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		tel := telemetry.New(telemetry.Options{TenantLabels: true})
		env, tn := metricsEnv(t, dsn, tel, "acme")
		other, err := env.Service.CreateTenant(ctx, "other", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.Service.ImportRuns(ctx, other, []byte(runs), service.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		publishAndScore(t, env.Service, tn, []string{"secret-plan-a"})
		publishAndScore(t, env.Service, other, []string{"secret-plan-b"})
		fams := scrape(t, tel)
		for _, name := range []string{"acme", "other"} {
			for _, sc := range []string{telemetry.PublishedScorer, "prescreen"} {
				if v, _ := value(fams, telemetry.MetricResults, map[string]string{"tenant": name, "scorer": sc, "status": "scored"}); v != 2 {
					t.Errorf("results of %s's %s: %v; want 2", name, sc, v)
				}
			}
		}
		if lines := grep(scrapeText(t, tel), "secret-plan"); len(lines) > 0 {
			t.Fatalf("/metrics names published scorers:\n%s", strings.Join(lines, "\n"))
		}

		if _, err := env.Service.DeleteTenant(ctx, "acme", "test", nil); err != nil {
			t.Fatal(err)
		}
		text := scrapeText(t, tel)
		if lines := grep(text, `tenant="acme"`); len(lines) > 0 || len(grep(text, `tenant="other"`)) == 0 {
			t.Fatalf("after acme's deletion, %d series of acme:\n%s\nwant none, and other's kept", len(lines), strings.Join(lines, "\n"))
		}
		// A later tenant of the name, made and scored before any scrape saw the earlier
		// one go: its series count its own results only.
		svc, tn2 := metricsAgain(t, env, "acme")
		publishAndScore(t, svc, tn2, []string{"secret-plan-c"})
		if _, err := env.Service.DeleteTenant(ctx, "acme", "test", nil); err != nil {
			t.Fatal(err)
		}
		svc, tn3 := metricsAgain(t, env, "acme")
		publishAndScore(t, svc, tn3, []string{"secret-plan-d"})
		fams = scrape(t, tel)
		if v, _ := value(fams, telemetry.MetricResults, map[string]string{"tenant": "acme", "scorer": telemetry.PublishedScorer, "status": "scored"}); v != 2 {
			t.Errorf("the third acme's published results: %v; want its own 2", v)
		}
	})
}

// metricsAgain makes the tenant called name on env, with the fixture's runs.
func metricsAgain(t *testing.T, env *servicetest.Env, name string) (*service.Service, store.Tenant) {
	t.Helper()
	tn, err := env.Service.CreateTenant(context.Background(), name, store.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Service.ImportRuns(context.Background(), tn, []byte(runs), service.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	return env.Service, tn
}

// scrapeText reads /metrics as text.
func scrapeText(t *testing.T, tel *telemetry.T) string {
	t.Helper()
	srv := httptest.NewServer(tel.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// grep returns the lines of text that hold s.
func grep(text, s string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}
