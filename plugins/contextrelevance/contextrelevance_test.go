package contextrelevance_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/scorekit/scorekit/plugins/contextrelevance"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/scorertest"
)

// judge answers every request with reply and keeps the prompts it was sent.
type judge struct {
	mu      sync.Mutex
	reply   string
	err     error
	prompts []string
	schemas []json.RawMessage
}

func (j *judge) fn() scorertest.JudgeFunc {
	return func(_ context.Context, req sdk.CompletionRequest) (string, error) {
		j.mu.Lock()
		defer j.mu.Unlock()
		j.prompts = append(j.prompts, req.Messages[len(req.Messages)-1].Content)
		j.schemas = append(j.schemas, req.Schema)
		return j.reply, j.err
	}
}

func open(t *testing.T, j *judge, config string) *scorertest.Scorer {
	t.Helper()
	opts := []scorertest.Option{}
	if j != nil {
		opts = append(opts, scorertest.WithJudge(j.fn()))
	}
	if config != "" {
		opts = append(opts, scorertest.WithConfig(config))
	}
	return scorertest.New(t, contextrelevance.New, opts...)
}

// rated is a mastra-method answer: ratings "id:level:used", then missing items.
func rated(ratings []string, missing ...string) string {
	type p struct {
		ID        string `json:"id"`
		Relevance string `json:"relevance"`
		Used      bool   `json:"used"`
		Reason    string `json:"reason"`
	}
	out := struct {
		Passages []p      `json:"passages"`
		Missing  []string `json:"missing"`
	}{Missing: append([]string{}, missing...)}
	for _, r := range ratings {
		f := strings.Split(r, ":")
		out.Passages = append(out.Passages, p{f[0], f[1], f[2] == "used", "scripted"})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

var berlin = sdk.Run{
	Input:  "When did the Berlin Wall fall?",
	Output: "It fell on 9 November 1989.",
	Context: []sdk.Passage{
		{ID: "1", Text: "The Berlin Wall fell on 9 November 1989."},
		{ID: "2", Text: "Berlin is the capital of Germany."},
		{ID: "3", Text: "The wall was built in 1961."},
	},
}

func TestScoresFromVerdicts(t *testing.T) {
	tests := []struct {
		name   string
		reply  string
		want   float64
		reason []string
	}{
		{"all relevant and used", rated([]string{"1:high:used", "2:high:used", "3:high:used"}), 1,
			[]string{"3 passages rated: high passages 1, 2, 3 (mean relevance 1.00)", "score 1.00"}},
		{"partial", rated([]string{"1:high:used", "2:low:unused", "3:medium:unused"}), 2.0 / 3,
			[]string{"high passage 1, medium passage 3, low passage 2"}},
		{"unused high and missing", rated([]string{"1:high:unused", "2:none:unused", "3:medium:used"}, "the date the wall opened"), 1.7/3 - 0.1 - 0.15,
			[]string{"high-relevance but unused: passage 1 (-0.10)", `missing: "the date the wall opened" (-0.15)`}},
		{"all irrelevant", rated([]string{"1:none:unused", "2:none:unused", "3:none:unused"}), 0, []string{"none passages 1, 2, 3", "score 0.00"}},
		{"ids out of order, as numbers and in brackets", `{"passages": [{"id": 3, "relevance": "HIGH", "used": "yes", "reason": ""}, {"id": "[1]", "relevance": "high", "used": true, "reason": ""}, {"id": "2", "relevance": "none", "used": false, "reason": ""}], "missing": []}`, 2.0 / 3, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &judge{reply: tt.reply}
			res := open(t, j, "").Score(berlin)
			if res.Status != sdk.StatusScored || math.Abs(*res.Score-math.Round(tt.want*100)/100) > 1e-9 {
				t.Fatalf("%s %v %v, want %v", res.Status, res.Value(), res.Error, tt.want)
			}
			for _, want := range tt.reason {
				if !strings.Contains(res.Reason, want) {
					t.Errorf("reason %q lacks %q", res.Reason, want)
				}
			}
			if len(j.prompts) != 1 || res.Telemetry.JudgeCalls != 1 {
				t.Fatalf("%d judge calls, telemetry %d; want one", len(j.prompts), res.Telemetry.JudgeCalls)
			}
			if len(res.Steps) != 2 || res.Steps[0].Name != "judge" || res.Steps[1].Name != "score" {
				t.Fatalf("steps %+v, want judge and score", res.Steps)
			}
			// Every passage's verdict is in the judge step, by id.
			var judged struct {
				Parsed struct {
					Passages []struct{ ID, Relevance string } `json:"passages"`
				} `json:"parsed"`
			}
			if err := json.Unmarshal(res.Steps[0].Output, &judged); err != nil || len(judged.Parsed.Passages) != 3 || judged.Parsed.Passages[0].ID != "1" {
				t.Fatalf("judge step %s: %v", res.Steps[0].Output, err)
			}
		})
	}
}

func TestPromptAndSchema(t *testing.T) {
	j := &judge{reply: rated([]string{"1:high:used", "2:low:unused", "3:low:unused"})}
	open(t, j, "").Score(berlin)
	p := j.prompts[0]
	for _, want := range []string{"<input>\nWhen did the Berlin Wall fall?\n</input>", "<passage id=\"1\">\nThe Berlin Wall fell on 9 November 1989.\n</passage>\n<passage id=\"2\">", "<response>\nIt fell on 9 November 1989.\n</response>", `"relevance": "high|medium|low|none"`} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	// The constant instructions come first, the run last.
	if strings.Index(p, "Examples:") > strings.Index(p, "<input>") {
		t.Error("the run comes before the instructions")
	}
	if !strings.Contains(string(j.schemas[0]), `"enum":["high","medium","low","none"]`) {
		t.Errorf("schema %s", j.schemas[0])
	}
}

// TestEveryPassageByID: a verdict missing, unknown or given twice fails the result, naming it.
func TestEveryPassageByID(t *testing.T) {
	tests := []struct{ name, reply, want string }{
		{"missing", rated([]string{"1:high:used", "3:low:unused"}), "no verdict for passage 2"},
		{"unknown", rated([]string{"1:high:used", "2:low:unused", "3:low:unused", "7:high:used"}), `ids the run does not have: "7"`},
		{"twice", rated([]string{"1:high:used", "2:low:unused", "2:low:unused", "3:low:unused"}), "more than one verdict for passage 2"},
		{"bad level", rated([]string{"1:very:used", "2:low:unused", "3:low:unused"}), `passage 1: relevance "very"`},
		{"not JSON", "the passages look fine", "no JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := open(t, &judge{reply: tt.reply}, "").Score(berlin)
			if res.Status != sdk.StatusFailed || res.Error.Code != sdk.CodeJudgeError || !strings.Contains(res.Error.Message, tt.want) {
				t.Fatalf("%s %v, want judge_error naming %q", res.Status, res.Error, tt.want)
			}
			if len(res.Steps) == 0 || !strings.Contains(string(res.Steps[0].Output), "raw") {
				t.Errorf("the failed result does not keep the judge's answer: %+v", res.Steps)
			}
		})
	}
}

func TestEdges(t *testing.T) {
	noContext := berlin
	noContext.Context = nil
	toolsOnly := noContext
	toolsOnly.ToolCalls = []sdk.ToolCall{{ID: "c1", Name: "search", Result: "The Berlin Wall fell in 1989."}}
	noInput := berlin
	noInput.Input = " "
	sameID := berlin
	sameID.Context = []sdk.Passage{{ID: "a", Text: "x"}, {ID: "a", Text: "y"}}
	many := berlin
	many.Context = nil
	for i := range 101 {
		many.Context = append(many.Context, sdk.Passage{Text: fmt.Sprint("passage ", i)})
	}
	many.NumberContext()
	tests := []struct {
		name   string
		run    sdk.Run
		judge  *judge
		status sdk.Status
		code   string
		want   string
	}{
		{"no passages", noContext, &judge{}, sdk.StatusSkipped, "", "record the retrieved passages in run.context"},
		{"tool results are not retrieved passages", toolsOnly, &judge{}, sdk.StatusSkipped, "", "has none in run.context"},
		{"no judge", berlin, nil, sdk.StatusSkipped, "", "needs an LLM judge"},
		{"empty input", noInput, &judge{}, sdk.StatusFailed, sdk.CodeInvalidRun, "record the user's request in run.input"},
		{"passages sharing an id", sameID, &judge{}, sdk.StatusFailed, sdk.CodeInvalidRun, `have the id "a"`},
		{"more passages than one call rates", many, &judge{}, sdk.StatusFailed, sdk.CodeLimitExceeded, "101 passages"},
		{"the judge fails", berlin, &judge{err: &sdk.Error{Code: sdk.CodeTimeout, Message: "judge timed out"}}, sdk.StatusFailed, sdk.CodeTimeout, "judge timed out"},
		{"the judge errs", berlin, &judge{err: errors.New("boom")}, sdk.StatusFailed, sdk.CodeJudgeError, "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := open(t, tt.judge, "").Score(tt.run)
			if res.Status != tt.status || (tt.code != "" && res.Error.Code != tt.code) || !strings.Contains(res.Reason, tt.want) {
				t.Fatalf("%s %v %q, want %s %s naming %q", res.Status, res.Error, res.Reason, tt.status, tt.code, tt.want)
			}
			if tt.judge != nil && tt.status == sdk.StatusSkipped && len(tt.judge.prompts) > 0 {
				t.Error("a skipped run called the judge")
			}
		})
	}
}

// TestNoAnswer: without an answer the passages are rated, but their use is not judged.
func TestNoAnswer(t *testing.T) {
	for _, output := range []string{"", "Error: 503 Service Unavailable"} {
		run := berlin
		run.Output = output
		j := &judge{reply: rated([]string{"1:high:unused", "2:low:unused", "3:high:unused"})}
		res := open(t, j, "").Score(run)
		if res.Status != sdk.StatusScored || *res.Score != 0.77 || len(res.Flags) != 1 || !strings.Contains(res.Reason, "use was not judged") {
			t.Fatalf("output %q: %s %v %v %q", output, res.Status, res.Value(), res.Flags, res.Reason)
		}
	}
}

// TestToolTurn: a turn that answered through tool calls is judged on them.
func TestToolTurn(t *testing.T) {
	run := berlin
	run.Output = ""
	run.ToolCalls = []sdk.ToolCall{{ID: "c1", Name: "post_answer", Arguments: `{"text":"9 November 1989"}`, Result: `{"ok":true}`}}
	j := &judge{reply: rated([]string{"1:high:used", "2:none:unused", "3:none:unused"})}
	res := open(t, j, "").Score(run)
	if res.Status != sdk.StatusScored || *res.Score != 0.33 || len(res.Flags) != 0 {
		t.Fatalf("%s %v %v", res.Status, res.Value(), res.Flags)
	}
	if !strings.Contains(j.prompts[0], `1. post_answer({"text":"9 November 1989"})`) || !strings.Contains(j.prompts[0], "answered through its actions alone") {
		t.Errorf("prompt does not show the actions:\n%s", j.prompts[0])
	}
}

func TestContextPath(t *testing.T) {
	run := berlin
	run.Context = nil
	run.Metadata = map[string]any{"retrieval": map[string]any{"chunks": []any{"The Berlin Wall fell on 9 November 1989.", map[string]any{"id": "x", "text": "Unrelated."}}}}
	j := &judge{reply: rated([]string{"1:high:used", "x:none:unused"})}
	res := open(t, j, `{"context_path": "retrieval.chunks"}`).Score(run)
	if res.Status != sdk.StatusScored || *res.Score != 0.5 {
		t.Fatalf("%s %v %v", res.Status, res.Value(), res.Error)
	}
	run.Metadata = nil
	if res := open(t, j, `{"context_path": "retrieval.chunks"}`).Score(run); res.Status != sdk.StatusSkipped || !strings.Contains(res.Reason, "metadata.retrieval.chunks") {
		t.Fatalf("%s %q", res.Status, res.Reason)
	}
}

func TestDeepEvalMethod(t *testing.T) {
	reply := `{"passages": [
	 {"id": "1", "statements": [{"statement": "The Berlin Wall fell on 9 November 1989.", "relevant": true}]},
	 {"id": "2", "statements": [{"statement": "Berlin is the capital of Germany.", "relevant": false}]},
	 {"id": "3", "statements": [{"statement": "The wall was built in 1961.", "relevant": false}, {"statement": "It was a wall.", "relevant": "yes"}]}]}`
	j := &judge{reply: reply}
	res := open(t, j, `{"method": "deepeval"}`).Score(berlin)
	if res.Status != sdk.StatusScored || *res.Score != 0.5 || !strings.Contains(res.Reason, "2 of 4 statements in 3 passages relevant") ||
		!strings.Contains(res.Reason, "no relevant statement in passage 2") {
		t.Fatalf("%s %v %q %v", res.Status, res.Value(), res.Reason, res.Error)
	}
	if strings.Contains(j.prompts[0], "<response>") {
		t.Error("the deepeval method judges relevance to the input alone, yet shows the response")
	}
	j.reply = `{"passages": [{"id": "1", "statements": []}, {"id": "2", "statements": []}, {"id": "3", "statements": []}]}`
	if res := open(t, j, `{"method": "deepeval"}`).Score(berlin); res.Status != sdk.StatusFailed || !strings.Contains(res.Reason, "no statements") {
		t.Fatalf("no statements: %s %q", res.Status, res.Reason)
	}
}

func TestConfig(t *testing.T) {
	for _, bad := range []string{`{"method": "ragas"}`, `{"missing_context_penalty": 2}`, `{"penalty": 1}`} {
		if _, err := scorertest.Open(contextrelevance.New, scorertest.WithConfig(bad)); err == nil {
			t.Errorf("config %s accepted", bad)
		}
	}
	j := &judge{reply: rated([]string{"1:high:unused", "2:high:used", "3:high:used"}, "a", "b")}
	res := open(t, j, `{"unused_high_relevance_penalty": 0.3, "missing_context_penalty": 0.05}`).Score(berlin)
	if res.Status != sdk.StatusScored || *res.Score != 0.6 {
		t.Fatalf("%s %v", res.Status, res.Value())
	}
}
