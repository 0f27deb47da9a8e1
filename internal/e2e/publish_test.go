package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/buildtest"
	"github.com/scorekit/scorekit/internal/service"
)

// A tenant publishes, compares, promotes and rolls back its own WASM scorer on a service
// of separate processes over PostgreSQL: serve takes the requests and runs no jobs; a
// worker started before anything was published, with a module cache of its own as on
// another machine, scores every version without a restart.
func TestPublishedScorerReachesARunningWorker(t *testing.T) {
	module := buildtest.FirstScorerWASM(t)
	dsn := postgres(t)
	dir := t.TempDir()
	scorekit(t, dir, "tenants", "create", "acme", "--db", dsn)
	key := strings.TrimSpace(scorekit(t, dir, "keys", "create", "--tenant", "acme", "--db", dsn))
	addr := freeAddr(t)
	api := start(t, dir, "serve", "--addr", addr, "--db", dsn, "--workers", "0", "--scorer-cache", filepath.Join(dir, "serve-cache"))
	waitHealthy(t, api, addr)
	worker := start(t, dir, "worker", "--db", dsn, "--workers", "2", "--poll", "100ms", "--scorer-cache", filepath.Join(dir, "worker-cache"))
	c := client{url: "http://" + addr, key: key}

	var runs strings.Builder
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	words := func(i int) int { return i*7%40 + 1 }
	for i := range 12 {
		fmt.Fprintf(&runs, `{"id": "r%02d", "agent": "bot", "input": "summarise", "output": %q, "time": %q}`+"\n", i,
			strings.TrimSpace(strings.Repeat("word ", words(i))), t0.Add(time.Duration(i)*time.Minute).Format(time.RFC3339))
	}
	if st := c.do(t, "POST", "/v1/runs", []byte(runs.String()), nil); st != 200 {
		t.Fatalf("import: %d", st)
	}
	publish := func(body map[string]any) service.PublishedVersion {
		t.Helper()
		b, _ := json.Marshal(body)
		var v service.PublishedVersion
		if st := c.do(t, "POST", "/v1/scorers", b, &v); st != 201 {
			t.Fatalf("publish: %d", st)
		}
		return v
	}
	evaluate := func(scorer string) service.EvaluationView {
		t.Helper()
		var ev, v service.EvaluationView
		if st := c.do(t, "POST", "/v1/agents/bot/evaluations", []byte(`{"limit": 10, "scorers": ["`+scorer+`"]}`), &ev); st != 202 {
			t.Fatalf("evaluate %s: %d", scorer, st)
		}
		deadline := time.Now().Add(2 * time.Minute)
		for v.Status != service.StatusDone {
			if time.Now().After(deadline) {
				t.Fatalf("evaluation of %s not done in 2 minutes: %+v\nworker:\n%s", scorer, v, worker.stderr.String())
			}
			if st := c.do(t, "GET", "/v1/evaluations/"+ev.ID+"?wait=5s", nil, &v); st != 200 {
				t.Fatalf("get evaluation: %d", st)
			}
		}
		for _, r := range v.Results {
			if r.Status != "scored" {
				t.Fatalf("%s on %s: %+v\nworker:\n%s", scorer, r.RunID, r, worker.stderr.String())
			}
		}
		return v
	}
	passed := func(v service.EvaluationView) int {
		n := 0
		for _, r := range v.Results {
			if r.Passed != nil && *r.Passed {
				n++
			}
		}
		return n
	}

	v1 := publish(map[string]any{"name": "triage", "module": module})
	first := evaluate("triage")
	if first.Scorers[0].Version != "1" || passed(first) != 10 || first.Results[0].ScorerDigest != v1.Digest {
		t.Fatalf("v1: %+v, %d passed", first.Scorers[0], passed(first))
	}
	// v2 through the command line, with the key in its environment variable.
	modFile := filepath.Join(dir, "word_budget.wasm")
	if err := os.WriteFile(modFile, module, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SCOREKIT_KEY", key)
	server := "http://" + addr
	if out := scorekit(t, dir, "scorers", "publish", "triage", "--module", modFile, "--config", `{"max_words": 10}`, "--server", server); !strings.HasPrefix(out, "triage@2  wasm  "+v1.Digest) {
		t.Fatalf("scorers publish: %q", out)
	}
	// scorekit eval prints the two versions side by side and the runs they disagree on.
	out := scorekit(t, dir, "eval", "--db", dsn, "--tenant", "acme", "--agent", "bot", "--last", "10", "--scorers", "triage@1,triage@2",
		"--scorer-cache", filepath.Join(dir, "eval-cache"))
	for _, want := range []string{"triage@2", "triage: the versions disagree on", "triage@2 (v2)", "for a budget of 10"} {
		if !strings.Contains(out, want) {
			t.Fatalf("scorekit eval lacks %q:\n%s", want, out)
		}
	}
	cmp := evaluate("triage@2")
	strict := passed(cmp)
	if s := cmp.Scorers[0]; s.Version != "2" || s.Previous == nil || s.Previous.Runs != 10 || strict == 10 || strict == 0 {
		t.Fatalf("v2 beside v1: %+v, %d passed", s, strict)
	}
	if out := scorekit(t, dir, "scorers", "promote", "triage@2", "--server", server); !strings.Contains(out, "triage@2") || !strings.Contains(out, "promoted") {
		t.Fatalf("scorers promote: %q", out)
	}
	if v := evaluate("triage"); v.Scorers[0].Version != "2" || passed(v) != strict {
		t.Fatalf("after promotion: %+v, %d passed", v.Scorers[0], passed(v))
	}
	var pv service.PublishedVersion
	if st := c.do(t, "POST", "/v1/scorers/triage/versions/1/promote", nil, &pv); st != 200 {
		t.Fatalf("roll back: %d", st)
	}
	if v := evaluate("triage"); v.Scorers[0].Version != "1" || passed(v) != 10 {
		t.Fatalf("after rollback: %+v, %d passed", v.Scorers[0], passed(v))
	}
	// One worker, never restarted, did every job.
	select {
	case err := <-worker.done:
		worker.done <- err
		t.Fatalf("the worker exited: %v\n%s", err, worker.stderr.String())
	default:
	}
	if out := scorekit(t, dir, "scorers", "versions", "triage", "--server", server); len(lines(out)) != 2 || !strings.HasSuffix(lines(out)[0], "promoted") {
		t.Fatalf("scorers versions: %q", out)
	}
	var vs []service.PublishedVersion
	if st := c.do(t, "GET", "/v1/scorers/triage/versions", nil, &vs); st != 200 || len(vs) != 2 ||
		!slices.EqualFunc(vs, []bool{true, false}, func(v service.PublishedVersion, p bool) bool { return v.Promoted == p }) {
		t.Fatalf("versions: %d %+v", st, vs)
	}
}

// The README's "Bring your own scorer" walkthrough works as written: a module built from
// examples/first-scorer published as v1, v2 with a tighter budget, both on the same 10
// runs with the runs they disagree on, v2 promoted.
func TestREADMEPublishWalkthrough(t *testing.T) {
	got := runREADMEBlocks(t, 4*time.Minute, "publish")["publish"]
	for _, want := range []string{
		"triage@1  wasm  sha256:", // publish v1: promoted at once
		`{"name":"triage","version":"1","scored":10,`, `"pass_rate":1}`,
		`{"name":"triage@2","version":"2","scored":10,`, `"pass_rate":0.7}`,
		`"disagreements":[`, `"reason":"107 words for a budget of 30"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	var ls []string // the scorers commands' lines; serve's go to the same output
	for _, l := range lines(got) {
		if strings.HasPrefix(l, "triage@") {
			ls = append(ls, l)
		}
	}
	if len(ls) < 2 {
		t.Fatalf("no scorers versions output:\n%s", got)
	}
	if last := ls[len(ls)-2:]; !strings.HasPrefix(last[0], "triage@1  wasm") || strings.HasSuffix(last[0], "promoted") ||
		!strings.HasPrefix(last[1], "triage@2  wasm") || !strings.HasSuffix(last[1], "promoted") {
		t.Errorf("scorers versions after the promotion: %q", last)
	}
}
