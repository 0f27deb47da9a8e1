package rubric

import (
	"encoding/json"
	"strings"
	"testing"
	"text/template"

	"github.com/scorekit/scorekit/sdk"
)

// TestExecutorMatchesTextTemplate: the rubric's executor renders what Go's text/template
// renders, on the same tree and data, for the constructs and functions it offers.
func TestExecutorMatchesTextTemplate(t *testing.T) {
	run := &sdk.Run{
		Agent: "desk", Input: "Where is my parcel?", Output: "It left the depot [1].", Expected: "In transit.",
		Conversation: []sdk.Turn{
			{Role: "system", Content: "You are the shipping desk."},
			{Role: "user", Content: "Where is my parcel?"},
			{Role: "assistant", ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "track", Arguments: `{"order":1}`}}},
			{Role: "tool", ToolCallID: "c1", Content: `{"status":"in transit"}`},
		},
		ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "track", Arguments: `{"order":1}`, Result: `{"status":"in transit"}`}},
		Context:   []sdk.Passage{{ID: "1", Text: "Parcel left at 08:10."}, {ID: "doc-2", Text: "Depots open at 6."}},
		Metadata:  map[string]any{"team": "shipping", "customer": map[string]any{"tier": "gold", "since": 2019.0}, "n": 3.0},
	}
	empty := &sdk.Run{Input: "hi", Output: ""}
	templates := []string{
		DefaultTemplate,
		`{{.input}}|{{.output}}|{{.expected}}|{{.agent}}|{{.purpose}}|{{.metadata}}`,
		`{{range $i, $p := .context}}{{$i}}={{$p.id}}:{{.text}};{{else}}none{{end}}`,
		`{{range .conversation}}{{if eq .role "tool"}}{{continue}}{{end}}{{.role}}{{range .tool_calls}}<{{.name}}>{{end}},{{end}}`,
		`{{range .context}}{{if eq .id "doc-2"}}{{break}}{{end}}{{.text}}{{end}}`,
		`{{with .expected}}ref: {{.}}{{else}}no ref{{end}} {{with $x := .output}}{{$x}}{{end}}`,
		`{{$n := len .context}}{{if gt $n 1}}many{{else if eq $n 1}}one{{else}}none{{end}} {{len .output}}`,
		`{{$v := .input}}{{$v = .output}}{{$v}}`,
		`{{if and .context .expected}}both{{end}} {{or .expected "none"}} {{and .output .input}} {{not .expected}}`,
		`{{if and (ne .agent "x") (le (len .tool_calls) 3) (lt 1 2) (ge 2 2)}}yes{{end}} {{eq 1.5 1.5}} {{eq true (not .expected)}} {{eq .agent "a" "desk"}}`,
		`{{.output | printf "%.6s"}} {{printf "%d-%v-%q" (len .context) true .agent}} {{1.5}} {{-2}} {{true}}`,
		`{{lower .input}} {{upper .agent}} [{{trim "  x  "}}] {{json .tool_calls}} {{json .input}}`,
		`{{meta "team"}}|{{meta "customer" "tier"}}|{{meta "customer"}}|{{meta "n"}}|{{meta "none"}}|{{meta "team" "deeper"}}`,
		`{{(index .context 1).text}} {{with index .conversation 2}}{{(index .tool_calls 0).arguments}}{{end}}`,
		`{{- /* a comment */ -}} x {{- .agent -}} y`,
	}
	funcs := template.FuncMap{
		"json":  func(v any) (string, error) { b, err := json.Marshal(v); return string(b), err },
		"lower": strings.ToLower, "upper": strings.ToUpper, "trim": strings.TrimSpace,
	}
	for _, r := range []*sdk.Run{run, empty} {
		// meta reads the run's metadata; the executor's own is the reference for both.
		funcs["meta"] = func(keys ...string) string {
			x := &executor{run: r}
			args := make([]any, len(keys))
			for i, k := range keys {
				args[i] = k
			}
			v, _ := x.meta(args)
			return v.(string)
		}
		for _, src := range templates {
			if r == empty && strings.Contains(src, "index") {
				continue // an index past the end is an error in both
			}
			tree, err := parseTemplate(src)
			if err != nil {
				t.Fatalf("%q: %v", src, err)
			}
			want := &strings.Builder{}
			tt, err := template.New(Name).Funcs(funcs).Parse(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.Execute(want, view(r)); err != nil {
				t.Fatalf("text/template on %q: %v", src, err)
			}
			s := &scorer{tmpl: tree}
			got, err := s.render(r)
			if err != nil {
				t.Fatalf("render %q: %v", src, err)
			}
			if got != want.String() {
				t.Errorf("%q:\nrubric        %q\ntext/template %q", src, got, want.String())
			}
		}
	}
}
