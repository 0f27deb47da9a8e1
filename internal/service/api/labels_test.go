package api_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// Labels over HTTP: recorded, replaced, listed a page at a time, imported from JSONL with
// bad lines reported, measured against the scorer, and removed.
func TestLabelsHTTP(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		h := newHarness(t, dsn, servicetest.Options{}, "acme")
		c := h.as(t, "acme")
		var runs strings.Builder
		for i := range 6 {
			out := "a helpful answer about invoices"
			if i%2 == 1 {
				out = ""
			}
			fmt.Fprintf(&runs, `{"id": "r%d", "agent": "bot", "input": "question %d about invoices", "output": %q}`+"\n", i, i, out)
		}
		if r := c.do("POST", "/v1/runs", []byte(runs.String())); r.status != 200 {
			t.Fatalf("import runs: %d %s", r.status, r.body)
		}
		ev := evaluate(t, c, "bot", `{"limit": 6}`)
		passed := map[string]bool{}
		for _, res := range ev.Results {
			passed[res.RunID] = res.Passed != nil && *res.Passed
		}

		if r := c.do("PUT", "/v1/runs/r0/labels/prescreen", []byte(`{"labeller": "ana", "passed": true}`)); r.status != http.StatusCreated {
			t.Fatalf("first label: %d %s", r.status, r.body)
		}
		r := c.do("PUT", "/v1/runs/r0/labels/prescreen", []byte(`{"labeller": "ana", "passed": true, "note": "fine"}`))
		var l service.Label
		r.json(t, &l)
		if r.status != http.StatusOK || l.Note != "fine" || l.RunID != "r0" || l.Scorer != "prescreen" {
			t.Fatalf("relabel: %d %s", r.status, r.body)
		}
		for _, c2 := range []struct{ body, want string }{
			{`{"labeller": "ana", "passed": true, "score": 1}`, "exactly one of"},
			{`{"labeller": "ana", "score": 3}`, "score"},
			{`{"passed": true}`, "labeller"},
		} {
			r := c.do("PUT", "/v1/runs/r1/labels/prescreen", []byte(c2.body))
			if p := r.problem(t); r.status != 400 || !strings.Contains(p.Detail, c2.want) {
				t.Fatalf("PUT %s: %d %s; want 400 naming %q", c2.body, r.status, r.body, c2.want)
			}
		}
		if r := c.do("PUT", "/v1/runs/ghost/labels/prescreen", []byte(`{"labeller": "ana", "passed": true}`)); r.status != 404 || r.problem(t).Code != api.CodeNotFound {
			t.Fatalf("label of a missing run: %d %s", r.status, r.body)
		}

		// The rest from a file: each run labelled as the scorer did, except r1, and a bad
		// line reported by number.
		var body strings.Builder
		for i := 1; i < 6; i++ {
			id := fmt.Sprintf("r%d", i)
			want := passed[id]
			if i == 1 {
				want = !want
			}
			fmt.Fprintf(&body, `{"run_id": %q, "scorer": "prescreen", "labeller": "ana", "passed": %v}`+"\n", id, want)
		}
		body.WriteString(`{"run_id": "r2", "scorer": "prescreen", "labeller": "ana", "verdict": "pass"}` + "\n")
		r = c.do("POST", "/v1/labels", []byte(body.String()))
		var imp service.LabelImportResult
		r.json(t, &imp)
		if r.status != 200 || imp.Stored != 5 || imp.Rejected != 1 || imp.Lines[5].Line != 6 || !strings.Contains(imp.Lines[5].Error, `unknown field "verdict"`) {
			t.Fatalf("import: %d %s", r.status, r.body)
		}

		r = c.do("GET", "/v1/labels?limit=4", nil)
		var page service.LabelsPage
		r.json(t, &page)
		if r.status != 200 || len(page.Labels) != 4 || page.Next == "" {
			t.Fatalf("first page: %d %s", r.status, r.body)
		}
		r = c.do("GET", "/v1/labels?limit=4&cursor="+page.Next, nil)
		page = service.LabelsPage{}
		r.json(t, &page)
		if len(page.Labels) != 2 || page.Next != "" || page.Labels[1].RunID != "r5" {
			t.Fatalf("second page: %s", r.body)
		}

		var ag service.ScorerAgreement
		r = c.do("GET", "/v1/scorers/prescreen/agreement", nil)
		r.json(t, &ag)
		if r.status != 200 || ag.PassFail == nil || ag.PassFail.Runs != 6 || ag.PassFail.Accuracy.Value != 5.0/6 ||
			len(ag.Disagreements) != 1 || ag.Disagreements[0].RunID != "r1" || ag.Disagreements[0].Reason == "" {
			t.Fatalf("agreement: %d %s", r.status, r.body)
		}
		if ag.PassFail.Accuracy.Method != "wilson" || ag.PassFail.Accuracy.N != 6 || !(ag.PassFail.Accuracy.Low < 5.0/6 && ag.PassFail.Accuracy.High > 5.0/6) {
			t.Fatalf("accuracy %+v: want a Wilson interval around 5/6 on 6 runs", ag.PassFail.Accuracy)
		}

		// Every labelled run is scored: nothing to start.
		var sl service.ScoreLabelledResult
		r = c.do("POST", "/v1/scorers/prescreen/agreement/score", nil)
		r.json(t, &sl)
		if r.status != http.StatusAccepted || sl.Runs != 0 || len(sl.Evaluations) != 0 {
			t.Fatalf("score labelled: %d %s", r.status, r.body)
		}

		if r := c.do("DELETE", "/v1/runs/r1/labels/prescreen?labeller=ana", nil); r.status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", r.status, r.body)
		}
		if r := c.do("DELETE", "/v1/runs/r1/labels/prescreen?labeller=ana", nil); r.status != 404 {
			t.Fatalf("delete again: %d %s", r.status, r.body)
		}
		r = c.do("GET", "/v1/scorers/prescreen/agreement", nil)
		r.json(t, &ag)
		if ag.PassFail == nil || ag.PassFail.Runs != 5 || ag.PassFail.Accuracy.Value != 1 || len(ag.Disagreements) != 0 {
			t.Fatalf("agreement after the delete: %s", r.body)
		}
	})
}

// A key of scope label reads and writes labels under its own labeller's name only: another
// labeller's label is refused with the name it may use (an import keeps its other lines),
// and everything beyond labels and reads needs another key.
func TestLabelKeyWritesItsOwnLabels(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		h := newHarness(t, dsn, servicetest.Options{NoWorkers: true}, "acme", "other")
		admin := h.as(t, "acme")
		if r := h.as(t, "other").do("POST", "/v1/runs", []byte(`{"id": "theirs", "agent": "bot", "input": "q", "output": "a"}`)); r.status != 200 {
			t.Fatalf("the other tenant's run: %d %s", r.status, r.body)
		}
		if r := admin.do("POST", "/v1/runs", []byte(`{"id": "r1", "agent": "bot", "input": "q", "output": "a"}`+"\n"+
			`{"id": "r2", "agent": "bot", "input": "q", "output": "a"}`)); r.status != 200 {
			t.Fatalf("import runs: %d %s", r.status, r.body)
		}
		key, k, err := h.env.Service.CreateLabellerKey(context.Background(), "acme", " ana ")
		if err != nil || k.Scope != store.ScopeLabel || k.Labeller != "ana" {
			t.Fatalf("label key: %+v, %v", k, err)
		}
		c := client{t: t, url: h.srv.URL, key: key}
		if r := c.do("PUT", "/v1/runs/r1/labels/prescreen", []byte(`{"labeller": "ana", "passed": true}`)); r.status != http.StatusCreated {
			t.Fatalf("its own label: %d %s", r.status, r.body)
		}
		r := c.do("PUT", "/v1/runs/r1/labels/prescreen", []byte(`{"labeller": "bob", "passed": false}`))
		if p := r.problem(t); r.status != http.StatusForbidden || p.Code != api.CodeInsufficientScope || !strings.Contains(p.Detail, `as "ana" only`) {
			t.Fatalf("another labeller's label: %d %s; want 403 naming ana", r.status, r.body)
		}
		var imp service.LabelImportResult
		r = c.do("POST", "/v1/labels", []byte(`{"run_id": "r2", "scorer": "prescreen", "labeller": "bob", "passed": false}`+"\n"+
			`{"run_id": "r2", "scorer": "prescreen", "labeller": "ana", "passed": false}`))
		r.json(t, &imp)
		if r.status != 200 || imp.Stored != 1 || imp.Rejected != 1 || imp.Lines[0].Status != service.LabelRejected ||
			!strings.Contains(imp.Lines[0].Error, `as "ana" only`) || imp.Lines[1].Status != service.LabelStored {
			t.Fatalf("import with another labeller's line: %d %s", r.status, r.body)
		}
		if r := admin.do("PUT", "/v1/runs/r1/labels/prescreen", []byte(`{"labeller": "bob", "passed": false}`)); r.status != http.StatusCreated {
			t.Fatalf("an admin key labels as anyone: %d %s", r.status, r.body)
		}
		if r := c.do("DELETE", "/v1/runs/r1/labels/prescreen?labeller=bob", nil); r.status != http.StatusForbidden {
			t.Fatalf("deleting another labeller's label: %d %s; want 403", r.status, r.body)
		}
		if r := c.do("DELETE", "/v1/runs/r1/labels/prescreen?labeller=ana", nil); r.status/100 != 2 {
			t.Fatalf("deleting its own label: %d %s", r.status, r.body)
		}
		var ls []service.Label
		if r := c.do("GET", "/v1/runs/r1/labels", nil); r.status != 200 {
			t.Fatalf("reading labels: %d %s", r.status, r.body)
		} else if r.json(t, &ls); len(ls) != 1 || ls[0].Labeller != "bob" {
			t.Fatalf("labels of r1: %s; want bob's alone", r.body)
		}
		if r := c.do("GET", "/v1/runs/r1", nil); r.status != 200 {
			t.Fatalf("a label key reads a run: %d", r.status)
		}
		// Another tenant's run is not there for it, to read or to label.
		if r := c.do("PUT", "/v1/runs/theirs/labels/prescreen", []byte(`{"labeller": "ana", "passed": true}`)); r.status != http.StatusNotFound {
			t.Fatalf("a label key labels another tenant's run: %d %s; want 404", r.status, r.body)
		}
		if r := c.do("GET", "/v1/runs/theirs", nil); r.status != http.StatusNotFound {
			t.Fatalf("a label key reads another tenant's run: %d; want 404", r.status)
		}
		r = c.do("POST", "/v1/agents/bot/evaluations", []byte(`{"limit": 1}`))
		if p := r.problem(t); r.status != http.StatusForbidden || !strings.Contains(p.Detail, "needs a key with scope admin") {
			t.Fatalf("a label key evaluates: %d %s; want 403", r.status, r.body)
		}
	})
}
