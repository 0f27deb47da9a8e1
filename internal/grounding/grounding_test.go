package grounding

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/verdict"
)

func TestSentences(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"Albert Einstein was born on 14 March 1879 in Ulm. He developed relativity. He won the Nobel Prize in 1921.",
			[]string{"Albert Einstein was born on 14 March 1879 in Ulm.", "He developed relativity.", "He won the Nobel Prize in 1921."}},
		{"Revenue was $10.5M in Q1! Was it? 2024 was better.\nA new line", []string{"Revenue was $10.5M in Q1!", "Was it?", "2024 was better.", "A new line"}},
		{"e.g. this stays whole. Done", []string{"e.g. this stays whole.", "Done"}},
		{"  \n ", nil},
	} {
		if got := Sentences(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("Sentences(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestReadClaims: verdicts read loosely and given back as labels, passage ids in the forms
// judges write them, unknown ids dropped and reported, and every unusable answer an error
// that says what is wrong.
func TestReadClaims(t *testing.T) {
	labels := []string{"supported", "contradicted", "not_attributed"}
	ids := map[string]bool{"1": true, "2": true, "tool:c1": true}
	claims, unknown, err := ReadClaims("```json\n"+`{"claims": [
	  {"claim": " A ", "verdict": "Supported", "passages": [1, "[2]"], "reason": "r"},
	  {"claim": "B", "verdict": "not attributed", "passages": "passage 2", "reason": "r"},
	  {"claim": "C", "verdict": "contradicted", "passages": ["tool:c1", "9"], "reason": "r"}]}`+"\n```", labels, ids)
	if err != nil {
		t.Fatal(err)
	}
	want := []Claim{{"A", "supported", []string{"1", "2"}, "r"}, {"B", "not_attributed", []string{"2"}, "r"}, {"C", "contradicted", []string{"tool:c1"}, "r"}}
	for i := range want {
		if i >= len(claims) || claims[i].Claim != want[i].Claim || claims[i].Verdict != want[i].Verdict || !slices.Equal(claims[i].Passages, want[i].Passages) {
			t.Fatalf("claims %+v, want %+v", claims, want)
		}
	}
	if !slices.Equal(unknown, []string{"9"}) {
		t.Errorf("unknown %v, want [9]", unknown)
	}
	for _, tc := range []struct{ answer, says string }{
		{`{"verdicts": []}`, `no "claims" array`},
		{`{"claims": [{"claim": "", "verdict": "supported"}]}`, "claim 1 of the judge's answer is empty"},
		{`{"claims": [{"claim": "A", "verdict": true}]}`, `verdict true is not one of supported, contradicted, not_attributed`},
		{`{"claims": [{"claim": "A", "verdict": "supp`, ""},
	} {
		_, _, err := ReadClaims(tc.answer, labels, ids)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: err %v, want one saying %q", tc.answer, err, tc.says)
		}
	}
	if _, _, err := ReadClaims(`{"claims": [{"claim": "A", "verdict": "supp`, labels, ids); !errors.Is(err, verdict.ErrTruncated) {
		t.Errorf("a cut-off answer: %v, want verdict.ErrTruncated", err)
	}
}

// TestGather: passages from run.context, from a metadata path, else from the results of
// the tool calls that did not fail.
func TestGather(t *testing.T) {
	run := sdk.Run{ToolCalls: []sdk.ToolCall{
		{ID: "a", Name: "search", Result: "Oslo is in Norway."},
		{ID: "a", Name: "search", Result: "Bergen is in Norway."},
		{Name: "fetch", Result: `{"error": "timeout"}`},
		{ID: "c", Name: "noop"},
	}}
	ev, err := Gather(&run, "")
	if err != nil || !ev.FromTools || ev.Source != "tool results" {
		t.Fatalf("%+v %v", ev, err)
	}
	var got []string
	for _, p := range ev.Passages {
		got = append(got, p.ID+"="+p.Text)
	}
	if want := []string{"tool:a=search returned: Oslo is in Norway.", "tool:2=search returned: Bergen is in Norway."}; !slices.Equal(got, want) {
		t.Errorf("passages %q, want %q", got, want)
	}
	run.Context = []sdk.Passage{{ID: "1", Text: "Oslo."}}
	if ev, _ := Gather(&run, ""); ev.FromTools || len(ev.Passages) != 1 {
		t.Errorf("with context: %+v", ev)
	}
	run.Metadata = map[string]any{"r": map[string]any{"chunks": []any{"x", "y"}}}
	if ev, _ := Gather(&run, "r.chunks"); ev.Source != "metadata.r.chunks" || len(ev.Passages) != 2 || ev.Passages[1].ID != "2" {
		t.Errorf("metadata path: %+v", ev)
	}
	if ev, _ := Gather(&run, "r.missing"); !ev.FromTools {
		t.Errorf("a path that holds nothing falls back to the tool results: %+v", ev)
	}
}

func TestListed(t *testing.T) {
	cs := []Claim{{Claim: "a", Verdict: "x", Passages: []string{"1"}}, {Claim: "b", Verdict: "x"}, {Claim: "c", Verdict: "y"},
		{Claim: "d", Verdict: "x", Passages: []string{"1", "3"}}, {Claim: "e", Verdict: "x"}}
	if got, want := Listed(cs, "x"), `x: "a" (passage 1), "b", "d" (passages 1, 3), and 1 more`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := Listed(cs, "z"); got != "" {
		t.Errorf("no claim with the label: %q", got)
	}
}

func TestShare(t *testing.T) {
	good := func(v string) bool { return v == "yes" }
	if s, ok := Share([]string{"yes", "no", "yes", "maybe"}, good); !ok || s != 0.5 {
		t.Errorf("Share = %v, %v; want 0.5, true", s, ok)
	}
	if s, ok := Share(nil, good); ok || s != 0 {
		t.Errorf("Share of no verdicts = %v, %v; want 0, false", s, ok)
	}
}

// TestReady holds Ready and ReadyOutput to their order: an output with no claim first
// (ReadyOutput), then the passages, then the judge.
func TestReady(t *testing.T) {
	withPassages := sdk.Run{Input: "q", Output: "It opened in 1932.", Context: []sdk.Passage{{ID: "1", Text: "It opened in 1932."}}}
	for _, c := range []struct {
		name   string
		call   sdk.Call
		output bool
		status sdk.Status
		reason string
	}{
		{"no passages", sdk.Call{Run: sdk.Run{Input: "q", Output: "x"}}, false, sdk.StatusSkipped, "no run.context"},
		{"no judge", sdk.Call{Run: withPassages}, false, sdk.StatusSkipped, "needs an LLM judge"},
		{"empty output, no judge", sdk.Call{Run: sdk.Run{Input: "q", Context: withPassages.Context}}, true, sdk.StatusSkipped, "the output is empty"},
	} {
		ready := Ready
		if c.output {
			ready = ReadyOutput
		}
		_, res, done := ready(&c.call, "s", "", "s checks")
		if !done || res.Status != c.status || !strings.Contains(res.Reason, c.reason) {
			t.Errorf("%s: done %v, %s %q; want %s with %q", c.name, done, res.Status, res.Reason, c.status, c.reason)
		}
	}
}
