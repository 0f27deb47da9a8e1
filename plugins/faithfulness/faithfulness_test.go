package faithfulness_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/grounding/groundingtest"
	"github.com/scorekit/scorekit/plugins/faithfulness"
	"github.com/scorekit/scorekit/plugins/relevancy"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/scorertest"
)

// TestFormula: each method's score on specified verdicts, the edge cases included.
func TestFormula(t *testing.T) {
	const s, c, u = "supported", "contradicted", "unverifiable"
	for _, tc := range []struct {
		name     string
		verdicts []string
		mastra   float64
		deepeval float64
		ok       bool
	}{
		{"no claims", nil, 0, 0, false},
		{"all supported", []string{s, s, s}, 1, 1, true},
		{"all contradicted", []string{c, c}, 0, 0, true},
		{"all unverifiable", []string{u, u, u}, 0, 1, true},
		{"partial: one of three supported", []string{s, u, u}, 1.0 / 3, 1, true},
		{"partial: half contradicted", []string{s, c, c, s}, 0.5, 0.5, true},
		{"mixed", []string{s, s, s, u, c}, 0.6, 0.8, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for method, want := range map[string]float64{faithfulness.MethodMastra: tc.mastra, faithfulness.MethodRagas: tc.mastra, faithfulness.MethodDeepEval: tc.deepeval} {
				got, ok := faithfulness.Formula(method, tc.verdicts)
				if ok != tc.ok || math.Abs(got-want) > 1e-12 {
					t.Errorf("%s: %v %v, want %v %v", method, got, ok, want, tc.ok)
				}
			}
		})
	}
}

// judge answers every request with reply and counts the requests.
func judge(reply string, calls *atomic.Int32) scorertest.JudgeFunc {
	return func(_ context.Context, req sdk.CompletionRequest) (string, error) {
		calls.Add(1)
		return reply, nil
	}
}

var company = sdk.Run{
	Input:  "What can you tell me about the company?",
	Output: "The company was founded in 1995 by John Smith and has 1000 employees. It may open an office in Oslo.",
	Context: []sdk.Passage{
		{Text: "The company was founded in 1995 by John Smith."},
		{Text: "It has 500 employees and is headquartered in London."},
	},
}

const companyAnswer = `{"claims": [
 {"claim": "The company was founded in 1995", "verdict": "supported", "passages": ["1"], "reason": "Passage 1."},
 {"claim": "The company was founded by John Smith", "verdict": "Supported", "passages": [1], "reason": "Passage 1."},
 {"claim": "The company has 1000 employees", "verdict": "contradicted", "passages": ["2"], "reason": "Passage 2 says 500."},
 {"claim": "The company may open an office in Oslo", "verdict": "unverifiable", "passages": [], "reason": "Not mentioned."}]}`

// TestScore: one judge call; the verdicts, the claim that failed and its passage in the
// steps and the reason; the dimension the host clamps; each method's formula.
func TestScore(t *testing.T) {
	for _, tc := range []struct {
		method string
		score  float64
		reason string
	}{
		{"mastra", 0.5, `2 of 4 claims supported by the passages; contradicted: "The company has 1000 employees" (passage 2); unverifiable: "The company may open an office in Oslo"`},
		{"ragas", 0.5, "2 of 4 claims supported by the passages"},
		{"deepeval", 0.75, "3 of 4 claims not contradicted by the passages (2 supported, 1 unverifiable; deepeval method)"},
	} {
		t.Run(tc.method, func(t *testing.T) {
			var calls atomic.Int32
			var req sdk.CompletionRequest
			j := scorertest.JudgeFunc(func(_ context.Context, r sdk.CompletionRequest) (string, error) {
				calls.Add(1)
				req = r
				return companyAnswer, nil
			})
			s := scorertest.New(t, faithfulness.New, scorertest.WithJudge(j), scorertest.WithConfig(`{"method": "`+tc.method+`"}`))
			res := s.Score(company)
			if res.Status != sdk.StatusScored || *res.Score != tc.score || res.Dimensions["faithfulness"] != tc.score {
				t.Fatalf("%s %v %v (%s), want %v", res.Status, res.Value(), res.Dimensions, res.Reason, tc.score)
			}
			if calls.Load() != 1 {
				t.Errorf("%d judge calls, want 1", calls.Load())
			}
			if !strings.HasPrefix(res.Reason, tc.reason) {
				t.Errorf("reason %q, want it to start %q", res.Reason, tc.reason)
			}
			if len(req.Schema) == 0 || !json.Valid(req.Schema) || !strings.Contains(string(req.Schema), `"unverifiable"`) {
				t.Errorf("request schema %s, want the claims schema for structured output", req.Schema)
			}
			user := req.Messages[len(req.Messages)-1].Content
			if !strings.HasPrefix(user, "Break the agent's OUTPUT into claims") || !strings.Contains(user, "<passage id=\"2\">\nIt has 500 employees") {
				t.Errorf("prompt: instructions first, then the numbered passages; got %q", user)
			}
			var judged struct {
				Parsed struct {
					Claims []struct {
						Claim, Verdict string
						Passages       []string
					}
				}
			}
			if len(res.Steps) != 2 || res.Steps[0].Name != "judge" || res.Steps[1].Name != "score" {
				t.Fatalf("steps %+v, want judge and score", res.Steps)
			}
			if err := json.Unmarshal(res.Steps[0].Output, &judged); err != nil {
				t.Fatal(err)
			}
			cl := judged.Parsed.Claims
			if len(cl) != 4 || cl[2].Verdict != "contradicted" || cl[2].Passages[0] != "2" || cl[1].Verdict != "supported" || cl[1].Passages[0] != "1" {
				t.Errorf("judge step claims %+v, want each claim with its verdict and passages", cl)
			}
		})
	}
}

// TestEdges: what is not a grounding fact is skipped with the reason (most without a judge
// call), the run's tool results stand in for missing passages, and an answer the scorer
// cannot read is failed with it, never 0.
func TestEdges(t *testing.T) {
	noContext := company
	noContext.Context = nil
	tools := sdk.Run{Input: "Where is parcel 1234?", Output: "Parcel 1234 is in Oslo.",
		ToolCalls: []sdk.ToolCall{
			{ID: "c1", Name: "track", Arguments: `{"id":1234}`, Result: `{"location":"Oslo"}`},
			{ID: "c2", Name: "eta", Result: `{"error":"timeout"}`},
		}}
	toolOnly := sdk.Run{Input: "Cancel my 3pm meeting", ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "cancel_event", Result: `{"cancelled":true}`}}}
	empty := company
	empty.Output = ""
	errText := company
	errText.Output = "Error: 503 Service Unavailable"
	for _, tc := range []struct {
		name   string
		run    sdk.Run
		reply  string
		calls  int32
		status sdk.Status
		flags  []string
		says   string
	}{
		{"no passages", noContext, companyAnswer, 0, sdk.StatusSkipped, nil, "record the retrieved passages in run.context"},
		{"tool results stand in", tools, `{"claims": [{"claim": "Parcel 1234 is in Oslo", "verdict": "supported", "passages": ["tool:c1"], "reason": "The tracker says Oslo."}]}`,
			1, sdk.StatusScored, []string{"context_from_tools"}, "its tool results were the evidence"},
		{"a tool-only turn", toolOnly, companyAnswer, 0, sdk.StatusSkipped, nil, "only output is its tool calls"},
		{"empty output", empty, companyAnswer, 0, sdk.StatusSkipped, []string{"no_claims", "empty_output"}, "the output is empty"},
		{"an error in place of an answer", errText, companyAnswer, 0, sdk.StatusSkipped, []string{"error_text"}, "states nothing about the passages"},
		{"no claims", company, `{"claims": []}`, 1, sdk.StatusSkipped, []string{"no_claims"}, "found no claim"},
		{"unknown passage", company, `{"claims": [{"claim": "Founded in 1995", "verdict": "supported", "passages": ["1", "7"], "reason": "r"}]}`,
			1, sdk.StatusScored, []string{"unknown_passage"}, "does not have (7), dropped"},
		{"another verdict", company, `{"claims": [{"claim": "Founded in 1995", "verdict": "mostly", "passages": [], "reason": "r"}]}`,
			1, sdk.StatusFailed, nil, `verdict "mostly" is not one of supported, contradicted, unverifiable`},
		{"no claims array", company, `{"verdicts": []}`, 1, sdk.StatusFailed, nil, `no "claims" array`},
		{"prose", company, `All claims look fine to me.`, 1, sdk.StatusFailed, nil, "no JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			s := scorertest.New(t, faithfulness.New, scorertest.WithJudge(judge(tc.reply, &calls)))
			res := s.Score(tc.run)
			if res.Status != tc.status || calls.Load() != tc.calls {
				t.Fatalf("%s after %d calls (%s), want %s after %d", res.Status, calls.Load(), res.Reason, tc.status, tc.calls)
			}
			if res.Status == sdk.StatusFailed && res.Error.Code != sdk.CodeJudgeError {
				t.Errorf("code %s, want judge_error", res.Error.Code)
			}
			if !strings.Contains(res.Reason, tc.says) {
				t.Errorf("reason %q, want it to say %q", res.Reason, tc.says)
			}
			if strings.Join(res.Flags, ",") != strings.Join(tc.flags, ",") {
				t.Errorf("flags %v, want %v", res.Flags, tc.flags)
			}
		})
	}
	// Without a judge the scorer says how to configure one.
	s := scorertest.New(t, faithfulness.New)
	if res := s.Score(company); res.Status != sdk.StatusSkipped || !strings.Contains(res.Reason, "--judge-url") {
		t.Errorf("no judge: %s %q", res.Status, res.Reason)
	}
	// A config naming another method is refused at open.
	if _, err := scorertest.Open(faithfulness.New, scorertest.WithConfig(`{"method": "trulens"}`)); err == nil {
		t.Error("method trulens was accepted")
	}
}

// TestMastraParity feeds the verdicts Mastra's judge recorded on Mastra's own cases
// (testdata/mastra-grounding/faithfulness.json) to the scorer: rounded as Mastra rounds,
// its score is Mastra's recorded score on every case it scores and within the test's
// tolerance of the asserted one; the cases where scorekit differs by design (an empty
// output, an empty context) are skipped, as docs/SCORERS.md lists.
func TestMastraParity(t *testing.T) {
	dir, err := corpus.Dir()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := corpus.LoadMastraGrounding(dir, "faithfulness")
	if err != nil {
		t.Fatal(err)
	}
	differs := map[string]string{"faithfulness-04": "no_claims", "faithfulness-05": ""}
	compared := 0
	for _, c := range cases {
		t.Run(c.ID, func(t *testing.T) {
			rec, err := c.Claims()
			if err != nil || rec == nil || rec.Score == nil {
				t.Fatalf("case without a recorded score (%v)", err)
			}
			verdicts := make([]string, len(rec.Verdicts))
			for i, v := range rec.Verdicts {
				verdicts[i] = map[string]string{"yes": "supported", "no": "contradicted", "unsure": "unverifiable"}[v.Verdict]
			}
			answer, _, err := groundingtest.Answer("faithfulness", c)
			if err != nil {
				t.Fatal(err)
			}
			var calls atomic.Int32
			res := scorertest.New(t, faithfulness.New, scorertest.WithJudge(judge(answer, &calls))).Score(*c.Run)
			if flag, ok := differs[c.ID]; ok {
				if res.Status != sdk.StatusSkipped || calls.Load() != 0 || (flag != "" && !res.HasFlag(flag)) {
					t.Errorf("%s (%v) after %d calls, want skipped without a call (Mastra scores %v)", res.Status, res.Flags, calls.Load(), *rec.Score)
				}
				return
			}
			formula, _ := faithfulness.Formula(faithfulness.MethodMastra, verdicts)
			if got := relevancy.RoundMastra(formula); got != *rec.Score {
				t.Errorf("formula %v rounds to %v, Mastra recorded %v", formula, got, *rec.Score)
			}
			if res.Status != sdk.StatusScored || *res.Score != *rec.Score {
				t.Errorf("scorer %s %v (%s), Mastra recorded %v", res.Status, res.Value(), res.Reason, *rec.Score)
			}
			if e := c.Mastra.Expected; math.Abs(res.Value()-*e.Score) > e.AbsTolerance+1e-9 {
				t.Errorf("scorer %v, Mastra's test asserts %s", res.Value(), e.Assert)
			}
			compared++
		})
	}
	if compared != 10 {
		t.Errorf("%d cases compared, want the 10 Mastra scores and scorekit scores", compared)
	}
}
