package web

import (
	"context"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/service"
)

func chain(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// TestShowRun: each part of a run is shown within its bound, and what is cut is said.
func TestShowRun(t *testing.T) {
	many := make([]string, 150)
	for i := range many {
		many[i] = fmt.Sprintf(`"k%03d": %d`, i, i)
	}
	passages := make([]string, 60)
	for i := range passages {
		passages[i] = fmt.Sprintf(`{"id": "p%d", "text": "passage %d"}`, i, i)
	}
	cases := []struct {
		name, run string
		check     func(t *testing.T, r runShown)
	}{
		{"a plain run", `{"id": "r", "agent": "a", "input": "q", "output": "a", "context": ["one", {"id": "2", "text": "two"}, {"id": 3, "text": "three"}], "metadata": {"k": [1, "s", null]}}`,
			func(t *testing.T, r runShown) {
				if r.Cut() || r.Input.Text != "q" || r.Output.Text != "a" || len(r.Context) != 3 || r.Context[1].Text != "[2] two" || r.Context[2].Text != "[3] three" {
					t.Errorf("%+v", r)
				}
				if want := "{\n  \"metadata\": {\n    \"k\": [\n      1,\n      \"s\",\n      null\n    ]\n  }\n}"; r.Rest.Text != want {
					t.Errorf("rest:\n%s\nwant:\n%s", r.Rest.Text, want)
				}
			}},
		{"metadata 9,000 levels deep", `{"output": "a", "metadata": {"a": ` + chain(9000) + `, "b": ` + chain(9000) + `}}`,
			func(t *testing.T, r runShown) {
				if !strings.Contains(r.Rest.Text, `"a": [`) || !strings.Contains(r.Rest.Text, "[…]") || len(r.Rest.Text) > 1000 {
					t.Errorf("rest (%d bytes):\n%s", len(r.Rest.Text), r.Rest.Text)
				}
				if r.Rest.Cut != "2 values nested deeper than 8 levels shown as […] or {…}" || !r.Cut() {
					t.Errorf("cut %q", r.Rest.Cut)
				}
			}},
		{"long text", `{"input": "` + strings.Repeat("é", 40<<10) + `", "output": "` + strings.Repeat("o", 1<<20) + `"}`,
			func(t *testing.T, r runShown) {
				if len(r.Input.Text) > maxTextBytes+3 || !strings.HasSuffix(r.Input.Text, "é…") || r.Input.Cut != "the first 32 KiB of 80 KiB are shown" {
					t.Errorf("input cut %q (%d bytes)", r.Input.Cut, len(r.Input.Text))
				}
				if r.Output.Cut != "the first 32 KiB of 1 MiB are shown" {
					t.Errorf("output cut %q", r.Output.Cut)
				}
			}},
		{"many members and passages", `{"output": "a", "context": [` + strings.Join(passages, ",") + `], "metadata": {` + strings.Join(many, ",") + `}, "extra": "` + strings.Repeat("x", 5000) + `"}`,
			func(t *testing.T, r runShown) {
				if len(r.Context) != maxPassages || r.ContextCut != "10 passages past the first 50 not shown" {
					t.Errorf("%d passages, cut %q", len(r.Context), r.ContextCut)
				}
				if !strings.Contains(r.Rest.Text, `"k099": 99`) || strings.Contains(r.Rest.Text, `"k100"`) || !strings.Contains(r.Rest.Text, "… 50 more") {
					t.Errorf("rest:\n%s", r.Rest.Text)
				}
				if r.Rest.Cut != "50 items past the first 100 of an array or object left out; 1 string cut to 2 KiB" {
					t.Errorf("cut %q", r.Rest.Cut)
				}
			}},
		{"a conversation as input", `{"input": [{"role": "user", "content": "hi"}], "output": {"role": "assistant", "content": "yo"}}`,
			func(t *testing.T, r runShown) {
				if !strings.Contains(r.Input.Text, `"content": "hi"`) || !strings.Contains(r.Output.Text, `"role": "assistant"`) || r.Cut() {
					t.Errorf("%+v", r)
				}
			}},
		{"a broken body", `{"input": "q", "output": "a", "metadata": {"k": [1, 2`,
			func(t *testing.T, r runShown) {
				if r.Input.Text != "q" || !strings.Contains(r.Broken, "does not decode past byte") || !r.Cut() {
					t.Errorf("%+v", r)
				}
			}},
		{"a duplicate name", `{"output": "a", "output": "b"}`,
			func(t *testing.T, r runShown) {
				if r.Output.Text != "b" || r.Broken != "" {
					t.Errorf("%+v", r)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.check(t, showRun("r", []byte(c.run))) })
	}
}

// TestShowRunText: past its budget, the rest of a run is left out and counted.
func TestShowRunText(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"output": "a", "metadata": {`)
	for i := range 100 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%02d": [%q, %q]`, i, strings.Repeat("x", 1500), strings.Repeat("y", 1500))
	}
	b.WriteString(`}}`)
	r := showRun("r", []byte(b.String()))
	if len(r.Rest.Text) > maxJSONBytes+maxJSONString+100 || !strings.Contains(r.Rest.Cut, "past the first 64 KiB of text left out") {
		t.Errorf("rest of %d bytes, cut %q", len(r.Rest.Text), r.Rest.Cut)
	}
}

// TestPageBound: a page that would pass maxPageBytes is not sent; the answer says so.
func TestPageBound(t *testing.T) {
	h := &Handler{pages: map[string]*template.Template{}, opts: Options{Logger: slog.New(slog.DiscardHandler)}}
	if err := h.parse(); err != nil {
		t.Fatal(err)
	}
	big := runData{Run: service.RunView{ID: "r"}, Shown: runShown{ID: "r", Output: shown{Text: strings.Repeat("o", maxPageBytes)}}}
	rec := httptest.NewRecorder()
	req := httptest.NewRequestWithContext(context.Background(), "GET", "/runs/r", nil)
	h.render(rec, req, "run", http.StatusOK, big)
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != http.StatusInternalServerError || len(body) > 64<<10 || !strings.Contains(string(body), "This page would be larger than 4 MiB") {
		t.Fatalf("%d, %d bytes:\n%.2000s", rec.Code, len(body), body)
	}
	rec = httptest.NewRecorder()
	small := runData{Run: service.RunView{ID: "r"}, Shown: runShown{ID: "r", Output: shown{Text: "fine"}}}
	h.render(rec, req, "run", http.StatusOK, small)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "fine") {
		t.Fatalf("a small page: %d", rec.Code)
	}
}
