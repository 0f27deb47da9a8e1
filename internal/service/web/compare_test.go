package web_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/web"
)

// TestVersionsSideBySide: an evaluation of two versions of a tenant's scorer shows, on its
// page, the runs whose verdicts differ with each version's verdict and reason beside the
// other's, and only those.
func TestVersionsSideBySide(t *testing.T) {
	in := seed(t, filepath.Join(t.TempDir(), "web.db"), 0, web.Options{})
	ctx := context.Background()
	svc := in.env.Service
	schema := func(required string) json.RawMessage {
		return json.RawMessage(`{"schema": {"type": "object", "required": ["` + required + `"]}}`)
	}
	for _, req := range []service.PublishRequest{
		{Name: "shape", Base: "json_valid", Config: schema("a")},
		{Name: "shape", Base: "json_valid", Config: schema("b")},
	} {
		if _, err := svc.Publish(ctx, in.a, req); err != nil {
			t.Fatal(err)
		}
	}
	runs := `{"id": "both", "agent": "api-bot", "input": "q", "output": "{\"a\": 1, \"b\": 2}"}
{"id": "only-a", "agent": "api-bot", "input": "q", "output": "{\"a\": 1}"}
{"id": "neither", "agent": "api-bot", "input": "q", "output": "{\"c\": 1}"}`
	if _, err := svc.ImportRuns(ctx, in.a, []byte(runs), service.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	ev, err := svc.CreateEvaluation(ctx, in.a, "api-bot", service.EvaluationRequest{Limit: 3, Scorers: []string{"shape@1", "shape@2"}})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := svc.WaitEvaluation(ctx, in.a, ev.ID, time.Minute, service.ViewOptions{}); err != nil || v.Status != service.StatusDone {
		t.Fatalf("evaluation: %+v, %v", v, err)
	}
	b := newBrowser(t, in.srv.URL)
	b.signIn(in.keyA)
	p := b.get("/evaluations/" + ev.ID)
	if p.status != 200 {
		t.Fatalf("GET the evaluation: %d", p.status)
	}
	i := strings.Index(p.body, `id="disagreements"`)
	if i < 0 {
		t.Fatalf("no disagreements section:\n%s", p.body)
	}
	section := p.body[i:]
	section = section[:strings.Index(section, "</table>")]
	if !strings.Contains(section, "1 run ") || !strings.Contains(section, ">only-a<") || strings.Contains(section, ">both<") || strings.Contains(section, ">neither<") {
		t.Fatalf("the section lists the wrong runs:\n%s", section)
	}
	if !strings.Contains(section, "shape@1 <span class=\"meta\">promoted</span>") || !strings.Contains(section, "shape@2</th>") ||
		!strings.Contains(section, "satisfies the schema") || !strings.Contains(section, "missing required property") {
		t.Fatalf("the section does not show both versions:\n%s", section)
	}
}
