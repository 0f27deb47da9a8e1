package builtin_test

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/grounding/groundingtest"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/sdk"
)

// ratedVariants are context_relevance, answer_similarity and noise_robustness in each of
// their methods. answer_similarity's embeddings method asks the test judge's /embeddings.
var ratedVariants = []scorerVariant{
	{"context_relevance", ""},
	{"context_relevance", `{"method": "deepeval"}`},
	{"answer_similarity", ""},
	{"answer_similarity", `{"method": "embeddings"}`},
	{"noise_robustness", ""},
	{"noise_robustness", `{"method": "ragas"}`},
}

var dublin = []sdk.Passage{{ID: "1", Text: "The Spire of Dublin is 120 metres tall."}, {ID: "2", Text: "Dublin is the capital of Ireland."}}

// ratedRuns are runs beyond Mastra's cases: a tool-only turn (context_relevance's answer
// leaves a passage unrated), a run every method scores, a run whose answer no scorer can
// read (Big Ben).
var ratedRuns = []sdk.Run{
	{ID: "r1", Input: "Post the Spire's height to the channel.", Context: dublin,
		ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "post", Arguments: `{"text":"120 m"}`, Result: `{"ok":true}`}},
		Metadata:  map[string]any{"noise": map[string]any{"baseline_output": "Posted: the Spire is 120 metres tall."}}},
	{ID: "r2", Input: "How tall is the Spire of Dublin?", Output: "It is 120 metres tall, in Dublin.", Expected: "The Spire is 120 metres tall.", Context: dublin,
		Metadata: map[string]any{"noise.baseline_output": "It is 120 metres tall.", "noise.type": "distractors"}},
	{ID: "r3", Input: "How tall is Big Ben?", Output: "About 96 metres.", Expected: "96 metres.", Context: dublin,
		Metadata: map[string]any{"noise": map[string]any{"baseline_output": "96 metres."}}},
}

var ratedReplies = []judgetest.Rule{
	// context_relevance, mastra and deepeval: r1's passage 2 is left unrated.
	{Match: "<input>\nPost the Spire's height", Reply: `{"passages": [{"id": "1", "relevance": "high", "used": true, "reason": "r"}], "missing": []}`},
	{Match: "Big Ben", Reply: `I cannot tell.`},
	{Match: "Rate every retrieved PASSAGE", Reply: `{"passages": [{"id": "1", "relevance": "high", "used": true, "reason": "r"}, {"id": "2", "relevance": "low", "used": false, "reason": "r"}], "missing": ["the year it was built"]}`},
	{Match: "Split every retrieved PASSAGE", Reply: `{"passages": [{"id": "1", "statements": [{"statement": "The Spire is 120 m tall", "relevant": true}]}, {"id": "2", "statements": [{"statement": "Dublin is the capital", "relevant": false}]}]}`},
	// noise_robustness, ragas then mastra.
	{Match: "Check an AI agent's OUTPUT", Reply: `{"output_statements": [{"statement": "It is 120 metres tall", "passages": ["1"], "in_reference": true}, {"statement": "It is in Dublin", "passages": ["2"], "in_reference": false}], "reference_statements": [{"statement": "The Spire is 120 metres tall", "passages": ["1", "2"]}]}`},
	// answer_similarity.
	{Match: "<reference>\nThe Spire is 120 metres tall.", Reply: `{"expected_units": [{"unit": "The Spire is 120 metres tall", "match": "exact", "output_unit": "It is 120 metres tall", "note": "n"}], "contradictions": [], "extra_output_units": ["in Dublin"]}`},
	{Match: "<noisy_input>\nPost the Spire's height", Reply: `{"content_accuracy": {"impact": "none", "change": "c"}, "completeness": {"impact": "none", "change": "c"}, "relevance": {"impact": "none", "change": "c"}, "consistency": {"impact": "none", "change": "c"}, "hallucination_resistance": {"impact": "none", "change": "c"}, "major_issues": [], "robustness": 1}`},
	{Match: "<noisy_input>\nHow tall is the Spire", Reply: `{"content_accuracy": {"impact": "none", "change": "c"}, "completeness": {"impact": "minimal", "change": "c"}, "relevance": {"impact": "minimal", "change": "c"}, "consistency": {"impact": "none", "change": "c"}, "hallucination_resistance": {"impact": "none", "change": "c"}, "major_issues": ["mentions the city"], "robustness": 0.9}`},
}

// TestRatedInEveryRuntime runs context_relevance, answer_similarity and noise_robustness, in
// every method, on Mastra's cases for them (testdata/mastra-grounding; the judge answers
// with what groundingtest builds from Mastra's recordings) and on the runs above,
// natively, as WASM and as a process plugin (the artifacts make test builds), through the
// host and the judge broker with an embeddings model: the same requests (completions and
// embeddings) reach the judge and the same results come back, steps included. Natively it
// checks that Mastra's recorded verdicts give Mastra's scores and that the edges get their
// statuses.
func TestRatedInEveryRuntime(t *testing.T) {
	dir, err := corpus.Dir()
	if err != nil {
		t.Fatal(err)
	}
	var rules []judgetest.Rule
	runs := map[string][]sdk.Run{} // scorer -> runs
	want := map[string]func(outcome) bool{}
	scoredAt := func(v float64) func(outcome) bool {
		return func(o outcome) bool { return o.Score != nil && math.Abs(*o.Score-v) < 1e-9 }
	}
	status := func(st sdk.Status) func(outcome) bool { return func(o outcome) bool { return o.Status == st } }
	for _, name := range []string{"context_relevance", "answer_similarity", "noise_robustness"} {
		rs, answered, err := groundingtest.Rules(dir, name)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, rs...)
		for _, c := range answered {
			runs[name] = append(runs[name], *c.Run)
			var rec struct {
				Score *float64 `json:"score"`
			}
			_ = json.Unmarshal(c.Recorded, &rec)
			switch {
			case rec.Score != nil:
				// Mastra's score from its recorded verdicts.
				want[name+" "+c.ID] = scoredAt(*rec.Score)
			case c.Mastra.Expected.Kind == "mocked_run":
				// The noise answers are built from the mocked score.
				want[name+" "+c.ID] = scoredAt(*c.Mastra.Expected.Score)
			default:
				// generateScore on the given verdicts, without Mastra's scale 0.
				want[name+" "+c.ID] = scoredAt(1)
			}
		}
		cases, err := corpus.LoadMastraGrounding(dir, groundingtest.Files[name])
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			if c.Run == nil {
				continue
			}
			switch c.Edge {
			case "empty_context", "no_expected", "blank_expected":
				runs[name] = append(runs[name], *c.Run)
				want[name+" "+c.ID] = status(sdk.StatusSkipped)
			case "empty_output":
				runs[name] = append(runs[name], *c.Run)
				want[name+" "+c.ID] = func(o outcome) bool {
					return o.Score != nil && *o.Score == 0 && reflect.DeepEqual(o.Flags, []string{"empty_output"})
				}
			}
		}
		runs[name] = append(runs[name], ratedRuns...)
	}
	// Mastra's cases first, then the runs above: the first rule that matches answers.
	rules = append(rules, ratedReplies...)
	for k, ok := range map[string]func(outcome) bool{
		"context_relevance r1": func(o outcome) bool { return o.Status == sdk.StatusFailed && o.Code == sdk.CodeJudgeError },
		// (1 + 0.3) / 2 - 0.15 for the missing year.
		"context_relevance r2":                             scoredAt(0.5),
		"context_relevance{\"method\": \"deepeval\"} r2":   scoredAt(0.5),
		"answer_similarity r1":                             status(sdk.StatusSkipped),
		"answer_similarity r2":                             scoredAt(0.95),
		"answer_similarity r3":                             func(o outcome) bool { return o.Status == sdk.StatusFailed && o.Code == sdk.CodeJudgeError },
		"answer_similarity{\"method\": \"embeddings\"} r3": func(o outcome) bool { return o.Score != nil && *o.Score > 0 },
		"noise_robustness r1":                              scoredAt(1),
		"noise_robustness r2":                              func(o outcome) bool { return o.Score != nil && *o.Score == 0.8 && o.Dimensions["completeness"] == 0.85 },
		"noise_robustness r3":                              func(o outcome) bool { return o.Status == sdk.StatusFailed && o.Code == sdk.CodeJudgeError },
		"noise_robustness{\"method\": \"ragas\"} r1":       status(sdk.StatusSkipped),
		"noise_robustness{\"method\": \"ragas\"} r2": func(o outcome) bool {
			return o.Score != nil && *o.Score == 0.5 && o.Dimensions["noise_sensitivity"] == 0.5
		},
	} {
		want[k] = ok
	}

	judgedInEveryRuntime(t, ratedVariants, runs, rules, want)
}
