package masis_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/plugins/masis"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/verdict"
)

// eiffel is the evidence most cases cite.
var eiffel = []sdk.Passage{
	{Text: "The Eiffel Tower stands 330 metres tall in Paris."},
	{Text: "The Eiffel Tower was completed in 1889 for the World Fair."},
}

const question = "How tall is the Eiffel Tower and when was it completed?"

// open serves the judge test server's answers to masis through the broker and the host.
func open(t *testing.T, rules ...judgetest.Rule) (*host.Scorer, *judgetest.Server) {
	t.Helper()
	srv := judgetest.New(rules...)
	t.Cleanup(srv.Close)
	b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge-test", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return openWith(t, b), srv
}

func openWith(t *testing.T, j sdk.Judge) *host.Scorer {
	t.Helper()
	reg := host.NewRegistry()
	if err := reg.Register(host.Native(masis.New), false); err != nil {
		t.Fatal(err)
	}
	var opts []host.Option
	if j != nil {
		opts = append(opts, host.WithJudge(j))
	}
	s, err := host.New(reg, opts...).Open(context.Background(), masis.Name, host.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func rules(res sdk.Result) []string {
	var out []string
	for _, a := range res.Adjustments {
		out = append(out, a.Rule+":"+a.Target)
	}
	return out
}

// TestHostHasTheLastWord runs the judge's numbers through the host: normalization before
// clamps, the citation clamps, and the overall recomputed from the weights (hand-computed).
func TestHostHasTheLastWord(t *testing.T) {
	twelve := strings.Repeat("The Eiffel Tower is a tall iron lattice tower in Paris. ", 12)
	cases := []struct {
		name      string
		output    string
		context   []sdk.Passage
		reply     string
		wantDims  map[string]float64
		wantScore float64
		wantRules []string
		wantFlags []string
	}{
		{
			name:    "invalid citation clamps faithfulness 0.9 to 0.4",
			output:  "The Eiffel Tower is 330 metres tall [1] and was completed in 1889 [3].",
			context: eiffel,
			reply:   `{"faithfulness": 0.9, "relevance": 0.8, "completeness": 0.7, "reasoning_quality": 0.6, "overall_score": 0.8, "improvement_suggestions": ["cite [2] for the date"]}`,
			// 0.35*0.4 + 0.25*0.8 + 0.25*0.7 + 0.15*0.6 = 0.14 + 0.2 + 0.175 + 0.09
			wantDims:  map[string]float64{"faithfulness": 0.4, "relevance": 0.8, "completeness": 0.7, "reasoning_quality": 0.6},
			wantScore: 0.605,
			wantRules: []string{"clamp_hallucination:faithfulness", "clamp_invalid_citations:faithfulness", "overall_weighted:score"},
			wantFlags: []string{"invalid_citations", "hallucination_detected"},
		},
		{
			name:      "a 0-100 answer is normalized before the clamp",
			output:    "The Eiffel Tower is 330 metres tall [1] and was completed in 1889 [3].",
			context:   eiffel,
			reply:     `{"faithfulness": 90, "relevance": 80, "completeness": 70, "reasoning_quality": 60, "overall_score": 80, "improvement_suggestions": []}`,
			wantDims:  map[string]float64{"faithfulness": 0.4, "relevance": 0.8, "completeness": 0.7, "reasoning_quality": 0.6},
			wantScore: 0.605,
			// The evaluator reads the 0-100 answer (and flags it); the host clamps what it read.
			wantRules: []string{"clamp_hallucination:faithfulness", "clamp_invalid_citations:faithfulness", "overall_weighted:score"},
			wantFlags: []string{verdict.FlagPercentageScale},
		},
		{
			name:      "a 0-100 answer with a 1 in it reads the 1 as 1 percent",
			output:    "The Eiffel Tower is 330 metres tall [1] and was completed in 1889 [2].",
			context:   eiffel,
			reply:     `{"faithfulness": 90, "relevance": 1, "completeness": 70, "reasoning_quality": 60}`,
			wantDims:  map[string]float64{"faithfulness": 0.9, "relevance": 0.01, "completeness": 0.7, "reasoning_quality": 0.6},
			wantScore: 0.35*0.9 + 0.25*0.01 + 0.25*0.7 + 0.15*0.6, // 0.5825 -> 0.583
			wantFlags: []string{verdict.FlagPercentageScale},
		},
		{
			name:      "twelve uncited sentences cap faithfulness at 0.3",
			output:    twelve,
			context:   eiffel,
			reply:     `{"faithfulness": 0.95, "relevance": 0.9, "completeness": 0.5, "reasoning_quality": 0.8, "overall_score": 0.82}`,
			wantDims:  map[string]float64{"faithfulness": 0.3, "relevance": 0.9, "completeness": 0.5, "reasoning_quality": 0.8},
			wantScore: 0.35*0.3 + 0.25*0.9 + 0.25*0.5 + 0.15*0.8, // 0.575
			wantRules: []string{"clamp_uncited_5:faithfulness", "clamp_uncited_10:faithfulness", "overall_weighted:score"},
		},
		{
			name:      "a clean cited answer keeps the judge's numbers",
			output:    "The Eiffel Tower is 330 metres tall [1] and was completed in 1889 [2].",
			context:   eiffel,
			reply:     "Here is my verdict:\n```json\n{\"faithfulness\": 1, \"relevance\": 1, \"completeness\": 0.9, \"reasoning_quality\": 0.8, \"overall_score\": 0.945,}\n```",
			wantDims:  map[string]float64{"faithfulness": 1, "relevance": 1, "completeness": 0.9, "reasoning_quality": 0.8},
			wantScore: 0.945,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := open(t, judgetest.Rule{Reply: c.reply})
			res := s.Score(context.Background(), sdk.Run{Input: question, Output: c.output, Context: c.context})
			if res.Status != sdk.StatusScored {
				t.Fatalf("status %s: %s", res.Status, res.Reason)
			}
			for k, v := range c.wantDims {
				if !near(res.Dimensions[k], v) {
					t.Errorf("dimension %s = %v, want %v", k, res.Dimensions[k], v)
				}
			}
			if want := math.Round(c.wantScore*1000) / 1000; !near(*res.Score, want) {
				t.Errorf("score = %v, want %v", *res.Score, want)
			}
			if c.wantRules != nil && !slices.Equal(rules(res), c.wantRules) {
				t.Errorf("adjustments = %v, want %v", rules(res), c.wantRules)
			}
			for _, f := range c.wantFlags {
				if !res.HasFlag(f) {
					t.Errorf("flags %v lack %q", res.Flags, f)
				}
			}
			if *res.Passed != (*res.Score >= masis.Threshold) {
				t.Errorf("passed = %v for score %v", *res.Passed, *res.Score)
			}
			if res.CitationAudit == nil {
				t.Error("the result does not carry the citation audit the host applied")
			}
		})
	}
}

// TestNoEvidence: faithfulness is skipped, not 0, and the overall renormalizes.
func TestNoEvidence(t *testing.T) {
	s, srv := open(t, judgetest.Rule{Reply: `{"faithfulness": null, "relevance": 0.8, "completeness": 0.6, "reasoning_quality": 0.9, "overall_score": 0.7, "improvement_suggestions": ["give the year"]}`})
	res := s.Score(context.Background(), sdk.Run{Input: question, Output: "It is 330 metres tall."})
	if res.Status != sdk.StatusScored {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	if _, ok := res.Dimensions["faithfulness"]; ok {
		t.Errorf("faithfulness scored without evidence: %v", res.Dimensions)
	}
	if res.SkippedDimensions["faithfulness"] == "" {
		t.Errorf("faithfulness not listed as skipped: %v", res.SkippedDimensions)
	}
	// (0.25*0.8 + 0.25*0.6 + 0.15*0.9) / 0.65 = 0.485 / 0.65 = 0.74615...
	if !near(*res.Score, 0.746) {
		t.Errorf("score = %v, want 0.746", *res.Score)
	}
	if !strings.Contains(res.Reason, "no evidence") {
		t.Errorf("reason does not say there was no evidence: %q", res.Reason)
	}
	if p := srv.Requests()[0].LastUser(); !strings.Contains(p, `set "faithfulness" to null`) {
		t.Errorf("the prompt does not tell the judge to skip faithfulness:\n%s", p)
	}
	if !slices.Equal(res.Suggestions, []string{"give the year"}) {
		t.Errorf("suggestions = %v", res.Suggestions)
	}
}

// TestFailures: a missing dimension, a judge error and no judge are never scores.
func TestFailures(t *testing.T) {
	cases := []struct {
		name       string
		rule       judgetest.Rule
		status     sdk.Status
		code       string
		wantReason []string
	}{
		{
			name:       "missing dimension",
			rule:       judgetest.Rule{Reply: `{"faithfulness": 0.9, "relevance": 0.8, "reasoning_quality": 0.6, "overall_score": 0.8}`},
			status:     sdk.StatusFailed,
			code:       sdk.CodeJudgeError,
			wantReason: []string{`"completeness"`},
		},
		{
			name:       "two missing dimensions",
			rule:       judgetest.Rule{Reply: `{"faithfulness": 0.9, "overall_score": 0.8}`},
			status:     sdk.StatusFailed,
			code:       sdk.CodeJudgeError,
			wantReason: []string{`"relevance"`, `"completeness"`, `"reasoning_quality"`},
		},
		{
			name:       "a score out of any scale",
			rule:       judgetest.Rule{Reply: `{"faithfulness": 0.9, "relevance": 250, "completeness": 0.7, "reasoning_quality": 0.6}`},
			status:     sdk.StatusFailed,
			code:       sdk.CodeJudgeError,
			wantReason: []string{`"relevance"`, "250"},
		},
		{
			name:       "prose instead of JSON",
			rule:       judgetest.Rule{Reply: "The answer looks fine to me."},
			status:     sdk.StatusFailed,
			code:       sdk.CodeJudgeError,
			wantReason: []string{"not the JSON object", "looks fine"},
		},
		{
			name:       "the endpoint fails",
			rule:       judgetest.Rule{Status: 500},
			status:     sdk.StatusFailed,
			code:       sdk.CodeJudgeError,
			wantReason: []string{"judge call failed"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := open(t, c.rule)
			res := s.Score(context.Background(), sdk.Run{Input: question, Output: "It is 330 metres tall [1].", Context: eiffel})
			if res.Status != c.status || res.Score != nil {
				t.Fatalf("status %s score %v, want %s and no score", res.Status, res.Score, c.status)
			}
			if res.Error == nil || res.Error.Code != c.code {
				t.Fatalf("error %+v, want code %s", res.Error, c.code)
			}
			for _, w := range c.wantReason {
				if !strings.Contains(res.Error.Message, w) {
					t.Errorf("error message %q does not contain %q", res.Error.Message, w)
				}
			}
		})
	}
	t.Run("no judge", func(t *testing.T) {
		res := openWith(t, nil).Score(context.Background(), sdk.Run{Input: question, Output: "330 m [1]", Context: eiffel})
		if res.Status != sdk.StatusSkipped || !strings.Contains(res.Reason, "--judge-url") {
			t.Errorf("status %s reason %q, want skipped with how to configure a judge", res.Status, res.Reason)
		}
	})
}

// TestPrompt checks what the judge is sent: order, rubric, constraints.
func TestPrompt(t *testing.T) {
	s, srv := open(t, judgetest.Rule{Reply: `{"faithfulness": 0.9, "relevance": 0.8, "completeness": 0.7, "reasoning_quality": 0.6}`})
	run := sdk.Run{
		Input:    "QUESTION-MARK-7: " + question,
		Output:   "ANSWER-MARK-7: The Eiffel Tower is 330 metres tall [1] and was completed in 1889 [3].",
		Context:  []sdk.Passage{{Text: "EVIDENCE-MARK-7: " + eiffel[0].Text}, eiffel[1]},
		Metadata: map[string]any{"purpose": "answer questions about Paris landmarks"},
	}
	res := s.Score(context.Background(), run)
	if res.Status != sdk.StatusScored {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	req := srv.Requests()[0]
	p := req.LastUser()
	q, a, e := strings.Index(p, "QUESTION-MARK-7"), strings.Index(p, "ANSWER-MARK-7"), strings.Index(p, "EVIDENCE-MARK-7")
	if q < 0 || a < 0 || e < 0 || !(q < a && a < e) {
		t.Errorf("want question < answer < evidence in the prompt, got offsets %d, %d, %d", q, a, e)
	}
	for _, want := range []string{
		"Be strict", "never by default",
		"1 = every claim is supported", "0.5 = the main claims are supported", "0 = the main claims are unsupported",
		"Hard constraints", "[3]", "at most 0.4", "[1] EVIDENCE-MARK-7", "[2] The Eiffel Tower was completed",
		"answer questions about Paris landmarks", `"improvement_suggestions"`,
	} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if !req.JSON {
		t.Error("the judge was not asked for a JSON object")
	}
	if len(res.Steps) != 1 || res.Steps[0].Prompt == "" || !strings.Contains(res.Steps[0].Prompt, "QUESTION-MARK-7") {
		t.Errorf("steps do not record the prompt: %+v", res.Steps)
	}
	var parsed map[string]any
	if err := json.Unmarshal(res.Steps[0].Output, &parsed); err != nil || parsed["faithfulness"] != 0.9 {
		t.Errorf("step output %s (%v) does not record the parsed answer", res.Steps[0].Output, err)
	}
	if len(res.Telemetry.Nodes) != 1 {
		t.Fatalf("telemetry nodes = %v", res.Telemetry.Nodes)
	}
	n := res.Telemetry.Nodes[0]
	for _, k := range []string{"node", "overall_score", "faithfulness", "relevance", "completeness", "duration_ms"} {
		if _, ok := n[k]; !ok {
			t.Errorf("evaluator node lacks %q: %v", k, n)
		}
	}
	if n["node"] != "evaluator" || n["faithfulness"] != 0.9 {
		t.Errorf("evaluator node = %v, want the judge's raw faithfulness 0.9", n)
	}
}

// TestUncitedConstraint: the uncited count and its cap reach the prompt.
func TestUncitedConstraint(t *testing.T) {
	s, srv := open(t, judgetest.Rule{Reply: `{"faithfulness": 0.2, "relevance": 0.8, "completeness": 0.7, "reasoning_quality": 0.6}`})
	out := strings.Repeat("The Eiffel Tower is a tall iron lattice tower in Paris. ", 6)
	s.Score(context.Background(), sdk.Run{Input: question, Output: out, Context: eiffel})
	p := srv.Requests()[0].LastUser()
	if !strings.Contains(p, "6 of the answer's 6 claims carry no citation. Faithfulness must be at most 0.5.") {
		t.Errorf("prompt lacks the uncited constraint:\n%s", p)
	}
}

// TestSharedCitationCases runs testdata/deepeval/citation_faithfulness_cases.json
// through the host with a judge that calls every answer faithful: a true claim cited to the
// wrong passage must still end at faithfulness <= 0.4, a correctly cited one at 1.
func TestSharedCitationCases(t *testing.T) {
	const path = "../../testdata/deepeval/citation_faithfulness_cases.json"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read the citation cases (the repository's testdata/): %v", err)
	}
	var file struct {
		Query   string   `json:"query"`
		Context []string `json:"retrieval_context"`
		Cases   []struct {
			Output        string  `json:"actual_output"`
			ExpectedScore float64 `json:"expected_score"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	var ctx []sdk.Passage
	for _, c := range file.Context {
		ctx = append(ctx, sdk.Passage{Text: c})
	}
	s, _ := open(t, judgetest.Rule{Reply: `{"faithfulness": 1, "relevance": 1, "completeness": 1, "reasoning_quality": 1, "overall_score": 1}`})
	for _, c := range file.Cases {
		t.Run(c.Output, func(t *testing.T) {
			res := s.Score(context.Background(), sdk.Run{Input: file.Query, Output: c.Output, Context: ctx})
			if res.Status != sdk.StatusScored {
				t.Fatalf("status %s: %s", res.Status, res.Reason)
			}
			f := res.Dimensions["faithfulness"]
			if c.ExpectedScore < 0.5 && f > 0.4 {
				t.Errorf("faithfulness %v for a misattributed claim, want <= 0.4 (audit %+v)", f, res.CitationAudit)
			}
			if c.ExpectedScore >= 0.5 && f != 1 {
				t.Errorf("faithfulness %v for a correctly cited answer, want 1 (adjustments %v)", f, rules(res))
			}
		})
	}
}

// TestUnansweredOutputsSpendNoCall: an empty output or an error in place of an answer is
// graded without the judge (scored 0, flagged, faithfulness skipped, not passed), with or
// without a judge configured; a real answer is sent to the judge.
func TestUnansweredOutputsSpendNoCall(t *testing.T) {
	healthy := `{"faithfulness": 1, "relevance": 1, "completeness": 1, "reasoning_quality": 1}`
	answer := "It is 330 metres tall [1] and was completed in 1889 [2]."
	cases := []struct {
		name      string
		output    string
		metadata  map[string]any
		wantFlag  string // "" for a judged answer
		wantCalls int
	}{
		{"empty output", "", nil, FlagEmpty, 0},
		{"white space", " \n\t ", nil, FlagEmpty, 0},
		{"an upstream error", "ERROR: upstream timeout", nil, FlagError, 0},
		{"a provider failure", "Error code: 429 - Rate limit reached for requests", nil, FlagError, 0},
		{"a stack trace", "Traceback (most recent call last):\n  File \"agent.py\", line 12, in run\nKeyError: 'answer'", nil, FlagError, 0},
		{"an error the caller recorded", answer, map[string]any{"status": "failed"}, FlagError, 0},
		{"a real answer is judged", answer, nil, "", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, srv := open(t, judgetest.Rule{Reply: healthy})
			res := s.Score(context.Background(), sdk.Run{Input: question, Output: c.output, Context: eiffel, Metadata: c.metadata})
			if srv.Calls() != c.wantCalls || res.Telemetry.JudgeCalls != c.wantCalls {
				t.Fatalf("judge calls: server %d, telemetry %d; want %d", srv.Calls(), res.Telemetry.JudgeCalls, c.wantCalls)
			}
			if c.wantFlag == "" {
				if res.Status != sdk.StatusScored || *res.Score != 1 {
					t.Fatalf("status %s score %v: %s", res.Status, res.Score, res.Reason)
				}
				return
			}
			if res.Status != sdk.StatusScored || *res.Score != 0 || *res.Passed || !res.HasFlag(c.wantFlag) {
				t.Fatalf("status %s score %v passed %v flags %v; want scored 0, not passed, flagged %s", res.Status, res.Score, res.Passed, res.Flags, c.wantFlag)
			}
			if res.SkippedDimensions["faithfulness"] == "" || res.Dimensions["relevance"] != 0 || !strings.Contains(res.Reason, "no judge call") {
				t.Errorf("dimensions %v skipped %v reason %q", res.Dimensions, res.SkippedDimensions, res.Reason)
			}
			// The same grade without a judge configured: it does not depend on one.
			if nj := openWith(t, nil).Score(context.Background(), sdk.Run{Input: question, Output: c.output, Metadata: c.metadata}); nj.Status != sdk.StatusScored || *nj.Score != 0 {
				t.Errorf("without a judge: %s %v", nj.Status, nj.Score)
			}
		})
	}
}

// Flag names as the tests spell them.
const (
	FlagEmpty = masis.FlagEmptyOutput
	FlagError = masis.FlagErrorText
)

// TestMalformedAnswerIsAskedAgain: a judge answer the evaluator cannot use fails the run
// and is not cached, so the rerun against a now healthy judge makes a call and scores;
// the healthy answer is cached, so a third run makes none.
func TestMalformedAnswerIsAskedAgain(t *testing.T) {
	healthy := judgetest.Rule{Reply: `{"faithfulness": 1, "relevance": 0.9, "completeness": 0.8, "reasoning_quality": 0.7}`}
	for _, bad := range []struct{ name, reply string }{
		{"prose", "The answer is good."},
		{"JSON without the dimensions", `{"error": "model overloaded"}`},
	} {
		t.Run(bad.name, func(t *testing.T) {
			s, srv := open(t, judgetest.Rule{Reply: bad.reply, Times: 1}, healthy)
			run := sdk.Run{Input: question, Output: "It is 330 metres tall [1] and was completed in 1889 [2].", Context: eiffel}
			first := s.Score(context.Background(), run)
			if first.Status != sdk.StatusFailed || first.Error.Code != sdk.CodeJudgeError {
				t.Fatalf("first run: %s %+v", first.Status, first.Error)
			}
			second := s.Score(context.Background(), run)
			if second.Status != sdk.StatusScored || second.Telemetry.JudgeCalls != 1 || second.Telemetry.CacheHits != 0 {
				t.Fatalf("rerun: %s, telemetry %+v; want scored with one call", second.Status, second.Telemetry)
			}
			third := s.Score(context.Background(), run)
			if third.Status != sdk.StatusScored || third.Telemetry.JudgeCalls != 0 || third.Telemetry.CacheHits != 1 {
				t.Fatalf("third run: %s, telemetry %+v; want scored from the cache", third.Status, third.Telemetry)
			}
			if srv.Calls() != 2 {
				t.Errorf("server saw %d requests, want 2", srv.Calls())
			}
		})
	}
}

// TestToolTurns: an action-only turn reaches the judge with its calls and results shown as
// the answer (it used to be graded 0 as empty without a call); a turn whose only calls all
// failed is 0 without a call, flagged tool_error.
func TestToolTurns(t *testing.T) {
	s, srv := open(t, judgetest.Rule{Reply: `{"faithfulness": null, "relevance": 1, "completeness": 1, "reasoning_quality": 0.9, "overall_score": 0.97, "improvement_suggestions": ["confirm the cancellation to the user"]}`})
	ctx := context.Background()
	var seed, failed sdk.Run
	if err := json.Unmarshal([]byte(`{"input":"Cancel my 3pm meeting","output":[
	  {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"cancel_event","arguments":"{\"time\":\"15:00\"}"}}]},
	  {"role":"tool","tool_call_id":"c1","content":"{\"cancelled\":true}"}]}`), &seed); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"input":"Cancel my 3pm meeting","output":[
	  {"role":"assistant","tool_calls":[{"id":"c1","name":"cancel_event","arguments":{"time":"15:00"}}]},
	  {"role":"tool","tool_call_id":"c1","content":"Error: 503 Service Unavailable"}]}`), &failed); err != nil {
		t.Fatal(err)
	}
	res := s.Score(ctx, seed)
	if res.Status != sdk.StatusScored || res.Dimensions[masis.Relevance] != 1 || srv.Calls() != 1 {
		t.Fatalf("the seed's turn: %s %v %v %q, %d calls", res.Status, res.Value(), res.Dimensions, res.Reason, srv.Calls())
	}
	_, p := masis.Prompt(&seed)
	if got := srv.Requests()[0].LastUser(); got != p {
		t.Fatalf("the judge got another prompt than masis.Prompt:\n%s", got)
	}
	for _, must := range []string{"<actions>\n1. cancel_event({\"time\":\"15:00\"})\n   result: {\"cancelled\":true}\n</actions>", "answered through its actions alone", "completes the requested action"} {
		if !strings.Contains(p, must) {
			t.Errorf("prompt lacks %q:\n%s", must, p)
		}
	}
	if strings.Index(p, "<question>") > strings.Index(p, "<actions>") || strings.Index(p, "<actions>") > strings.Index(p, "<answer>") {
		t.Errorf("prompt: want question, actions, answer in that order:\n%s", p)
	}
	res = s.Score(ctx, failed)
	if res.Status != sdk.StatusScored || *res.Score != 0 || !res.HasFlag("tool_error") || srv.Calls() != 1 {
		t.Fatalf("failed calls, nothing said: %s %v %v, %d calls; want 0, tool_error, no call", res.Status, res.Value(), res.Flags, srv.Calls())
	}
}
