package api_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/secrets"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/service/telemetry"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/internal/testkit"
)

// The key tenant a stores for the "team" endpoint. Its middle part is what the checks look
// for, so that no encoding of the whole (a JSON escape, a prefix) hides it.
const tenantSecret = "sk-tenant-a-SECRETb7f3c9d2e8a14f60"

// judgeFixture is a service with a judge broker of two endpoints, each a scripted judge:
// "default" (the operator's key sk-operator-main, model judge-model) and "team" (the
// operator's key sk-operator-team, models team-small and team-large), with metrics,
// traces and every log line captured.
type judgeFixture struct {
	env        *servicetest.Env
	srv        *httptest.Server
	main, team *judgetest.Server
	broker     *broker.Broker
	tel        *telemetry.T
	spans      *tracetest.InMemoryExporter
	logs       *testkit.SyncBuffer
	keys       map[string]string

	mu      sync.Mutex
	answers [][]byte // every API answer body
}

const relevant = `{"reasoning": "it answers", "score": 1}`

func newJudgeFixture(t *testing.T, dsn string, keyring *secrets.Keyring, main, team *judgetest.Server) *judgeFixture {
	t.Helper()
	logs := &testkit.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	prev := slog.Default()
	slog.SetDefault(logger) // the broker and River log through the default
	t.Cleanup(func() { slog.SetDefault(prev) })

	b, err := broker.New(broker.Config{BaseURL: main.URL(), Model: "judge-model", APIKey: "sk-operator-main", MaxRetries: -1,
		Endpoints: []broker.Endpoint{{Name: "team", BaseURL: team.URL(), Model: "team-small", Models: []string{"team-large"}, APIKey: "sk-operator-team"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tel := telemetry.New(telemetry.Options{Tracer: tp})
	h := host.New(servicetest.Registry(t, nil), host.WithJudge(tel.Judge(b)), host.WithLogger(logger))
	env := servicetest.New(t, dsn, servicetest.Options{Host: h, Judge: b, Secrets: keyring,
		Jobs: jobs.Options{Telemetry: tel, Logger: logger, MaxAttempts: 2}})
	srv := httptest.NewServer(api.New(env.Service, api.Options{Logger: logger}))
	t.Cleanup(srv.Close)
	f := &judgeFixture{env: env, srv: srv, main: main, team: team, broker: b, tel: tel, spans: spans, logs: logs, keys: map[string]string{}}
	ctx := context.Background()
	for _, name := range []string{"a", "b"} {
		if _, err := env.Service.Tenant(ctx, name); err != nil {
			if _, err := env.Service.CreateTenant(ctx, name, store.Policy{}); err != nil {
				t.Fatal(err)
			}
		}
		key, _, err := env.Service.CreateKey(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		f.keys[name] = key
	}
	return f
}

// do calls the API as tenant and keeps the answer's body for the checks.
func (f *judgeFixture) do(t *testing.T, tenant, method, path, body string) reply {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	r := client{t: t, url: f.srv.URL, key: f.keys[tenant]}.do(method, path, b)
	f.mu.Lock()
	f.answers = append(f.answers, r.body)
	f.mu.Unlock()
	return r
}

func (f *judgeFixture) evaluate(t *testing.T, tenant, agent string) service.EvaluationView {
	t.Helper()
	r := f.do(t, tenant, "POST", "/v1/agents/"+agent+"/evaluations", `{"limit": 10}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("%s evaluates %s: %d %s", tenant, agent, r.status, r.body)
	}
	var ev service.EvaluationView
	r.json(t, &ev)
	r = f.do(t, tenant, "GET", "/v1/evaluations/"+ev.ID+"?wait=60s", "")
	r.json(t, &ev)
	if ev.Status != service.StatusDone {
		t.Fatalf("%s's evaluation of %s not done: %s", tenant, agent, r.body)
	}
	return ev
}

// TestTenantJudgeKey: tenant a stores its own key for the "team" endpoint and picks it,
// with model team-large, for its agent; the scripted judge there sees a's key and model
// on every one of a's calls, and tenant b's calls go to the operator's endpoint with the
// operator's key. The key is in no API answer, log line, metric, trace or error, and the
// database holds only its ciphertext; a service started with another operator key says
// clearly that a's key cannot be used and sends nothing with any other key.
func TestTenantJudgeKey(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		main := judgetest.New(judgetest.Rule{Reply: relevant})
		defer main.Close()
		// The team endpoint echoes the Authorization header in its error to a run marked
		// ECHO-ME: a careless proxy, which nothing downstream may repeat.
		team := judgetest.New(judgetest.Rule{Match: "ECHO-ME", Status: 401, EchoAuth: true}, judgetest.Rule{Reply: relevant})
		defer team.Close()
		keyring, err := secrets.New(secrets.NewKey())
		if err != nil {
			t.Fatal(err)
		}
		f := newJudgeFixture(t, dsn, keyring, main, team)

		// The endpoints a tenant may choose; no key stored yet.
		r := f.do(t, "a", "GET", "/v1/judge/endpoints", "")
		var eps []service.JudgeEndpoint
		r.json(t, &eps)
		if r.status != 200 || len(eps) != 2 || eps[0].Name != "default" || eps[1].Name != "team" || eps[1].Key.Stored ||
			strings.Join(eps[1].Models, ",") != "team-small,team-large" || strings.Contains(string(r.body), "sk-operator") {
			t.Fatalf("endpoints: %d %s", r.status, r.body)
		}
		for _, tt := range []struct{ name, path, body, want string }{
			{"denied: unknown endpoint", "/v1/judge/endpoints/elsewhere/key", `{"key": "sk-x"}`, `elsewhere\" is not one the operator allows`},
			{"denied: a key with a newline", "/v1/judge/endpoints/team/key", `{"key": "sk-x\nInjected: 1"}`, "no spaces"},
		} {
			if r := f.do(t, "a", "PUT", tt.path, tt.body); r.status < 400 || !strings.Contains(string(r.body), tt.want) || strings.Contains(string(r.body), "Injected") {
				t.Errorf("%s: %d %s", tt.name, r.status, r.body)
			}
		}
		if r := f.do(t, "a", "PUT", "/v1/judge/endpoints/team/key", `{"key": "`+tenantSecret+`"}`); r.status != http.StatusNoContent {
			t.Fatalf("store a's key: %d %s", r.status, r.body)
		}
		if r := f.do(t, "a", "PUT", "/v1/agents/bot/policy", `{"scorers": ["relevancy"], "sample_rate": 1, "judge": {"endpoint": "team", "model": "team-small-typo"}}`); r.status != 400 ||
			!strings.Contains(string(r.body), `model \"team-small-typo\" is not allowed on endpoint \"team\" (allowed: team-small, team-large)`) {
			t.Fatalf("a policy naming a model the endpoint does not allow: %d %s", r.status, r.body)
		}
		r = f.do(t, "a", "PUT", "/v1/agents/bot/policy", `{"scorers": ["relevancy"], "sample_rate": 1, "judge": {"endpoint": "team", "model": "team-large"}}`)
		if r.status != 200 || !strings.Contains(string(r.body), `"judge":{"endpoint":"team","model":"team-large"}`) {
			t.Fatalf("a's policy: %d %s", r.status, r.body)
		}

		// a's runs arrive (evaluated on arrival, by the policy) and are evaluated on request.
		if r := f.do(t, "a", "POST", "/v1/runs", `{"id": "a1", "agent": "bot", "input": "What is the capital of France?", "output": "Paris"}`+"\n"+
			`{"id": "a2", "agent": "bot", "input": "Name the capital of Italy.", "output": "Rome"}`); r.status != 200 || !strings.Contains(string(r.body), `"evaluations":["ev_`) {
			t.Fatalf("a's runs: %d %s", r.status, r.body)
		}
		ev := f.evaluate(t, "a", "bot")
		for _, res := range ev.Results {
			if res.Status != "scored" || res.JudgeModel != "team-large" {
				t.Fatalf("a's result %+v: want scored by team-large", res)
			}
		}
		// b has no policy, so no judge choice: the operator's endpoint, key and model.
		if r := f.do(t, "b", "POST", "/v1/runs", `{"id": "b1", "agent": "helper", "input": "What is 2+2?", "output": "4"}`); r.status != 200 {
			t.Fatalf("b's runs: %d %s", r.status, r.body)
		}
		r = f.do(t, "b", "POST", "/v1/agents/helper/evaluations", `{"limit": 10, "scorers": ["relevancy"]}`)
		var bev service.EvaluationView
		r.json(t, &bev)
		r = f.do(t, "b", "GET", "/v1/evaluations/"+bev.ID+"?wait=60s", "")
		r.json(t, &bev)
		if len(bev.Results) != 1 || bev.Results[0].Status != "scored" || bev.Results[0].JudgeModel != "judge-model" {
			t.Fatalf("b's evaluation: %s", r.body)
		}

		tr, mr := team.Requests(), main.Requests()
		if len(tr) == 0 {
			t.Fatal("the team endpoint got none of a's calls")
		}
		for _, q := range tr {
			if q.Authorization != "Bearer "+tenantSecret || q.Model != "team-large" {
				t.Fatalf("the team endpoint got %q for model %s; want a's key and team-large", q.Authorization, q.Model)
			}
		}
		if len(mr) == 0 {
			t.Fatal("the operator's endpoint got none of b's calls")
		}
		for _, q := range mr {
			if u := q.LastUser(); q.Authorization != "Bearer sk-operator-main" || q.Model != "judge-model" || !strings.Contains(u, "<input>\nWhat is 2+2?") {
				t.Fatalf("the operator's endpoint got %q for model %s (%.300q); want only b's calls with the operator's key", q.Authorization, q.Model, u[max(0, strings.Index(u, "<input>")):])
			}
		}
		if u := f.broker.Usage("a"); u.Calls != int64(len(tr)) {
			t.Fatalf("a's usage %+v; want its %d calls with its own key accounted to it", u, len(tr))
		}

		// An endpoint that echoes the key in its error: the stored result and /v1/score's
		// answer carry the error without the key.
		if r := f.do(t, "a", "POST", "/v1/runs", `{"id": "a3", "agent": "bot", "input": "ECHO-ME: what now?", "output": "nothing"}`); r.status != 200 {
			t.Fatalf("a's echo run: %d %s", r.status, r.body)
		}
		ev = f.evaluate(t, "a", "bot")
		var echoed *service.ResultView
		for i, res := range ev.Results {
			if res.RunID == "a3" {
				echoed = &ev.Results[i]
			}
		}
		if echoed == nil || echoed.Status != "failed" || !strings.Contains(string(mustJSON(t, echoed)), "[tenant key]") {
			t.Fatalf("the echoed call's result: %s", mustJSON(t, echoed))
		}
		r = f.do(t, "a", "POST", "/v1/score", `{"scorer": "relevancy", "run": {"input": "ECHO-ME please", "output": "x"}, "judge": {"endpoint": "team", "model": "team-large"}}`)
		if r.status != 200 || !strings.Contains(string(r.body), `"failed"`) || !strings.Contains(string(r.body), "[tenant key]") {
			t.Fatalf("score through the echoing endpoint: %d %s", r.status, r.body)
		}
		r = f.do(t, "a", "GET", "/v1/judge/endpoints", "")
		if r.json(t, &eps); !eps[1].Key.Stored || eps[1].Key.UpdatedAt == nil || eps[1].Key.Problem != "" {
			t.Fatalf("a's endpoints after storing its key: %s", r.body)
		}

		// Nowhere: API answers, logs, metrics, traces, the database but as ciphertext.
		secretPart := tenantSecret[len("sk-tenant-a-"):]
		f.mu.Lock()
		for _, body := range f.answers {
			if bytes.Contains(body, []byte(secretPart)) {
				t.Errorf("an API answer holds the key: %s", body)
			}
		}
		f.mu.Unlock()
		if strings.Contains(f.logs.String(), secretPart) {
			t.Errorf("a log line holds the key:\n%s", f.logs.String())
		}
		metrics := scrapeText(t, f.tel)
		if strings.Contains(metrics, secretPart) || !strings.Contains(metrics, "scorekit_judge_calls_total") {
			t.Errorf("/metrics holds the key, or has no judge calls:\n%s", metrics)
		}
		stubs := f.spans.GetSpans()
		traces, err := json.Marshal(stubs)
		if err != nil {
			t.Fatal(err)
		}
		if len(stubs) == 0 || strings.Contains(string(traces), secretPart) || !strings.Contains(string(traces), "[tenant key]") {
			t.Errorf("%d spans; the traces hold the key, or not the scrubbed error: %.2000s", len(stubs), traces)
		}
		checkCiphertextOnly(t, dsn, keyring, f.env.Store, secretPart)

		// Another operator key: a's key cannot be opened. The service says so at start and
		// on the endpoint listing, and a's calls there fail with the reason: none is sent
		// with the operator's key instead.
		if err := f.env.Service.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		f.srv.Close()
		before := len(team.Requests())
		other, err := secrets.New(secrets.NewKey())
		if err != nil {
			t.Fatal(err)
		}
		g := newJudgeFixture(t, dsn, other, main, team)
		problems, err := g.env.Service.SecretProblems(context.Background())
		if err != nil || len(problems) != 1 || !strings.Contains(problems[0], `"team"`) || !strings.Contains(problems[0], "SCOREKIT_SECRET_KEY_OLD") {
			t.Fatalf("problems at start: %q, %v", problems, err)
		}
		r = g.do(t, "a", "GET", "/v1/judge/endpoints", "")
		if r.json(t, &eps); r.status != 200 || !eps[1].Key.Stored || !strings.Contains(eps[1].Key.Problem, "does not open with the operator's secret key") {
			t.Fatalf("endpoints under another operator key: %d %s", r.status, r.body)
		}
		if r := g.do(t, "a", "POST", "/v1/runs", `{"id": "a4", "agent": "bot", "input": "What is the capital of Spain?", "output": "Madrid"}`); r.status != 200 {
			t.Fatalf("a's run: %d %s", r.status, r.body)
		}
		ev = g.evaluate(t, "a", "bot")
		for _, res := range ev.Results {
			if res.RunID != "a4" {
				continue
			}
			if res.Status != "failed" || !strings.Contains(string(mustJSON(t, res)), "does not open with the operator") {
				t.Fatalf("a's result under another operator key: %s", mustJSON(t, res))
			}
		}
		if n := len(team.Requests()); n != before {
			t.Fatalf("%d calls reached the team endpoint with a key a's own could not be replaced by", n-before)
		}
		for _, q := range main.Requests() {
			if strings.Contains(q.LastUser(), "capital of Spain") {
				t.Fatalf("a's call went to the operator's endpoint: %q", q.Authorization)
			}
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func scrapeText(t *testing.T, tel *telemetry.T) string {
	t.Helper()
	srv := httptest.NewServer(tel.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// checkCiphertextOnly reads the key's row straight from the database: it holds a sealed
// value that opens (with the operator's key, bound to tenant a and endpoint team) to the
// key, and the key itself is nowhere in the database: on SQLite, in no byte of its files;
// on PostgreSQL, in no row of the tables that hold text a tenant or a judge wrote.
func checkCiphertextOnly(t *testing.T, dsn string, keyring *secrets.Keyring, st *store.Store, secretPart string) {
	t.Helper()
	ctx := context.Background()
	a, err := st.Tenant(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	const rowQuery = `SELECT sealed FROM tenant_judge_keys WHERE tenant_id = $1 AND endpoint = 'team'`
	var sealed []byte
	if store.IsPostgres(dsn) {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if err := conn.QueryRow(ctx, rowQuery, a.ID).Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			`SELECT count(*) FROM results WHERE result::text LIKE '%' || $1 || '%'`,
			`SELECT count(*) FROM evaluations WHERE spec::text LIKE '%' || $1 || '%'`,
			`SELECT count(*) FROM tenants WHERE policy::text LIKE '%' || $1 || '%'`,
			`SELECT count(*) FROM agent_policies WHERE policy::text LIKE '%' || $1 || '%'`,
			`SELECT count(*) FROM tenant_judge_keys WHERE position(convert_to($1, 'UTF8') in sealed) > 0`,
			`SELECT count(*) FROM river_job WHERE args::text LIKE '%' || $1 || '%' OR errors::text LIKE '%' || $1 || '%'`,
		} {
			var n int
			if err := conn.QueryRow(ctx, q, secretPart).Scan(&n); err != nil || n != 0 {
				t.Errorf("%s: %d rows hold the key (%v)", q, n, err)
			}
		}
	} else {
		db, err := sql.Open("sqlite", "file:"+dsn+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.QueryRowContext(ctx, strings.ReplaceAll(rowQuery, "$1", "?"), a.ID).Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{dsn, dsn + "-wal"} {
			b, err := os.ReadFile(path)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(secretPart)) {
				t.Errorf("%s holds the key in the clear", filepath.Base(path))
			}
		}
	}
	if len(sealed) == 0 || bytes.Contains(sealed, []byte(secretPart)) {
		t.Fatalf("the stored row is %d bytes and holds the key: %q", len(sealed), sealed)
	}
	pt, err := keyring.Open(sealed, fmt.Appendf(nil, "scorekit judge key\x00tenant %d\x00endpoint %s", a.ID, "team"))
	if err != nil || string(pt) != tenantSecret {
		t.Fatalf("the stored row does not open to a's key: %v", err)
	}
	if _, err := keyring.Open(sealed, fmt.Appendf(nil, "scorekit judge key\x00tenant %d\x00endpoint %s", a.ID+1, "team")); err == nil {
		t.Fatal("the stored row opens for another tenant")
	}
}
