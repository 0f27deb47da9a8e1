package builtin_test

import (
	"reflect"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/grounding/groundingtest"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/plugins/builtin"
	"github.com/scorekit/scorekit/sdk"
)

// groundingRuns are runs of the claim-based grounding scorers beyond Mastra's cases: the
// tool results standing in for passages, a tool-only turn, an output citing a passage the
// run does not have (the host's clamp), an answer the scorers cannot read.
var groundingRuns = map[string]sdk.Run{
	"tool results as passages": {ID: "g1", Input: "Where is parcel 1234?", Output: "Parcel 1234 is in Oslo.", Expected: "The parcel is in Oslo.",
		ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "track", Arguments: `{"id":1234}`, Result: `{"location":"Oslo"}`}}},
	"a tool-only turn": {ID: "g2", Input: "Cancel my 3pm meeting",
		ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "cancel_event", Result: `{"cancelled":true}`}}},
	"an invalid citation": {ID: "g3", Input: "What is the capital of France?", Output: "Paris is the capital of France [1]. It has 90 million people [7].",
		Expected: "Paris is the capital of France.", Context: []sdk.Passage{{Text: "Paris is the capital of France."}}},
	"an unreadable answer": {ID: "g4", Input: "What is the capital of Spain?", Output: "Madrid.", Expected: "Madrid.",
		Context: []sdk.Passage{{Text: "Madrid is the capital of Spain."}}},
}

// forScorer is the end of an output-checking scorer's prompt after output's last words:
// the answer format, whose first verdict tells the scorers apart.
func forScorer(last, firstVerdict string) string {
	return last + "\n</output>\n\nReply with JSON only, in this shape:\n{\"claims\": [{\"claim\": \"<one claim of the output>\", \"verdict\": \"" + firstVerdict
}

var groundingReplies = []judgetest.Rule{
	{Match: forScorer("Parcel 1234 is in Oslo.", "supported"), Reply: `{"claims": [{"claim": "Parcel 1234 is in Oslo", "verdict": "supported", "passages": ["tool:c1"], "reason": "r"}]}`},
	{Match: forScorer("Parcel 1234 is in Oslo.", "grounded"), Reply: `{"claims": [{"claim": "Parcel 1234 is in Oslo", "verdict": "grounded", "passages": ["tool:c1"], "reason": "r"}]}`},
	{Match: "<reference>\nThe parcel is in Oslo.", Reply: `{"claims": [{"claim": "The parcel is in Oslo", "verdict": "attributed", "passages": ["tool:c1"], "reason": "r"}]}`},
	{Match: forScorer("[7].", "supported"), Reply: `{"claims": [{"claim": "Paris is the capital of France", "verdict": "supported", "passages": ["1"], "reason": "r"}, ` +
		`{"claim": "Paris has 90 million people", "verdict": "supported", "passages": ["7"], "reason": "r"}]}`},
	{Match: forScorer("[7].", "grounded"), Reply: `{"claims": [{"claim": "Paris is the capital of France", "verdict": "grounded", "passages": ["1"], "reason": "r"}, ` +
		`{"claim": "Paris has 90 million people", "verdict": "grounded", "passages": ["7"], "reason": "r"}]}`},
	{Match: "<reference>\nParis is the capital of France.", Reply: `{"claims": [{"claim": "Paris is the capital of France", "verdict": "attributed", "passages": ["1"], "reason": "r"}]}`},
	{Match: "Madrid", Reply: `The claims look right to me.`},
}

// TestGroundingInEveryRuntime runs faithfulness, hallucination_free and context_recall on
// Mastra's own cases (testdata/mastra-grounding, the judge answering with Mastra's recorded
// verdicts) and on the runs above, natively, as WASM and as a process plugin (the
// artifacts make test builds), through the host and the judge broker: the same requests
// reach the judge and the same results come back, steps (the prompts and the per-claim
// verdicts) included. Natively it checks that the cases score and skip as they should.
func TestGroundingInEveryRuntime(t *testing.T) {
	dir, err := corpus.Dir()
	if err != nil {
		t.Fatal(err)
	}
	rules := append([]judgetest.Rule{}, groundingReplies...)
	runs := map[string][]sdk.Run{} // scorer -> runs
	scorers := []string{"faithfulness", "hallucination_free", "context_recall"}
	for _, name := range scorers {
		rs, _, err := groundingtest.Rules(dir, name)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, rs...)
		cases, err := corpus.LoadMastraGrounding(dir, groundingtest.Files[name])
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			if c.Run != nil {
				runs[name] = append(runs[name], *c.Run)
			}
		}
		for _, r := range groundingRuns {
			runs[name] = append(runs[name], r)
		}
	}
	scoredAt := func(v float64) func(outcome) bool {
		return func(o outcome) bool { return o.Status == sdk.StatusScored && *o.Score == v }
	}
	status := func(st sdk.Status) func(outcome) bool { return func(o outcome) bool { return o.Status == st } }
	checks := map[string]func(outcome) bool{
		// Mastra's recorded verdicts give Mastra's recorded scores (hallucination_free is
		// 1 - Mastra's), and the deliberate differences are statuses.
		"faithfulness faithfulness-02":        scoredAt(0.5),
		"faithfulness faithfulness-03":        scoredAt(0.33),
		"faithfulness faithfulness-08":        scoredAt(0.75),
		"faithfulness faithfulness-04":        status(sdk.StatusSkipped),
		"faithfulness faithfulness-05":        status(sdk.StatusSkipped),
		"hallucination_free hallucination-03": func(o outcome) bool { return *o.Score == 0.67 && o.Dimensions["hallucinated_share"] == 0.33 },
		"hallucination_free hallucination-10": scoredAt(0.33),
		"hallucination_free hallucination-18": func(o outcome) bool { return *o.Score == 0 && o.Dimensions["hallucinated_share"] == 1 },
		"hallucination_free hallucination-04": status(sdk.StatusSkipped),
		"hallucination_free hallucination-06": status(sdk.StatusSkipped),
		"context_recall context_recall-04":    scoredAt(0.67),
		"context_recall context_recall-06":    scoredAt(1),
		"context_recall context_recall-07":    status(sdk.StatusSkipped),
		"context_recall context_recall-08":    status(sdk.StatusSkipped),
		// Tool results stand in for passages.
		"faithfulness g1": func(o outcome) bool {
			return *o.Score == 1 && reflect.DeepEqual(o.Flags, []string{"context_from_tools"})
		},
		"hallucination_free g1": func(o outcome) bool {
			return *o.Score == 1 && reflect.DeepEqual(o.Flags, []string{"context_from_tools"})
		},
		"context_recall g1": func(o outcome) bool {
			return *o.Score == 1 && reflect.DeepEqual(o.Flags, []string{"context_from_tools"})
		},
		// A tool-only turn has no text to check; context recall does not read the output
		// and has no reference answer here.
		"faithfulness g2":       status(sdk.StatusSkipped),
		"hallucination_free g2": status(sdk.StatusSkipped),
		"context_recall g2":     status(sdk.StatusSkipped),
		// The host clamps both grounding dimensions on a citation of a passage the run does
		// not have; the hallucinated share stays as the verdicts give it.
		"faithfulness g3":       func(o outcome) bool { return *o.Score == 0.4 && o.Dimensions["faithfulness"] == 0.4 },
		"hallucination_free g3": func(o outcome) bool { return *o.Score == 0.4 && o.Dimensions["hallucinated_share"] == 0 },
		"context_recall g3":     scoredAt(1),
		// An answer the scorers cannot read is failed, never 0.
		"faithfulness g4":       func(o outcome) bool { return o.Status == sdk.StatusFailed && o.Code == sdk.CodeJudgeError },
		"hallucination_free g4": func(o outcome) bool { return o.Status == sdk.StatusFailed && o.Code == sdk.CodeJudgeError },
		"context_recall g4":     func(o outcome) bool { return o.Status == sdk.StatusFailed && o.Code == sdk.CodeJudgeError },
	}
	var variants []scorerVariant
	for _, name := range scorers {
		variants = append(variants, scorerVariant{scorer: name})
	}
	judgedInEveryRuntime(t, variants, runs, rules, checks)
}

// nativeBuiltin is the built-in scorer called name, as a native plugin.
func nativeBuiltin(name string) (host.Plugin, bool) {
	for _, f := range builtin.Factories() {
		if p := host.Native(f); p.Info().Name == name {
			return p, true
		}
	}
	return nil, false
}
