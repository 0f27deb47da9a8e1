package rubric

import (
	"encoding/json"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/scorekit/scorekit/sdk"
)

// BenchmarkRender renders the default template on a run with a conversation, tool calls
// and ten passages of evidence with the rubric's executor, and reports its time against
// text/template's executor on the same template and data, in the same iterations
// (x-text-template below 1 is faster than text/template).
func BenchmarkRender(b *testing.B) {
	passages := make([]sdk.Passage, 10)
	for i := range passages {
		passages[i] = sdk.Passage{ID: string(rune('a' + i)), Text: strings.Repeat("Parcels leave the depot at eight and arrive within two days. ", 5)}
	}
	run := &sdk.Run{
		Input:  "Where is my parcel 1234?",
		Output: strings.Repeat("Your parcel left the depot this morning and should arrive tomorrow. ", 4),
		Conversation: []sdk.Turn{
			{Role: "system", Content: "You are the shipping desk of an online shop."},
			{Role: "user", Content: "Where is my parcel 1234?"},
		},
		ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "track", Arguments: `{"order":1234}`, Result: `{"status":"in transit"}`}},
		Context:   passages,
		Expected:  "In transit, arriving tomorrow.",
		Metadata:  map[string]any{"channel": "email"},
	}
	tree, err := parseTemplate(DefaultTemplate)
	if err != nil {
		b.Fatal(err)
	}
	s := &scorer{tmpl: tree}
	tt := template.Must(template.New(Name).Funcs(template.FuncMap{
		"json": func(v any) string { j, _ := json.Marshal(v); return string(j) },
	}).Parse(DefaultTemplate))
	var sb strings.Builder
	var ours, theirs time.Duration
	b.ReportAllocs()
	// Each iteration renders with both, alternating, so that the machine's load falls
	// on both alike; ns/op is the pair.
	for b.Loop() {
		t0 := time.Now()
		if _, err := s.render(run); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		sb.Reset()
		if err := tt.Execute(&sb, view(run)); err != nil {
			b.Fatal(err)
		}
		ours, theirs = ours+t1.Sub(t0), theirs+time.Since(t1)
	}
	b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "ns/render")
	b.ReportMetric(float64(ours)/float64(theirs), "x-text-template")
}
