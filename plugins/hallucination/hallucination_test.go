package hallucination_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/grounding/groundingtest"
	"github.com/scorekit/scorekit/plugins/hallucination"
	"github.com/scorekit/scorekit/plugins/relevancy"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/scorertest"
)

// TestFormula: hallucination_free on specified verdicts, per claim (mastra) and per
// passage (deepeval), the edge cases included. The peer's figure is 1 minus it.
func TestFormula(t *testing.T) {
	const g, c, u = "grounded", "contradicted", "unsupported"
	const a, x = "agrees", "contradicts"
	for _, tc := range []struct {
		name     string
		method   string
		verdicts []string
		want     float64
		ok       bool
	}{
		{"no claims", "mastra", nil, 0, false},
		{"all grounded", "mastra", []string{g, g, g}, 1, true},
		{"all contradicted", "mastra", []string{c, c}, 0, true},
		{"all unsupported", "mastra", []string{u, u}, 0, true},
		{"partial: one of three made up", "mastra", []string{g, g, u}, 2.0 / 3, true},
		{"partial: contradicted and unsupported both count", "mastra", []string{g, c, u, g}, 0.5, true},
		{"deepeval: no passages", "deepeval", nil, 0, false},
		{"deepeval: agrees with all", "deepeval", []string{a, a}, 1, true},
		{"deepeval: contradicts one of three", "deepeval", []string{a, x, a}, 2.0 / 3, true},
		{"deepeval: contradicts all", "deepeval", []string{x}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := hallucination.Formula(tc.method, tc.verdicts)
			if ok != tc.ok || math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("%v %v, want %v %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func judge(reply string, calls *atomic.Int32) scorertest.JudgeFunc {
	return func(context.Context, sdk.CompletionRequest) (string, error) {
		calls.Add(1)
		return reply, nil
	}
}

var tesla = sdk.Run{
	Input:  "Tell me about Tesla.",
	Output: "Tesla was founded in 2003 by Elon Musk and is the most innovative car maker.",
	Context: []sdk.Passage{
		{Text: "Tesla was founded in 2003 by Martin Eberhard and Marc Tarpenning."},
		{Text: "Elon Musk joined in 2004 as chairman."},
	},
}

// TestScore: one call; hallucination_free is the score, hallucinated_share Mastra's figure
// at weight 0; the reason names which claims were made up and against which passage.
func TestScore(t *testing.T) {
	answer := `{"claims": [
	 {"claim": "Tesla was founded in 2003", "verdict": "grounded", "passages": ["1"], "reason": "Passage 1."},
	 {"claim": "Tesla was founded by Elon Musk", "verdict": "contradicted", "passages": ["1", "2"], "reason": "Others founded it; Musk joined in 2004."},
	 {"claim": "Tesla is the most innovative car maker", "verdict": "unsupported", "passages": [], "reason": "No passage ranks it."}]}`
	var calls atomic.Int32
	s := scorertest.New(t, hallucination.New, scorertest.WithJudge(judge(answer, &calls)))
	info := s.Info()
	if d, ok := info.Dimension("hallucinated_share"); !ok || d.Weight != 0 {
		t.Errorf("dimensions %+v, want hallucinated_share at weight 0", info.Dimensions)
	}
	res := s.Score(tesla)
	if res.Status != sdk.StatusScored || *res.Score != 0.33 || res.Dimensions["hallucination_free"] != 0.33 || res.Dimensions["hallucinated_share"] != 0.67 {
		t.Fatalf("%s %v %v (%s), want 0.33 free, 0.67 hallucinated", res.Status, res.Value(), res.Dimensions, res.Reason)
	}
	if *res.Passed {
		t.Errorf("passed at 0.33 free: the threshold (0.5) must read hallucination_free")
	}
	want := `1 of 3 claims grounded in the passages (hallucinated share 0.67: 1 contradicted, 1 unsupported); ` +
		`contradicted: "Tesla was founded by Elon Musk" (passages 1, 2); unsupported: "Tesla is the most innovative car maker"`
	if res.Reason != want || calls.Load() != 1 {
		t.Errorf("reason %q after %d calls, want %q after 1", res.Reason, calls.Load(), want)
	}
}

// TestDeepEval: one verdict per passage, every passage answered once by id, or failed
// naming what is missing.
func TestDeepEval(t *testing.T) {
	for _, tc := range []struct {
		name, reply string
		status      sdk.Status
		score       float64
		says        string
	}{
		{"one of two contradicted", `{"passages": [{"id": "2", "verdict": "agrees", "reason": "r"}, {"id": "1", "verdict": "contradicts", "reason": "Musk did not found it."}]}`,
			sdk.StatusScored, 0.5, "the output agrees with 1 of 2 passages (hallucinated share 0.5; deepeval method); it contradicts passage 1"},
		{"a passage missing", `{"passages": [{"id": "1", "verdict": "agrees", "reason": "r"}]}`, sdk.StatusFailed, 0, "no verdict for passage 2"},
		{"a passage the run lacks", `{"passages": [{"id": "1", "verdict": "agrees", "reason": "r"}, {"id": "2", "verdict": "agrees", "reason": "r"}, {"id": "9", "verdict": "agrees", "reason": "r"}]}`,
			sdk.StatusFailed, 0, "passages the run does not have (9)"},
		{"another verdict", `{"passages": [{"id": "1", "verdict": "unsure", "reason": "r"}, {"id": "2", "verdict": "agrees", "reason": "r"}]}`,
			sdk.StatusFailed, 0, `passage 1: verdict "unsure" is not agrees or contradicts`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			s := scorertest.New(t, hallucination.New, scorertest.WithJudge(judge(tc.reply, &calls)), scorertest.WithConfig(`{"method": "deepeval"}`))
			res := s.Score(tesla)
			if res.Status != tc.status || calls.Load() != 1 || !strings.Contains(res.Reason, tc.says) {
				t.Fatalf("%s %v after %d calls (%s), want %s saying %q", res.Status, res.Value(), calls.Load(), res.Reason, tc.status, tc.says)
			}
			if tc.status == sdk.StatusScored && (*res.Score != tc.score || res.Dimensions["hallucinated_share"] != 1-tc.score) {
				t.Errorf("%v %v, want %v", res.Value(), res.Dimensions, tc.score)
			}
		})
	}
}

// TestEdges: the statuses faithfulness has, here too.
func TestEdges(t *testing.T) {
	noContext := tesla
	noContext.Context = nil
	empty := tesla
	empty.Output = " "
	for _, tc := range []struct {
		name   string
		run    sdk.Run
		reply  string
		calls  int32
		status sdk.Status
		flag   string
	}{
		{"no passages", noContext, `{"claims": []}`, 0, sdk.StatusSkipped, ""},
		{"empty output", empty, `{"claims": []}`, 0, sdk.StatusSkipped, "no_claims"},
		{"no claims", tesla, `{"claims": []}`, 1, sdk.StatusSkipped, "no_claims"},
		{"Mastra's yes", tesla, `{"claims": [{"claim": "x", "verdict": "yes", "passages": [], "reason": "r"}]}`, 1, sdk.StatusFailed, ""},
		{"truncated", tesla, `{"claims": [{"claim": "Tesla was founded in 2003", "verdict": "grou`, 1, sdk.StatusFailed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			res := scorertest.New(t, hallucination.New, scorertest.WithJudge(judge(tc.reply, &calls))).Score(tc.run)
			if res.Status != tc.status || calls.Load() != tc.calls || (tc.flag != "" && !res.HasFlag(tc.flag)) {
				t.Errorf("%s %v after %d calls (%s), want %s %q after %d", res.Status, res.Flags, calls.Load(), res.Reason, tc.status, tc.flag, tc.calls)
			}
		})
	}
}

// TestMastraParity feeds the verdicts Mastra's judge recorded on Mastra's own cases
// (testdata/mastra-grounding/hallucination.json) to the scorer: 1 - its score, rounded as
// Mastra rounds, is Mastra's recorded hallucination score on every case it scores, and
// within the test's tolerance of the asserted one; an empty output and an empty context
// are skipped by design.
func TestMastraParity(t *testing.T) {
	dir, err := corpus.Dir()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := corpus.LoadMastraGrounding(dir, "hallucination")
	if err != nil {
		t.Fatal(err)
	}
	differs := map[string]string{"hallucination-04": "no_claims", "hallucination-06": ""}
	compared, asserted := 0, 0
	for _, c := range cases {
		t.Run(c.ID, func(t *testing.T) {
			rec, err := c.Claims()
			if err != nil || rec == nil || rec.Score == nil {
				t.Fatalf("case without a recorded score (%v)", err)
			}
			verdicts := make([]string, len(rec.Verdicts))
			for i, v := range rec.Verdicts {
				verdicts[i] = map[string]string{"no": "grounded", "yes": "unsupported"}[v.Verdict]
			}
			answer, _, err := groundingtest.Answer("hallucination_free", c)
			if err != nil {
				t.Fatal(err)
			}
			var calls atomic.Int32
			res := scorertest.New(t, hallucination.New, scorertest.WithJudge(judge(answer, &calls))).Score(*c.Run)
			if flag, ok := differs[c.ID]; ok {
				if res.Status != sdk.StatusSkipped || calls.Load() != 0 || (flag != "" && !res.HasFlag(flag)) {
					t.Errorf("%s (%v) after %d calls, want skipped without a call (Mastra scores %v hallucinated)", res.Status, res.Flags, calls.Load(), *rec.Score)
				}
				return
			}
			free, _ := hallucination.Formula(hallucination.MethodMastra, verdicts)
			if got := relevancy.RoundMastra(1 - free); got != *rec.Score {
				t.Errorf("1 - formula = %v rounds to %v, Mastra recorded %v", 1-free, got, *rec.Score)
			}
			if res.Status != sdk.StatusScored || res.Dimensions["hallucinated_share"] != *rec.Score || math.Abs(*res.Score-(1-*rec.Score)) > 1e-9 {
				t.Errorf("scorer %s %v %v (%s), Mastra recorded %v hallucinated", res.Status, res.Value(), res.Dimensions, res.Reason, *rec.Score)
			}
			compared++
			if e := c.Mastra.Expected; e.Kind == "scorer" {
				asserted++
				if math.Abs(res.Dimensions["hallucinated_share"]-*e.Score) > e.AbsTolerance+1e-9 {
					t.Errorf("hallucinated %v, Mastra's test asserts %s", res.Dimensions["hallucinated_share"], e.Assert)
				}
			}
		})
	}
	if compared != 16 || asserted != 15 {
		t.Errorf("%d cases compared, %d with an assertion; want 16 and 15 (18 less the two skipped; case 18 asserts nothing)", compared, asserted)
	}
}

// TestSchema: the answer schema sent for structured output lists the three verdicts.
func TestSchema(t *testing.T) {
	var req sdk.CompletionRequest
	j := scorertest.JudgeFunc(func(_ context.Context, r sdk.CompletionRequest) (string, error) {
		req = r
		return `{"claims": []}`, nil
	})
	scorertest.New(t, hallucination.New, scorertest.WithJudge(j)).Score(tesla)
	var schema struct {
		Properties struct {
			Claims struct {
				Items struct {
					Properties struct {
						Verdict struct {
							Enum []string `json:"enum"`
						} `json:"verdict"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"claims"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(req.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(schema.Properties.Claims.Items.Properties.Verdict.Enum, ","); got != "grounded,contradicted,unsupported" {
		t.Errorf("verdict enum %s", got)
	}
}
