package contextrelevance

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/plugins/relevancy"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/scorertest"
)

// mastraSet is testdata/mastra-grounding/context_relevance.json: Mastra's own test cases
// for its context relevance scorer, with the judge's answers Mastra recorded.
const mastraSet = "../../testdata/mastra-grounding/context_relevance.json"

type evaluation struct {
	ContextIndex   int    `json:"context_index"`
	RelevanceLevel string `json:"relevanceLevel"`
	WasUsed        bool   `json:"wasUsed"`
	Reasoning      string `json:"reasoning"`
}

type analysis struct {
	Evaluations    []evaluation `json:"evaluations"`
	MissingContext []string     `json:"missingContext"`
}

type mastraCase struct {
	ID   string `json:"id"`
	Edge string `json:"edge"`
	Run  *struct {
		Input   string   `json:"input"`
		Output  string   `json:"output"`
		Context []string `json:"context"`
	} `json:"run"`
	Mastra struct {
		Options  map[string]any `json:"options"`
		Expected struct {
			Kind  string   `json:"kind"`
			Score *float64 `json:"score"`
		} `json:"expected"`
	} `json:"mastra"`
	Given *struct {
		Analyze analysis `json:"analyzeStepResult"`
	} `json:"given"`
	Recorded *struct {
		Analysis analysis `json:"analysis"`
		Score    float64  `json:"score"`
	} `json:"recorded"`
}

func loadMastra(t *testing.T) []mastraCase {
	t.Helper()
	b, err := os.ReadFile(mastraSet)
	if err != nil {
		t.Fatalf("%v: the labelled set is committed under testdata/mastra-grounding", err)
	}
	var f struct {
		Cases []mastraCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

func (c mastraCase) run() sdk.Run {
	r := sdk.Run{ID: c.ID, Input: c.Run.Input, Output: c.Run.Output}
	for _, p := range c.Run.Context {
		r.Context = append(r.Context, sdk.Passage{Text: p})
	}
	r.NumberContext()
	return r
}

// translate turns Mastra's analysis into this scorer's answer: evaluations by passage
// index become ratings by id (index + 1, as the host numbers passages).
func translate(a analysis) string {
	type p struct {
		ID        string `json:"id"`
		Relevance string `json:"relevance"`
		Used      bool   `json:"used"`
		Reason    string `json:"reason"`
	}
	out := struct {
		Passages []p      `json:"passages"`
		Missing  []string `json:"missing"`
	}{Missing: append([]string{}, a.MissingContext...)}
	for _, e := range a.Evaluations {
		out.Passages = append(out.Passages, p{fmt.Sprint(e.ContextIndex + 1), e.RelevanceLevel, e.WasUsed, e.Reasoning})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// TestMastraCases holds the scorer to every case of Mastra's context relevance tests:
//   - the two runs Mastra recorded (03, 04): the recorded verdicts, answered in this
//     scorer's one call, give the score Mastra computed from them, to two decimals, in one
//     call where Mastra made two;
//   - the generateScore check on given verdicts (07, scale 0): the formula times the scale;
//   - the deliberate differences: no passages is skipped, where Mastra's constructor throws
//     (01, 02) or it scores 1.0 times its scale (05, 06, 08);
//   - the mocked run (09), whose score Mastra's test fixed by hand, as an input only: the
//     passages an extractor gives (context_path here) win over static ones.
func TestMastraCases(t *testing.T) {
	cases := loadMastra(t)
	if len(cases) != 9 {
		t.Fatalf("%d cases, want Mastra's 9", len(cases))
	}
	seen := map[string]bool{}
	for _, c := range cases {
		t.Run(c.ID, func(t *testing.T) {
			seen[c.ID] = true
			switch {
			case c.Recorded != nil:
				calls := 0
				j := scorertest.JudgeFunc(func(context.Context, sdk.CompletionRequest) (string, error) {
					calls++
					return translate(c.Recorded.Analysis), nil
				})
				res := scorertest.New(t, New, scorertest.WithJudge(j)).Score(c.run())
				if res.Status != sdk.StatusScored || math.Abs(*res.Score-c.Recorded.Score) > 0.005 {
					t.Fatalf("%s %v (%v), Mastra computed %v", res.Status, res.Value(), res.Error, c.Recorded.Score)
				}
				if calls != 1 {
					t.Fatalf("%d judge calls, want 1 (Mastra made 2)", calls)
				}
			case c.Mastra.Expected.Kind == "step_function" && len(c.Run.Context) > 0:
				rs := make([]rating, len(c.Given.Analyze.Evaluations))
				for i, e := range c.Given.Analyze.Evaluations {
					rs[i] = rating{Relevance: e.RelevanceLevel, Used: e.WasUsed}
				}
				scale := c.Mastra.Options["scale"].(float64)
				b := mastraScore(rs, len(c.Given.Analyze.MissingContext), mastraPenalties, true)
				if got := relevancy.RoundMastra(b.Score * scale); got != *c.Mastra.Expected.Score {
					t.Fatalf("generateScore %v x scale %v = %v, Mastra %v", b.Score, scale, got, *c.Mastra.Expected.Score)
				}
			case c.Edge == "empty_context" || c.Edge == "no_context_option":
				run := sdk.Run{Input: "Test question", Output: "Test response"}
				if c.Run != nil {
					run = c.run()
				}
				calls := 0
				j := scorertest.JudgeFunc(func(context.Context, sdk.CompletionRequest) (string, error) { calls++; return "", nil })
				res := scorertest.New(t, New, scorertest.WithJudge(j)).Score(run)
				if res.Status != sdk.StatusSkipped || calls != 0 {
					t.Fatalf("%s after %d calls, want skipped without a call (Mastra: %s %v)", res.Status, calls, c.Mastra.Expected.Kind, c.Mastra.Expected.Score)
				}
			case c.Mastra.Expected.Kind == "mocked_run":
				run := c.run()
				run.Metadata = map[string]any{"extracted": c.Run.Context}
				run.Context = []sdk.Passage{{ID: "1", Text: c.Mastra.Options["context"].([]any)[0].(string)}}
				var prompt string
				j := scorertest.JudgeFunc(func(_ context.Context, req sdk.CompletionRequest) (string, error) {
					prompt = req.Messages[1].Content
					return translate(analysis{Evaluations: []evaluation{{RelevanceLevel: "high", WasUsed: true}}}), nil
				})
				res := scorertest.New(t, New, scorertest.WithJudge(j), scorertest.WithConfig(`{"context_path": "extracted"}`)).Score(run)
				if res.Status != sdk.StatusScored || !strings.Contains(prompt, c.Run.Context[0]) || strings.Contains(prompt, "static context") {
					t.Fatalf("%s; prompt:\n%s", res.Status, prompt)
				}
			default:
				t.Fatalf("case %s (%s) has no check", c.ID, c.Mastra.Expected.Kind)
			}
		})
	}
	if len(seen) != len(cases) {
		t.Fatalf("checked %d of %d cases", len(seen), len(cases))
	}
}
