package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/wasm"
	"github.com/scorekit/scorekit/internal/pgtest"
	"github.com/scorekit/scorekit/internal/seed"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

// TestMain runs a module's check when the tests' publish started this binary as its child
// (wasm.VetChild), and otherwise the tests, with a PostgreSQL when they ask for one.
func TestMain(m *testing.M) {
	if code, ok := wasm.VetChild(); ok {
		os.Exit(code)
	}
	pgtest.Main(m)
}

func backends(t *testing.T, f func(t *testing.T, dsn string)) { servicetest.Backends(t, f) }

// TestOpenAPIFresh fails when the checked-in openapi.json (at the repository's root) is not
// what the Go types describe.
func TestOpenAPIFresh(t *testing.T) {
	want, err := api.New(nil, api.Options{}).OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../../openapi.json")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("openapi.json is stale (%v): regenerate it with go generate ./internal/service/api (or make generate) and commit it", err)
	}
}

// client talks to a test server with one key.
type client struct {
	t   *testing.T
	url string
	key string
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

func (r reply) problem(t *testing.T) api.Problem {
	t.Helper()
	var p api.Problem
	r.json(t, &p)
	return p
}

func (c client) do(method, path string, body []byte) reply {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

type harness struct {
	env  *servicetest.Env
	srv  *httptest.Server
	keys map[string]string // tenant -> key
}

func newHarness(t *testing.T, dsn string, o servicetest.Options, tenants ...string) *harness {
	env := servicetest.New(t, dsn, o)
	srv := httptest.NewServer(api.New(env.Service, api.Options{}))
	t.Cleanup(srv.Close)
	h := &harness{env: env, srv: srv, keys: map[string]string{}}
	ctx := context.Background()
	for _, name := range tenants {
		if _, err := env.Service.CreateTenant(ctx, name, store.Policy{}); err != nil {
			t.Fatal(err)
		}
		key, _, err := env.Service.CreateKey(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		h.keys[name] = key
	}
	return h
}

func (h *harness) as(t *testing.T, tenant string) client {
	return client{t: t, url: h.srv.URL, key: h.keys[tenant]}
}

func seedSet(t *testing.T) seed.Set { return servicetest.Seed(t) }

func encode(t *testing.T, f seed.File) []byte {
	b, err := seed.Encode(f.Runs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func evaluate(t *testing.T, c client, agent string, body string) service.EvaluationView {
	t.Helper()
	r := c.do("POST", "/v1/agents/"+agent+"/evaluations", []byte(body))
	if r.status != http.StatusAccepted {
		t.Fatalf("create evaluation: %d %s", r.status, r.body)
	}
	var ev service.EvaluationView
	r.json(t, &ev)
	if r.header.Get("Location") != "/v1/evaluations/"+ev.ID {
		t.Fatalf("Location = %q", r.header.Get("Location"))
	}
	r = c.do("GET", "/v1/evaluations/"+ev.ID+"?wait=30s", nil)
	if r.status != http.StatusOK {
		t.Fatalf("get evaluation: %d %s", r.status, r.body)
	}
	var v service.EvaluationView
	r.json(t, &v)
	if v.Status != service.StatusDone {
		t.Fatalf("evaluation not done after waiting 30s: %+v", v)
	}
	return v
}

// The seed flow through HTTP: a tenant, 270 email-triage and 40 assistant runs, the last
// 10 of each evaluated, then again after a scorer version change, old and new side by side.
func TestSeedFlow(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		set := seedSet(t)
		h := newHarness(t, dsn, servicetest.Options{}, "acme")
		c := h.as(t, "acme")
		for _, f := range set.Files()[:2] {
			r := c.do("POST", "/v1/runs", encode(t, f))
			var res service.ImportResult
			r.json(t, &res)
			if r.status != 200 || res.Stored != len(f.Runs) || res.Rejected != 0 {
				t.Fatalf("import %s: %d stored %d rejected %d", f.Name, r.status, res.Stored, res.Rejected)
			}
		}
		newest := map[string][]string{}
		for agent, runs := range map[string][]string{seed.AgentEmailTriage: ids(set.EmailTriage), seed.AgentAssistant: ids(set.Assistant)} {
			newest[agent] = runs[len(runs)-10:]
		}
		first := map[string]service.EvaluationView{}
		for _, agent := range []string{seed.AgentEmailTriage, seed.AgentAssistant} {
			v := evaluate(t, c, agent, `{"limit": 10}`)
			if len(v.Results) != 10 || v.Runs != 10 {
				t.Fatalf("%s: %d results over %d runs; want 10", agent, len(v.Results), v.Runs)
			}
			for i, r := range v.Results {
				if want := newest[agent][9-i]; r.RunID != want {
					t.Fatalf("%s: result %d is %s; want %s", agent, i, r.RunID, want)
				}
			}
			first[agent] = v
		}
		// The correct runs of the seed pass the new pre-screen (the old one flagged them).
		for agent, v := range first {
			if s := v.Scorers[0]; s.PassRate == nil || *s.PassRate < 0.8 {
				t.Fatalf("%s: pass rate %v of the seed's correct runs", agent, s.PassRate)
			}
		}
		// A scorer fix ships: new workers with a new version; the old ones are gone.
		if err := h.env.Queue.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		old := first[seed.AgentEmailTriage].Scorers[0].Version
		h2 := newHarness(t, dsn, servicetest.Options{Host: host.New(servicetest.Registry(t, map[string]string{"prescreen": old + "-fix"}))})
		h2.keys = h.keys
		c2 := h2.as(t, "acme")
		v := evaluate(t, c2, seed.AgentEmailTriage, `{"limit": 10}`)
		if p := v.Scorers[0].Previous; v.Scorers[0].Version != old+"-fix" || p == nil || p.Runs != 10 {
			t.Fatalf("summary %+v; want version %s-fix with the 10 runs of %s beside it", v.Scorers[0], old, old)
		}
		for _, r := range v.Results {
			if r.Previous == nil || r.Previous.ScorerVersion != old || r.Previous.EvaluationID != first[seed.AgentEmailTriage].ID {
				t.Fatalf("result %s: previous %+v", r.RunID, r.Previous)
			}
		}
		// GET /v1/runs/{id} has every result the run ever had.
		r := c2.do("GET", "/v1/runs/"+newest[seed.AgentEmailTriage][9], nil)
		var rv service.RunView
		r.json(t, &rv)
		if r.status != 200 || len(rv.Results) != 2 || rv.Results[0].ScorerVersion != old {
			t.Fatalf("run history: %d %s", r.status, r.body)
		}
	})
}

func ids(runs []sdk.Run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = r.ID
	}
	return out
}
