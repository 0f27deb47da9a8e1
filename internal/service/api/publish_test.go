package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/buildtest"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// wordRuns are n runs of agent, the i-th answering with words(i) words, a minute apart.
func wordRuns(agent, prefix string, from, n int) []byte {
	var b strings.Builder
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := from; i < from+n; i++ {
		out := strings.TrimSpace(strings.Repeat("word ", words(i)))
		fmt.Fprintf(&b, `{"id": "%s%02d", "agent": %q, "input": "summarise", "output": %q, "time": %q}`+"\n",
			prefix, i, agent, out, t0.Add(time.Duration(i)*time.Minute).Format(time.RFC3339))
	}
	return []byte(b.String())
}

// words is 1 to 40: under and over a budget of 10 words.
func words(i int) int { return i*7%40 + 1 }

func publish(t *testing.T, c client, body any) (service.PublishedVersion, reply) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	r := c.do("POST", "/v1/scorers", b)
	var v service.PublishedVersion
	if r.status == http.StatusCreated {
		r.json(t, &v)
	}
	return v, r
}

// passed lists the runs a scorer's results passed.
func passed(v service.EvaluationView) []string {
	var out []string
	for _, r := range v.Results {
		if r.Passed != nil && *r.Passed {
			out = append(out, r.RunID)
		}
	}
	slices.Sort(out)
	return out
}

// TestPublishSwapFlow is the loop a team runs without the operator and without a
// restart: publish a WASM scorer built from examples/first-scorer, evaluate the agent's
// last 10 runs, publish v2 (the same module with a budget of 10 words pinned in its
// config), compare on the same runs, promote v2 (evaluations, and runs evaluated on
// arrival, use it), roll back to v1, delete v2 (its results stay).
func TestPublishSwapFlow(t *testing.T) {
	module := buildtest.FirstScorerWASM(t)
	backends(t, func(t *testing.T, dsn string) {
		h := newHarness(t, dsn, servicetest.Options{}, "acme", "other")
		c := h.as(t, "acme")
		if r := c.do("POST", "/v1/runs", wordRuns("bot", "r", 0, 12)); r.status != 200 {
			t.Fatalf("import: %d %s", r.status, r.body)
		}
		v1, r := publish(t, c, map[string]any{"name": "triage", "module": module})
		if r.status != http.StatusCreated || v1.Version != 1 || !v1.Promoted || v1.Kind != "wasm" || !strings.HasPrefix(v1.Digest, "sha256:") ||
			v1.Manifest == nil || v1.Manifest.Scorer != "word_budget" || r.header.Get("Location") != "/v1/scorers/triage/versions/1" {
			t.Fatalf("publish v1: %d %s", r.status, r.body)
		}
		first := evaluate(t, c, "bot", `{"limit": 10, "scorers": ["triage"]}`)
		if s := first.Scorers[0]; s.Name != "triage" || s.Version != "1" || s.Scored != 10 || *s.PassRate != 1 {
			t.Fatalf("v1 summary: %+v", s)
		}
		for _, res := range first.Results {
			if res.ScorerVersion != "1" || res.ScorerDigest != v1.Digest {
				t.Fatalf("v1 result %+v: want version 1, digest %s", res, v1.Digest)
			}
		}

		// v2: the same module, a budget of 10 words pinned. Not promoted yet.
		v2, r := publish(t, c, map[string]any{"name": "triage", "module": module, "config": map[string]any{"max_words": 10}})
		if r.status != http.StatusCreated || v2.Version != 2 || v2.Promoted || v2.Config == nil {
			t.Fatalf("publish v2: %d %s", r.status, r.body)
		}
		n, size, err := h.env.Store.ModuleUsage(context.Background(), tenantID(t, h, "acme"))
		if err != nil || n != 1 || size != int64(len(module)) {
			t.Fatalf("modules stored: %d (%d bytes), %v; want the module once", n, size, err)
		}
		// The plain name still follows v1.
		if v := evaluate(t, c, "bot", `{"limit": 10, "scorers": ["triage"]}`); v.Scorers[0].Version != "1" {
			t.Fatalf("before promotion, triage is version %s", v.Scorers[0].Version)
		}
		cmp := evaluate(t, c, "bot", `{"limit": 10, "scorers": ["triage@2"]}`)
		s := cmp.Scorers[0]
		if s.Version != "2" || s.Previous == nil || s.Previous.Runs != 10 || !slices.Equal(s.Previous.Versions, []string{"1"}) || *s.Previous.PassRate != 1 {
			t.Fatalf("v2 beside v1: %+v previous %+v", s, s.Previous)
		}
		var want []string
		for i := 2; i < 12; i++ {
			if words(i) <= 15 { // within 1.5 x the budget: a score of 0.5 or more
				want = append(want, fmt.Sprintf("r%02d", i))
			}
		}
		if got := passed(cmp); !slices.Equal(got, want) || len(want) == 10 || len(want) == 0 {
			t.Fatalf("v2 passed %v; want %v", got, want)
		}
		for _, res := range cmp.Results {
			if res.Previous == nil || res.Previous.ScorerVersion != "1" {
				t.Fatalf("v2 result %s without v1's beside it: %+v", res.RunID, res.Previous)
			}
		}

		// Both versions on the same runs in one evaluation: each version's mean and pass
		// rate, the runs whose verdicts differ; only v1, the promoted one, counts as triage.
		both := evaluate(t, c, "bot", `{"limit": 10, "scorers": ["triage@1", "triage@2"]}`)
		if len(both.Scorers) != 2 || both.Scorers[0].Name != "triage" || both.Scorers[0].Version != "1" || *both.Scorers[0].PassRate != 1 ||
			both.Scorers[1].Name != "triage@2" || both.Scorers[1].Version != "2" || *both.Scorers[1].PassRate != float64(len(want))/10 {
			t.Fatalf("two versions side by side: %+v", both.Scorers)
		}
		if len(both.Disagreements) != 10-len(want) {
			t.Fatalf("%d disagreements; want %d: %+v", len(both.Disagreements), 10-len(want), both.Disagreements)
		}
		for _, d := range both.Disagreements {
			if slices.Contains(want, d.RunID) || d.Scorer != "triage" || len(d.Verdicts) != 2 || !*d.Verdicts[0].Passed || *d.Verdicts[1].Passed ||
				!strings.Contains(d.Verdicts[1].Reason, "budget of 10") {
				t.Fatalf("disagreement %+v", d)
			}
		}

		// Runs evaluated on arrival before the promotion get v1.
		if r := c.do("PUT", "/v1/agents/bot/policy", []byte(`{"scorers": ["triage"], "sample_rate": 1}`)); r.status != 200 {
			t.Fatalf("policy: %d %s", r.status, r.body)
		}
		if r := c.do("POST", "/v1/runs", wordRuns("bot", "r", 12, 1)); r.status != 200 {
			t.Fatalf("import: %d %s", r.status, r.body)
		}
		if v := waitScored(t, c, "r12"); v != "1" {
			t.Fatalf("a run arriving before the promotion scored by version %s", v)
		}

		// Promote v2: new evaluations, and runs evaluated on arrival, use it (a run arriving
		// now does not join the agent's open arrival evaluation, whose spec names v1: it
		// opens another).
		if r := c.do("POST", "/v1/scorers/triage/versions/2/promote", nil); r.status != 200 {
			t.Fatalf("promote v2: %d %s", r.status, r.body)
		}
		var wantAfter []string // the last 10 runs are r03 to r12 now
		for i := 3; i < 13; i++ {
			if words(i) <= 15 {
				wantAfter = append(wantAfter, fmt.Sprintf("r%02d", i))
			}
		}
		if v := evaluate(t, c, "bot", `{"limit": 10, "scorers": ["triage"]}`); v.Scorers[0].Version != "2" || !slices.Equal(passed(v), wantAfter) {
			t.Fatalf("after promotion: version %s passed %v, want %v", v.Scorers[0].Version, passed(v), wantAfter)
		}
		if r := c.do("POST", "/v1/runs", wordRuns("bot", "r", 13, 1)); r.status != 200 {
			t.Fatalf("import: %d %s", r.status, r.body)
		}
		if v := waitScored(t, c, "r13"); v != "2" {
			t.Fatalf("a run arriving after the promotion scored by version %s", v)
		}
		if r := c.do("DELETE", "/v1/agents/bot/policy", nil); r.status != http.StatusNoContent {
			t.Fatalf("delete policy: %d %s", r.status, r.body)
		}

		// Roll back to v1.
		if r := c.do("POST", "/v1/scorers/triage/versions/1/promote", nil); r.status != 200 {
			t.Fatalf("promote v1: %d %s", r.status, r.body)
		}
		if v := evaluate(t, c, "bot", `{"limit": 10, "scorers": ["triage"]}`); v.Scorers[0].Version != "1" || len(passed(v)) != 10 {
			t.Fatalf("after rollback: version %s passed %v", v.Scorers[0].Version, passed(v))
		}
		var vs []service.PublishedVersion
		r = c.do("GET", "/v1/scorers/triage/versions", nil)
		r.json(t, &vs)
		if len(vs) != 2 || !vs[0].Promoted || vs[1].Promoted {
			t.Fatalf("versions: %s", r.body)
		}

		// Delete v2 (not promoted): it runs no more, its results stay.
		if r := c.do("DELETE", "/v1/scorers/triage/versions/1", nil); r.status != http.StatusUnprocessableEntity ||
			!strings.Contains(r.problem(t).Detail, "promote another first") {
			t.Fatalf("delete the promoted version: %d %s", r.status, r.body)
		}
		if r := c.do("DELETE", "/v1/scorers/triage/versions/2", nil); r.status != http.StatusNoContent {
			t.Fatalf("delete v2: %d %s", r.status, r.body)
		}
		if r := c.do("POST", "/v1/agents/bot/evaluations", []byte(`{"limit": 10, "scorers": ["triage@2"]}`)); r.status != http.StatusNotFound ||
			!strings.Contains(r.problem(t).Detail, "deleted") {
			t.Fatalf("evaluate a deleted version: %d %s", r.status, r.body)
		}
		var kept service.EvaluationView
		c.do("GET", "/v1/evaluations/"+cmp.ID, nil).json(t, &kept)
		if len(kept.Results) != 10 || kept.Results[0].ScorerVersion != "2" {
			t.Fatalf("v2's results after its deletion: %d", len(kept.Results))
		}
		// A version number is never given again.
		if v3, r := publish(t, c, map[string]any{"name": "triage", "module": module, "config": map[string]any{"max_words": 20}}); v3.Version != 3 {
			t.Fatalf("publish after a deletion: %d %s", r.status, r.body)
		}
	})
}

// waitScored waits for the run's first triage result (scored on arrival) and returns its
// scorer version.
func waitScored(t *testing.T, c client, run string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var rv service.RunView
		if r := c.do("GET", "/v1/runs/"+run, nil); r.status == 200 {
			r.json(t, &rv)
			for _, res := range rv.Results {
				if res.Scorer == "triage" {
					return res.ScorerVersion
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("run %s not scored on arrival within 30s", run)
	return ""
}

// TestPublishedScorersAreTheTenantsAlone: another tenant cannot list, read, run, promote
// or delete a tenant's scorer, by name, version or digest, and every answer is the one
// it gets for a name nobody has; a tenant's replacement of a built-in leaves the other
// tenant's results as they were.
func TestPublishedScorersAreTheTenantsAlone(t *testing.T) {
	module := buildtest.FirstScorerWASM(t)
	backends(t, func(t *testing.T, dsn string) {
		h := newHarness(t, dsn, servicetest.Options{}, "acme", "other")
		a, b := h.as(t, "acme"), h.as(t, "other")
		for _, c := range []client{a, b} {
			if r := c.do("POST", "/v1/runs", wordRuns("bot", "r", 0, 5)); r.status != 200 {
				t.Fatalf("import: %d %s", r.status, r.body)
			}
		}
		v, r := publish(t, a, map[string]any{"name": "triage", "module": module})
		if r.status != http.StatusCreated {
			t.Fatalf("publish: %d %s", r.status, r.body)
		}
		// B's view of A's scorer is B's view of a scorer nobody has.
		for _, name := range []string{"triage", "nonesuch"} {
			for _, q := range []struct{ method, path, body string }{
				{"GET", "/v1/scorers/" + name + "/versions", ""},
				{"GET", "/v1/scorers/" + name + "/versions/1", ""},
				{"POST", "/v1/scorers/" + name + "/versions/1/promote", ""},
				{"DELETE", "/v1/scorers/" + name + "/versions/1", ""},
				{"POST", "/v1/agents/bot/evaluations", `{"limit": 1, "scorers": ["` + name + `"]}`},
				{"POST", "/v1/agents/bot/evaluations", `{"limit": 1, "scorers": ["` + name + `@1"]}`},
				{"POST", "/v1/score", `{"scorer": "` + name + `", "run": {"output": "x"}}`},
			} {
				var body []byte
				if q.body != "" {
					body = []byte(q.body)
				}
				r := b.do(q.method, q.path, body)
				if r.status != http.StatusNotFound || strings.Contains(string(r.body), v.Digest) {
					t.Fatalf("other tenant %s %s: %d %s", q.method, q.path, r.status, r.body)
				}
			}
		}
		// A's own /v1/score runs it, by name and by version.
		for _, name := range []string{"triage", "triage@1"} {
			var res struct {
				Status string `json:"status"`
			}
			if r := a.do("POST", "/v1/score", []byte(`{"scorer": "`+name+`", "run": {"output": "three words here"}}`)); r.status != 200 {
				t.Fatalf("acme scores with %s: %d %s", name, r.status, r.body)
			} else if r.json(t, &res); res.Status != "scored" {
				t.Fatalf("acme scores with %s: %s", name, r.body)
			}
		}
		var list []service.ScorerInfo
		b.do("GET", "/v1/scorers", nil).json(t, &list)
		for _, s := range list {
			if s.Name == "triage" || s.Source != service.SourceHost {
				t.Fatalf("other tenant lists %+v", s)
			}
		}
		a.do("GET", "/v1/scorers", nil).json(t, &list)
		if i := slices.IndexFunc(list, func(s service.ScorerInfo) bool { return s.Name == "triage" }); i < 0 ||
			list[i].Source != service.SourceTenant || list[i].Promoted != 1 || len(list[i].Versions) != 1 {
			t.Fatalf("acme's list lacks its scorer: %+v", list)
		}

		// The same module published by B is stored again, for B: nothing in the answer or
		// the storage says A has it.
		bv, r := publish(t, b, map[string]any{"name": "triage", "module": module})
		if r.status != http.StatusCreated || bv.Version != 1 || !bv.Promoted {
			t.Fatalf("other publishes the same module: %d %s", r.status, r.body)
		}
		for _, name := range []string{"acme", "other"} {
			if n, size, err := h.env.Store.ModuleUsage(context.Background(), tenantID(t, h, name)); err != nil || n != 1 || size != int64(len(module)) {
				t.Fatalf("%s stores %d modules (%d bytes), %v; want its own copy", name, n, size, err)
			}
		}

		// A replaces relevancy for itself; B's relevancy is the built-in still.
		before := evaluate(t, b, "bot", `{"limit": 5, "scorers": ["relevancy"]}`)
		if _, r := publish(t, a, map[string]any{"name": "relevancy", "module": module}); r.status != http.StatusUnprocessableEntity ||
			!strings.Contains(r.problem(t).Detail, `"replaces": true`) {
			t.Fatalf("replace without saying so: %d %s", r.status, r.body)
		}
		rv, r := publish(t, a, map[string]any{"name": "relevancy", "replaces": true, "module": module})
		if r.status != http.StatusCreated || rv.Promoted {
			t.Fatalf("publish a replacement: %d %s", r.status, r.body)
		}
		if r := a.do("POST", "/v1/scorers/relevancy/versions/1/promote", nil); r.status != 200 {
			t.Fatalf("promote: %d %s", r.status, r.body)
		}
		if got := evaluate(t, a, "bot", `{"limit": 5, "scorers": ["relevancy"]}`); got.Scorers[0].Version != "1" || got.Scorers[0].Scored != 5 {
			t.Fatalf("acme's relevancy: %+v", got.Scorers[0])
		}
		after := evaluate(t, b, "bot", `{"limit": 5, "scorers": ["relevancy"]}`)
		if after.Scorers[0].Version != before.Scorers[0].Version || len(after.Results) != len(before.Results) {
			t.Fatalf("other's relevancy changed: %+v, was %+v", after.Scorers[0], before.Scorers[0])
		}
		for i := range after.Results {
			x, y := after.Results[i], before.Results[i]
			if x.Status != y.Status || x.Reason != y.Reason || x.ScorerDigest != "" || fmt.Sprint(x.Score) != fmt.Sprint(y.Score) {
				t.Fatalf("other's result %s changed: %+v, was %+v", x.RunID, x, y)
			}
		}
	})
}

// TestHostilePublishes: each refused at publish with what is wrong and how to fix it,
// nothing stored.
func TestHostilePublishes(t *testing.T) {
	root := buildtest.ModuleRoot(t)
	forbidden := filepath.Join(t.TempDir(), "forbidden.wasm")
	if out, err := exec.Command("wat2wasm", filepath.Join(root, "host", "wasm", "testdata", "forbidden.wat"), "-o", forbidden).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm (apt-get install wabt): %v\n%s", err, out)
	}
	forbiddenBin, err := os.ReadFile(forbidden)
	if err != nil {
		t.Fatal(err)
	}
	const maxModule = 1 << 20
	h := newHarness(t, filepath.Join(t.TempDir(), "scorekit.db"), servicetest.Options{Publish: service.PublishConfig{MaxModuleBytes: maxModule}}, "acme")
	c := h.as(t, "acme")
	big := append([]byte("\x00asm\x01\x00\x00\x00"), make([]byte, maxModule)...)
	huge := make([]byte, 2*maxModule)
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		code   string
		detail string
	}{
		{"bytes that are not WASM", map[string]any{"name": "x", "module": []byte("#!/bin/sh\nrm -rf /\n")}, 422, api.CodeScorerRefused, "not a WebAssembly module"},
		{"a module over the cap", map[string]any{"name": "x", "module": big}, 413, api.CodeBodyTooLarge, "at most 1048576"},
		{"an upload over the body limit", map[string]any{"name": "x", "module": huge}, 413, api.CodeBodyTooLarge, ""},
		{"a manifest asking 4 GiB", map[string]any{"name": "x", "module": forbiddenBin, "manifest": map[string]any{"limits": map[string]any{"memory_mib": 4096}}}, 422, api.CodeScorerRefused, "limits.memory_mib is 4096"},
		{"a forbidden import", map[string]any{"name": "x", "module": forbiddenBin}, 422, api.CodeScorerRefused, "env.open_socket"},
		{"a name taken by a built-in", map[string]any{"name": "prescreen", "base": "json_valid"}, 422, api.CodeScorerRefused, `"replaces": true`},
		{"both a base and a module", map[string]any{"name": "x", "base": "json_valid", "module": forbiddenBin}, 422, api.CodeScorerRefused, "either"},
		{"a config the base refuses", map[string]any{"name": "x", "base": "prescreen", "config": map[string]any{"nope": 1}}, 422, api.CodeScorerRefused, "nope"},
		{"a base that does not exist", map[string]any{"name": "x", "base": "nonesuch"}, 422, api.CodeScorerRefused, "no such scorer"},
		{"a bad name", map[string]any{"name": "Bad Name", "base": "prescreen"}, 422, api.CodeScorerRefused, "lower case"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, r := publish(t, c, tc.body)
			p := r.problem(t)
			if r.status != tc.status || p.Code != tc.code || !strings.Contains(p.Detail, tc.detail) {
				t.Fatalf("%d %s %q; want %d %s containing %q", r.status, p.Code, p.Detail, tc.status, tc.code, tc.detail)
			}
		})
	}
	var list []service.ScorerInfo
	c.do("GET", "/v1/scorers", nil).json(t, &list)
	for _, s := range list {
		if s.Source == service.SourceTenant {
			t.Fatalf("a refused publish left %+v", s)
		}
	}
	if n, _, err := h.env.Store.ModuleUsage(context.Background(), tenantID(t, h, "acme")); err != nil || n != 0 {
		t.Fatalf("modules stored after refusals: %d, %v", n, err)
	}
}

func tenantID(t *testing.T, h *harness, name string) int64 {
	t.Helper()
	tn, err := h.env.Service.Tenant(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return tn.ID
}

// watModule compiles host/wasm/testdata/NAME.wat with wabt's wat2wasm.
func watModule(t *testing.T, name string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), name+".wasm")
	src := filepath.Join(buildtest.ModuleRoot(t), "host", "wasm", "testdata", name+".wat")
	if b, err := exec.Command("wat2wasm", src, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm %s (apt-get install wabt): %v\n%s", src, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHostileModulesContainedAtCall: modules that pass the checks at publish and misbehave
// when called (an endless loop, a memory.grow bomb, a trap) are failed with the reason,
// never scored, while another tenant's evaluation at the same time finishes unharmed.
func TestHostileModulesContainedAtCall(t *testing.T) {
	h := newHarness(t, filepath.Join(t.TempDir(), "scorekit.db"), servicetest.Options{}, "acme", "other")
	a, b := h.as(t, "acme"), h.as(t, "other")
	for _, c := range []client{a, b} {
		if r := c.do("POST", "/v1/runs", wordRuns("bot", "r", 0, 5)); r.status != 200 {
			t.Fatalf("import: %d %s", r.status, r.body)
		}
	}
	for _, m := range []struct {
		name   string
		limits map[string]any
	}{
		{"loop", map[string]any{"timeout_ms": 200}},
		{"growbomb", map[string]any{"memory_mib": 2}},
		{"trap", nil},
	} {
		body := map[string]any{"name": m.name, "module": watModule(t, m.name)}
		if m.limits != nil {
			body["manifest"] = map[string]any{"limits": m.limits}
		}
		if _, r := publish(t, a, body); r.status != http.StatusCreated {
			t.Fatalf("publish %s: %d %s", m.name, r.status, r.body)
		}
	}
	// The other tenant's evaluation is queued first, and runs beside the hostile one.
	r := b.do("POST", "/v1/agents/bot/evaluations", []byte(`{"limit": 5, "scorers": ["prescreen"]}`))
	var queued service.EvaluationView
	if r.status != http.StatusAccepted {
		t.Fatalf("other's evaluation: %d %s", r.status, r.body)
	}
	r.json(t, &queued)
	hostile := evaluate(t, a, "bot", `{"limit": 5, "scorers": ["loop", "growbomb", "trap"]}`)
	for _, r := range hostile.Results {
		if r.Status != "failed" || r.Error == nil || r.Error.Message == "" || r.Score != nil {
			t.Fatalf("%s on %s: %+v; want failed with the reason", r.Scorer, r.RunID, r)
		}
		if r.Scorer == "loop" && r.Error.Code != "timeout" {
			t.Fatalf("loop: %+v; want timeout", r.Error)
		}
	}
	var other service.EvaluationView
	b.do("GET", "/v1/evaluations/"+queued.ID+"?wait=30s", nil).json(t, &other)
	if s := other.Scorers[0]; other.Status != service.StatusDone || s.Scored != 5 || s.Failed != 0 {
		t.Fatalf("the other tenant's evaluation: %+v", s)
	}
}

// TestConfiguredRubricPinsItsJudgeModel: a configured rubric published with the team's
// model is called with that model, and its results record the version, the config hash
// and the model; v2 with another model is another version, compared on the same runs.
func TestConfiguredRubricPinsItsJudgeModel(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"reasoning": "fine", "choice": "yes"}`})
	t.Cleanup(srv.Close)
	b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge-model", Models: []string{"team-judge", "team-judge-2"}, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	h := newHarness(t, filepath.Join(t.TempDir(), "scorekit.db"), servicetest.Options{Judge: b}, "acme")
	c := h.as(t, "acme")
	if r := c.do("POST", "/v1/runs", wordRuns("bot", "r", 0, 3)); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	config := func(model string) map[string]any {
		return map[string]any{"instructions": "Does the reply answer? yes or no.", "choices": map[string]any{"yes": 1, "no": 0}, "model": model}
	}
	v1, r := publish(t, c, map[string]any{"name": "answers", "base": "rubric", "config": config("team-judge")})
	if r.status != http.StatusCreated || v1.Kind != "configured" || v1.Base != "rubric" || v1.JudgeModel != "team-judge" || !v1.Promoted {
		t.Fatalf("publish: %d %s", r.status, r.body)
	}
	ev := evaluate(t, c, "bot", `{"limit": 3, "scorers": ["answers"]}`)
	for _, res := range ev.Results {
		if res.Status != "scored" || res.JudgeModel != "team-judge" || res.ScorerVersion != "1" || res.ScorerDigest != v1.Digest {
			t.Fatalf("result %+v", res)
		}
	}
	for _, req := range srv.Requests() {
		if req.Model != "team-judge" {
			t.Fatalf("the judge was asked for %q", req.Model)
		}
	}
	v2, _ := publish(t, c, map[string]any{"name": "answers", "base": "rubric", "config": config("team-judge-2")})
	if v2.Version != 2 || v2.Digest == v1.Digest || v2.JudgeModel != "team-judge-2" {
		t.Fatalf("v2 %+v", v2)
	}
	cmp := evaluate(t, c, "bot", `{"limit": 3, "scorers": ["answers@2"]}`)
	if s := cmp.Scorers[0]; s.Version != "2" || s.Previous == nil || s.Previous.Runs != 3 || cmp.Results[0].JudgeModel != "team-judge-2" {
		t.Fatalf("v2 beside v1: %+v %+v", s, cmp.Results[0])
	}
	// A config for a published scorer is refused: it is pinned in the version.
	if r := c.do("POST", "/v1/agents/bot/evaluations", []byte(`{"limit": 3, "scorers": ["answers"], "config": {"answers": {"model": "x"}}}`)); r.status != http.StatusBadRequest ||
		!strings.Contains(r.problem(t).Detail, "publish a new version") {
		t.Fatalf("config for a published scorer: %d %s", r.status, r.body)
	}
}
