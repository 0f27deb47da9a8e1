package contextrecall_test

import (
	"context"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/grounding/groundingtest"
	"github.com/scorekit/scorekit/plugins/contextrecall"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/scorertest"
)

// TestFormula: attributed / claims on specified verdicts, the edge cases included.
func TestFormula(t *testing.T) {
	const a, n = "attributed", "not_attributed"
	for _, tc := range []struct {
		name     string
		verdicts []string
		want     float64
		ok       bool
	}{
		{"no claims", nil, 0, false},
		{"all attributed", []string{a, a}, 1, true},
		{"none attributed", []string{n, n, n}, 0, true},
		{"partial", []string{a, a, n}, 2.0 / 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := contextrecall.Formula(tc.verdicts)
			if ok != tc.ok || math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("%v %v, want %v %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

var einstein = sdk.Run{
	Input:    "Tell me about Einstein.",
	Output:   "Einstein was born in 1879.",
	Expected: "Albert Einstein was born on 14 March 1879 in Ulm. He developed the theory of relativity. He won the Nobel Prize in 1921.",
	Context: []sdk.Passage{
		{Text: "Albert Einstein was born on 14 March 1879 in Ulm, Germany."},
		{Text: "Einstein published his theory of special relativity in 1905."},
	},
}

const einsteinAnswer = `{"claims": [
 {"claim": "Einstein was born on 14 March 1879", "verdict": "attributed", "passages": ["1"], "reason": "r"},
 {"claim": "Einstein was born in Ulm", "verdict": "attributed", "passages": ["1"], "reason": "r"},
 {"claim": "Einstein developed the theory of relativity", "verdict": "attributed", "passages": ["2"], "reason": "r"},
 {"claim": "Einstein won the Nobel Prize in 1921", "verdict": "not_attributed", "passages": [], "reason": "No passage mentions it."}]}`

// recorder answers every request with reply, keeping the last prompt.
type recorder struct {
	calls  atomic.Int32
	prompt atomic.Value
	reply  string
}

func (r *recorder) judge() scorertest.JudgeFunc {
	return func(_ context.Context, req sdk.CompletionRequest) (string, error) {
		r.calls.Add(1)
		r.prompt.Store(req.Messages[len(req.Messages)-1].Content)
		return r.reply, nil
	}
}

// TestScore: one call over the reference answer (the output is not read); the claim the
// retriever missed is named.
func TestScore(t *testing.T) {
	r := &recorder{reply: einsteinAnswer}
	res := scorertest.New(t, contextrecall.New, scorertest.WithJudge(r.judge())).Score(einstein)
	if res.Status != sdk.StatusScored || *res.Score != 0.75 || r.calls.Load() != 1 {
		t.Fatalf("%s %v after %d calls (%s), want 0.75 after 1", res.Status, res.Value(), r.calls.Load(), res.Reason)
	}
	want := `the passages hold 3 of the reference answer's 4 claims; missing from the passages: "Einstein won the Nobel Prize in 1921"`
	if res.Reason != want {
		t.Errorf("reason %q, want %q", res.Reason, want)
	}
	p := r.prompt.Load().(string)
	if !strings.Contains(p, "<reference>\n"+einstein.Expected+"\n</reference>") || strings.Contains(p, einstein.Output) {
		t.Errorf("prompt shows the reference answer and not the output? %q", p)
	}
}

// TestDeepEval: the scorer splits the reference into sentences and the judge answers each
// one, in order, or the result is failed naming the mismatch.
func TestDeepEval(t *testing.T) {
	three := `{"claims": [
	 {"claim": "Albert Einstein was born on 14 March 1879 in Ulm.", "verdict": "attributed", "passages": ["1"], "reason": "r"},
	 {"claim": "He developed the theory of relativity.", "verdict": "attributed", "passages": ["2"], "reason": "r"},
	 {"claim": "He won the Nobel Prize in 1921.", "verdict": "not_attributed", "passages": [], "reason": "r"}]}`
	r := &recorder{reply: three}
	s := scorertest.New(t, contextrecall.New, scorertest.WithJudge(r.judge()), scorertest.WithConfig(`{"method": "deepeval"}`))
	res := s.Score(einstein)
	if res.Status != sdk.StatusScored || math.Abs(*res.Score-0.67) > 1e-9 || !strings.Contains(res.Reason, "2 of the reference answer's 3 sentences") {
		t.Fatalf("%s %v (%s), want 0.67 over 3 sentences", res.Status, res.Value(), res.Reason)
	}
	if p := r.prompt.Load().(string); !strings.Contains(p, "1. Albert Einstein was born on 14 March 1879 in Ulm.\n2. He developed the theory of relativity.\n3. He won the Nobel Prize in 1921.") {
		t.Errorf("prompt does not number the sentences: %q", p)
	}
	r2 := &recorder{reply: einsteinAnswer} // four claims for three sentences
	res = scorertest.New(t, contextrecall.New, scorertest.WithJudge(r2.judge()), scorertest.WithConfig(`{"method": "deepeval"}`)).Score(einstein)
	if res.Status != sdk.StatusFailed || !strings.Contains(res.Reason, "4 verdicts for the 3 sentences") {
		t.Errorf("%s (%s), want failed naming 4 verdicts for 3 sentences", res.Status, res.Reason)
	}
}

// TestEdges: no reference answer and no passages are skipped without a call; a reference
// in which the judge finds no claim is failed; tool results stand in for passages.
func TestEdges(t *testing.T) {
	noExpected := einstein
	noExpected.Expected = "  "
	noContext := einstein
	noContext.Context = nil
	viaTools := einstein
	viaTools.Context = nil
	viaTools.ToolCalls = []sdk.ToolCall{{ID: "s1", Name: "search", Result: "Einstein was born in Ulm in 1879."}}
	for _, tc := range []struct {
		name   string
		run    sdk.Run
		reply  string
		calls  int32
		status sdk.Status
		says   string
	}{
		{"no reference answer", noExpected, einsteinAnswer, 0, sdk.StatusSkipped, "put it in run.expected"},
		{"no passages", noContext, einsteinAnswer, 0, sdk.StatusSkipped, "record the retrieved passages in run.context"},
		{"no claims in a reference", einstein, `{"claims": []}`, 1, sdk.StatusFailed, "found no claim in the reference answer"},
		{"tool results", viaTools, `{"claims": [{"claim": "Einstein was born in Ulm", "verdict": "attributed", "passages": ["tool:s1"], "reason": "r"}]}`,
			1, sdk.StatusScored, "its tool results were the evidence"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{reply: tc.reply}
			res := scorertest.New(t, contextrecall.New, scorertest.WithJudge(r.judge())).Score(tc.run)
			if res.Status != tc.status || r.calls.Load() != tc.calls || !strings.Contains(res.Reason, tc.says) {
				t.Errorf("%s after %d calls (%s), want %s after %d saying %q", res.Status, r.calls.Load(), res.Reason, tc.status, tc.calls, tc.says)
			}
		})
	}
	path := einstein
	path.Context = nil
	path.Metadata = map[string]any{"retrieval": map[string]any{"chunks": []any{"Einstein was born in Ulm in 1879.", map[string]any{"id": "b", "text": "He won the Nobel Prize in 1921."}}}}
	r := &recorder{reply: einsteinAnswer}
	res := scorertest.New(t, contextrecall.New, scorertest.WithJudge(r.judge()), scorertest.WithConfig(`{"context_path": "retrieval.chunks"}`)).Score(path)
	if p, _ := r.prompt.Load().(string); res.Status != sdk.StatusScored || !strings.Contains(p, `<passage id="b">`+"\nHe won the Nobel Prize") {
		t.Errorf("context_path: %s (%s), prompt %q", res.Status, res.Reason, p)
	}
	bad := einstein
	bad.Metadata = map[string]any{"retrieval": map[string]any{"chunks": "one long string"}}
	res = scorertest.New(t, contextrecall.New, scorertest.WithJudge(r.judge()), scorertest.WithConfig(`{"context_path": "retrieval.chunks"}`)).Score(bad)
	if res.Status != sdk.StatusFailed || res.Error.Code != sdk.CodeInvalidRun || !strings.Contains(res.Reason, "metadata.retrieval.chunks: want an array") {
		t.Errorf("bad context_path value: %s %+v", res.Status, res.Error)
	}
}

// TestMastraCases runs Mastra's context-recall cases. Mastra's tests mock the scorer, so the
// answers are built from the mocked scores (see groundingtest): what this checks is that the
// scorer turns them into the same score with the scale undone, and that the cases without a
// ground truth are skipped where Mastra's mock says 0.
func TestMastraCases(t *testing.T) {
	dir, err := corpus.Dir()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := corpus.LoadMastraGrounding(dir, "context_recall")
	if err != nil {
		t.Fatal(err)
	}
	scored, skipped := 0, 0
	for _, c := range cases {
		if c.Run == nil {
			continue // a constructor error in Mastra; scorekit has no constructor context
		}
		t.Run(c.ID, func(t *testing.T) {
			answer, ok, err := groundingtest.Answer("context_recall", c)
			if err != nil {
				t.Fatal(err)
			}
			r := &recorder{reply: answer}
			res := scorertest.New(t, contextrecall.New, scorertest.WithJudge(r.judge())).Score(*c.Run)
			if !ok {
				if res.Status != sdk.StatusSkipped || r.calls.Load() != 0 {
					t.Errorf("%s after %d calls, want skipped (Mastra's mock: %v)", res.Status, r.calls.Load(), *c.Mastra.Expected.Score)
				}
				skipped++
				return
			}
			want := *c.Mastra.Expected.Score
			if s, ok := c.Mastra.Options["scale"].(float64); ok {
				want /= s
			}
			if res.Status != sdk.StatusScored || math.Abs(*res.Score-want) > 0.005 {
				t.Errorf("%s %v (%s), want %v", res.Status, res.Value(), res.Reason, want)
			}
			scored++
		})
	}
	if scored != 4 || skipped != 2 {
		t.Errorf("%d scored, %d skipped; want 4 and 2", scored, skipped)
	}
}
