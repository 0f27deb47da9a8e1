package api_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// Tenant B, with its key and with none, cannot read, list, evaluate or infer tenant A's
// agents, runs, evaluations or policies: each endpoint answers B as if A did not exist.
func TestIsolation(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		h := newHarness(t, dsn, servicetest.Options{}, "a", "b")
		a, b := h.as(t, "a"), h.as(t, "b")
		none := client{t: t, url: h.srv.URL}
		runs := `{"id": "secret-1", "agent": "secret-agent", "input": "q", "output": "a"}` + "\n" +
			`{"id": "secret-2", "agent": "secret-agent", "input": "q", "output": "b"}`
		if r := a.do("POST", "/v1/runs", []byte(runs)); r.status != 200 {
			t.Fatalf("a imports: %d %s", r.status, r.body)
		}
		if r := a.do("PUT", "/v1/agents/secret-agent/policy", []byte(`{"scorers": ["prescreen"], "sample_rate": 1}`)); r.status != 200 {
			t.Fatalf("a sets a policy: %d %s", r.status, r.body)
		}
		ev := evaluate(t, a, "secret-agent", `{"limit": 2}`)
		if r := a.do("PUT", "/v1/runs/secret-1/labels/prescreen", []byte(`{"labeller": "ana", "passed": false, "note": "secret note"}`)); r.status != 201 {
			t.Fatalf("a labels: %d %s", r.status, r.body)
		}

		type call struct {
			method, path, body string
			// bStatus is what B gets: 404 for A's things, 200 with nothing of A's for lists.
			bStatus int
		}
		calls := []call{
			{"GET", "/v1/runs/secret-1", "", 404},
			{"GET", "/v1/agents/secret-agent/runs", "", 404},
			{"GET", "/v1/agents", "", 200},
			{"POST", "/v1/agents/secret-agent/evaluations", `{"limit": 1}`, 404},
			{"GET", "/v1/agents/secret-agent/evaluations", "", 200},
			{"GET", "/v1/evaluations/" + ev.ID, "", 404},
			{"GET", "/v1/evaluations/" + ev.ID + "?wait=1s", "", 404},
			{"GET", "/v1/agents/secret-agent/policy", "", 404},
			{"DELETE", "/v1/agents/secret-agent/policy", "", 404},
			{"GET", "/v1/scorers", "", 200},
			{"PUT", "/v1/runs/secret-1/labels/prescreen", `{"labeller": "ana", "passed": true}`, 404},
			{"GET", "/v1/runs/secret-1/labels", "", 404},
			{"DELETE", "/v1/runs/secret-1/labels/prescreen?labeller=ana", "", 404},
			{"GET", "/v1/labels", "", 200},
			{"GET", "/v1/scorers/prescreen/agreement", "", 404},
			{"POST", "/v1/score", `{"scorer": "prescreen", "run": {"input": "q", "output": "a"}}`, 200},
			{"POST", "/v1/runs", `{"id": "secret-1", "agent": "secret-agent", "input": "q", "output": "mine"}`, 200},
			{"PUT", "/v1/agents/secret-agent/policy", `{"scorers": ["prescreen"], "sample_rate": 1}`, 200},
		}
		for _, c := range calls {
			var body []byte
			if c.body != "" {
				body = []byte(c.body)
			}
			r := b.do(c.method, c.path, body)
			if r.status != c.bStatus {
				t.Errorf("B %s %s: %d %s; want %d", c.method, c.path, r.status, r.body, c.bStatus)
			}
			if s := string(r.body); c.bStatus == 200 && c.method == "GET" && (strings.Contains(s, "secret") || strings.Contains(s, ev.ID)) {
				t.Errorf("B %s %s shows A's data: %s", c.method, c.path, s)
			}
			if r := none.do(c.method, c.path, body); r.status != http.StatusUnauthorized || r.problem(t).Code != api.CodeUnauthorized || r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("no key %s %s: %d %s; want 401 unauthorized", c.method, c.path, r.status, r.body)
			}
		}
		// B's run with A's id is B's own; A's run is untouched.
		var rv service.RunView
		r := a.do("GET", "/v1/runs/secret-1", nil)
		r.json(t, &rv)
		if !strings.Contains(string(rv.Run), `"output":"a"`) || len(rv.Results) != 1 {
			t.Fatalf("A's run changed: %s", r.body)
		}
		// A's label is untouched by B's attempts, B's import of a label for A's run id
		// labelled B's own run.
		if r := a.do("GET", "/v1/runs/secret-1/labels", nil); r.status != 200 || !strings.Contains(string(r.body), `"passed":false`) || strings.Count(string(r.body), `"labeller"`) != 1 {
			t.Fatalf("A's labels changed: %d %s", r.status, r.body)
		}
		// B's evaluation-on-arrival policy exists for B only; A's still works.
		if r := a.do("GET", "/v1/agents/secret-agent/policy", nil); r.status != 200 {
			t.Fatalf("A's policy: %d", r.status)
		}
	})
}

// Bad input gets a clear error each, and nothing is stored half-way.
func TestBadInput(t *testing.T) {
	h := newHarness(t, filepath.Join(t.TempDir(), "scorekit.db"), servicetest.Options{}, "a")
	c := h.as(t, "a")
	ctx := context.Background()
	good := `{"id": "r1", "agent": "bot", "input": "q", "output": "a"}`
	if r := c.do("POST", "/v1/runs", []byte(good)); r.status != 200 {
		t.Fatal(r.status, string(r.body))
	}
	big := strings.Repeat(good+"\n", 50<<20/len(good)+1)
	for _, tt := range []struct {
		name, method, path, body string
		status                   int
		code, detail             string
	}{
		{"invalid JSON array", "POST", "/v1/runs", `[{"id": "x1", "agent": "bot", "output": "a"}`, 400, api.CodeInvalidRequest, "not valid JSON"},
		{"empty body", "POST", "/v1/runs", ``, 400, api.CodeInvalidRequest, "empty"},
		{"50 MB body", "POST", "/v1/runs", big, 413, api.CodeBodyTooLarge, "limit of 16777216 bytes"},
		{"invalid JSON evaluation", "POST", "/v1/agents/bot/evaluations", `{"limit": 10`, 400, api.CodeInvalidRequest, "not valid JSON"},
		{"trailing garbage", "POST", "/v1/agents/bot/evaluations", `{"limit": 1} x`, 400, api.CodeInvalidRequest, ""},
		{"unknown field", "POST", "/v1/agents/bot/evaluations", `{"limit": 1, "limt": 2}`, 400, api.CodeInvalidRequest, "limt"},
		{"limit 0", "POST", "/v1/agents/bot/evaluations", `{"limit": 0}`, 400, api.CodeInvalidRequest, "limit 0: want 1 to"},
		{"limit -1", "POST", "/v1/agents/bot/evaluations", `{"limit": -1}`, 400, api.CodeInvalidRequest, "limit -1: want 1 to"},
		{"limit 1e9", "POST", "/v1/agents/bot/evaluations", `{"limit": 1e9}`, 400, api.CodeInvalidRequest, "want 1 to"},
		{"limit as text", "POST", "/v1/agents/bot/evaluations", `{"limit": "10"}`, 400, api.CodeInvalidRequest, "limit"},
		{"unknown scorer", "POST", "/v1/agents/bot/evaluations", `{"limit": 1, "scorers": ["nope"]}`, 404, api.CodeUnknownScorer, `unknown scorer "nope"`},
		{"unknown scorer to score", "POST", "/v1/score", `{"scorer": "nope", "run": {"output": "a"}}`, 404, api.CodeUnknownScorer, `unknown scorer "nope"`},
		{"bad config", "POST", "/v1/score", `{"scorer": "prescreen", "run": {"output": "a"}, "config": {"zz": 1}}`, 400, api.CodeInvalidConfig, "zz"},
		{"run without output", "POST", "/v1/score", `{"scorer": "prescreen", "run": {"input": "q"}}`, 400, api.CodeInvalidRun, "output"},
		{"bad wait", "GET", "/v1/evaluations/ev_x?wait=soon", "", 400, api.CodeInvalidRequest, "wait"},
		{"unknown evaluation", "GET", "/v1/evaluations/ev_x", "", 404, api.CodeNotFound, "ev_x"},
		{"unknown query parameter", "GET", "/v1/agents?limt=3", "", 400, api.CodeInvalidRequest, "limt"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var body []byte
			if tt.method == "POST" {
				body = []byte(tt.body)
			}
			r := c.do(tt.method, tt.path, body)
			p := r.problem(t)
			if r.status != tt.status || p.Code != tt.code || !strings.Contains(p.Detail+" ", tt.detail) {
				t.Fatalf("%d %s; want %d %s with %q", r.status, r.body, tt.status, tt.code, tt.detail)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("Content-Type %q", ct)
			}
			for _, leak := range []string{"Go struct", "json: ", "run: run:", "Input.Body", "InputBody"} {
				if strings.Contains(string(r.body), leak) {
					t.Fatalf("the error shows %q: %s", leak, r.body)
				}
			}
		})
	}
	// A run without agent, beside good ones: rejected with its line, the others kept.
	r := c.do("POST", "/v1/runs", []byte(`{"id": "r2", "agent": "bot", "output": "b"}`+"\n"+`{"id": "r3", "output": "no agent"}`))
	var res service.ImportResult
	r.json(t, &res)
	if r.status != 200 || res.Stored != 1 || res.Rejected != 1 || res.Runs[1].Line != 2 || !strings.Contains(res.Runs[1].Error, `missing "agent"`) {
		t.Fatalf("%d %s", r.status, r.body)
	}
	page, err := h.env.Service.Runs(ctx, mustTenant(t, h, "a"), "bot", 100, "")
	if err != nil || len(page.Runs) != 2 {
		t.Fatalf("stored runs: %d, %v; want r1 and r2 only", len(page.Runs), err)
	}
	// A revoked key is refused at once.
	if err := h.env.Service.RevokeKey(ctx, "a", h.keys["a"]); err != nil {
		t.Fatal(err)
	}
	if r := c.do("GET", "/v1/agents", nil); r.status != 401 || !strings.Contains(r.problem(t).Detail, "revoked") {
		t.Fatalf("revoked key: %d %s", r.status, r.body)
	}
}

func mustTenant(t *testing.T, h *harness, name string) (tn store.Tenant) {
	tn, err := h.env.Service.Tenant(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return tn
}
