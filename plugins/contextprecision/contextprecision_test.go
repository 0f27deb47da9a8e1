package contextprecision_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/plugins/contextprecision"
	"github.com/scorekit/scorekit/sdk"
)

// scriptJudge answers each request with reply(lastUserMessage, callNumber).
type scriptJudge struct {
	mu    sync.Mutex
	calls int
	reply func(prompt string, call int) string
	seen  []string
}

func (j *scriptJudge) Complete(_ context.Context, reqs []sdk.CompletionRequest) ([]sdk.CompletionResponse, error) {
	out := make([]sdk.CompletionResponse, len(reqs))
	for i, r := range reqs {
		j.mu.Lock()
		j.calls++
		n := j.calls
		p := r.Messages[len(r.Messages)-1].Content
		j.seen = append(j.seen, p)
		j.mu.Unlock()
		out[i] = sdk.CompletionResponse{Content: j.reply(p, n)}
	}
	return out, nil
}

func (j *scriptJudge) Embed(context.Context, []string) ([][]float32, error) {
	return nil, fmt.Errorf("embed not scripted")
}

// mastraVerdicts returns a judge-mode answer with the given verdicts in order.
func mastraVerdicts(vs ...string) string {
	type v struct {
		ContextIndex int    `json:"context_index"`
		Verdict      string `json:"verdict"`
		Reason       string `json:"reason"`
	}
	out := struct {
		Verdicts []v `json:"verdicts"`
	}{}
	for i, s := range vs {
		out.Verdicts = append(out.Verdicts, v{i, s, "scripted"})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

func open(t *testing.T, j sdk.Judge, config string, scale *float64) *host.Scorer {
	t.Helper()
	reg := host.NewRegistry()
	if err := reg.Register(host.Native(contextprecision.New), false); err != nil {
		t.Fatal(err)
	}
	var opts []host.Option
	if j != nil {
		opts = append(opts, host.WithJudge(j))
	}
	h := host.New(reg, opts...)
	var raw json.RawMessage
	if config != "" {
		raw = json.RawMessage(config)
	}
	s, err := h.Open(context.Background(), contextprecision.Name, host.OpenOptions{Config: raw, Scale: scale})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func passages(texts ...string) []sdk.Passage {
	out := make([]sdk.Passage, len(texts))
	for i, t := range texts {
		out[i] = sdk.Passage{Text: t}
	}
	return out
}

func ptr(f float64) *float64 { return &f }

// TestMastraFixtures replays the verdicts Mastra's tests record and expects Mastra's scores.
func TestMastraFixtures(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "mastra", "fixtures.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s (the repository's testdata/): %v", path, err)
	}
	var fx struct {
		ContextPrecision struct {
			Cases []struct {
				Query    string   `json:"query"`
				Context  []string `json:"context"`
				Verdicts []string `json:"verdicts"`
				Scale    *float64 `json:"scale"`
				Expected float64  `json:"expected_score"`
			} `json:"cases"`
		} `json:"context_precision"`
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	if len(fx.ContextPrecision.Cases) < 5 {
		t.Fatalf("want the 5 Mastra cases, got %d", len(fx.ContextPrecision.Cases))
	}
	for i, c := range fx.ContextPrecision.Cases {
		t.Run(fmt.Sprintf("case%d_%v", i, c.Verdicts), func(t *testing.T) {
			ctxs := c.Context
			for len(ctxs) < len(c.Verdicts) {
				ctxs = append(ctxs, fmt.Sprintf("passage %d", len(ctxs)+1))
			}
			j := &scriptJudge{reply: func(string, int) string { return mastraVerdicts(c.Verdicts...) }}
			s := open(t, j, "", c.Scale)
			res := s.Score(context.Background(), sdk.Run{Input: c.Query, Output: "an answer", Context: passages(ctxs...)})
			if res.Status != sdk.StatusScored {
				t.Fatalf("status %s: %+v", res.Status, res.Error)
			}
			if got := res.Value(); math.Abs(got-c.Expected) > 0.005 {
				t.Errorf("score %v, Mastra expects %v", got, c.Expected)
			}
			if j.calls != 1 {
				t.Errorf("judge mode made %d calls, want exactly 1", j.calls)
			}
		})
	}
}

// TestMAP checks the formula on hand-computed sequences.
func TestMAP(t *testing.T) {
	cases := []struct {
		name string
		v    []bool
		want float64
	}{
		{"empty", nil, 0},
		{"none relevant", []bool{false, false, false}, 0},
		{"all relevant", []bool{true, true, true}, 1},
		{"yes no yes no", []bool{true, false, true, false}, (1 + 2.0/3) / 2},
		{"relevant last", []bool{false, false, true}, 1.0 / 3},
		{"no yes yes", []bool{false, true, true}, (1.0/2 + 2.0/3) / 2},
		{"single relevant first of five", []bool{true, false, false, false, false}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := contextprecision.MAP(c.v); math.Abs(got-c.want) > 1e-12 {
				t.Errorf("MAP(%v) = %v, want %v", c.v, got, c.want)
			}
			// Ragas divides by relevant + 1e-10; after rounding to 2 decimals both agree.
			if got, ragas := round2(contextprecision.MAP(c.v)), round2(ragasAP(c.v)); got != ragas {
				t.Errorf("rounded MAP %v differs from Ragas' %v", got, ragas)
			}
		})
	}
}

func ragasAP(v []bool) float64 {
	var num, den float64
	for i := range v {
		if v[i] {
			den++
			k := 0.0
			for _, w := range v[:i+1] {
				if w {
					k++
				}
			}
			num += k / float64(i+1)
		}
	}
	return num / (den + 1e-10)
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// TestPerPassage checks the Ragas-style mode: one request per passage in one batch.
func TestPerPassage(t *testing.T) {
	ctxs := []string{"Paris is the capital of France.", "Cats purr.", "France's capital city is Paris.", "Coffee grows in Brazil."}
	j := &scriptJudge{reply: func(p string, _ int) string {
		passage := p[strings.LastIndex(p, "Context:"):]
		if strings.Contains(passage, "Paris") {
			return "```json\n{\"reason\": \"states the answer\", \"verdict\": 1}\n```"
		}
		return `{"reason": "unrelated", "verdict": 0}`
	}}
	s := open(t, j, `{"mode": "per_passage"}`, nil)
	res := s.Score(context.Background(), sdk.Run{Input: "What is the capital of France?", Output: "Paris", Expected: "Paris", Context: passages(ctxs...)})
	if res.Status != sdk.StatusScored {
		t.Fatalf("status %s: %+v", res.Status, res.Error)
	}
	if got, want := res.Value(), round2((1+2.0/3)/2); got != want {
		t.Errorf("score %v, want %v", got, want)
	}
	if j.calls != len(ctxs) {
		t.Errorf("%d judge requests, want one per passage (%d)", j.calls, len(ctxs))
	}
	if len(res.Steps) != len(ctxs) {
		t.Errorf("%d steps recorded, want %d", len(res.Steps), len(ctxs))
	}
	if res.HasFlag("reference_from_output") {
		t.Error("run has an expected answer, yet flagged reference_from_output")
	}
}

// TestSimilarity checks the non-LLM mode, which must work with no judge at all.
func TestSimilarity(t *testing.T) {
	cases := []struct {
		name     string
		run      sdk.Run
		config   string
		status   sdk.Status
		want     float64
		inReason string
	}{
		{
			name: "reference contexts from metadata",
			run: sdk.Run{Input: "q", Output: "a",
				Context:  passages("The Eiffel Tower is in Paris.", "Bananas are yellow.", "The Eiffel Tower is 330 metres tall."),
				Metadata: map[string]any{"reference_contexts": []any{"The Eiffel Tower is in Paris.", "The Eiffel Tower is 330 metres tall!"}}},
			status: sdk.StatusScored, want: round2((1 + 2.0/3) / 2), inReason: "metadata.reference_contexts",
		},
		{
			name:   "expected as the one reference",
			run:    sdk.Run{Input: "q", Output: "a", Expected: "Bananas are yellow.", Context: passages("Apples are red.", "Bananas are yellow.")},
			status: sdk.StatusScored, want: 0.5, inReason: "expected",
		},
		{
			name:   "threshold from config",
			run:    sdk.Run{Input: "q", Output: "a", Expected: "abcdefghij", Context: passages("abcdefxxxx")},
			config: `{"mode": "similarity", "threshold": 0.7}`,
			status: sdk.StatusScored, want: 0,
		},
		{
			name:   "no reference is skipped",
			run:    sdk.Run{Input: "q", Output: "a", Context: passages("x")},
			status: sdk.StatusSkipped, inReason: "reference passages",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.config
			if cfg == "" {
				cfg = `{"mode": "similarity"}`
			}
			s := open(t, nil, cfg, nil)
			res := s.Score(context.Background(), c.run)
			if res.Status != c.status {
				t.Fatalf("status %s, want %s (%s %+v)", res.Status, c.status, res.Reason, res.Error)
			}
			if c.status == sdk.StatusScored && res.Value() != c.want {
				t.Errorf("score %v, want %v", res.Value(), c.want)
			}
			if !strings.Contains(res.Reason, c.inReason) {
				t.Errorf("reason %q does not mention %q", res.Reason, c.inReason)
			}
		})
	}
}

func TestSimilarityFunction(t *testing.T) {
	cases := []struct {
		a, b string
		want float64
	}{
		{"", "", 1}, {"abc", "abc", 1}, {"abc", "", 0}, {"kitten", "sitting", 1 - 3.0/7}, {"ab", "ac", 0.5}, {"héllo", "hello", 0.8},
	}
	for _, c := range cases {
		if got := contextprecision.Similarity(c.a, c.b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Similarity(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestEdgeCases: statuses, not crashes or zeros.
func TestEdgeCases(t *testing.T) {
	three := passages("Paris is the capital of France.", "Cats purr.", "Paris is in France.")
	cases := []struct {
		name     string
		reply    func(string, int) string
		judge    bool
		config   string
		run      sdk.Run
		status   sdk.Status
		want     float64
		calls    int
		inReason string
		flag     string
	}{
		{
			name: "no context is skipped", judge: true,
			reply: func(string, int) string { return mastraVerdicts() },
			run:   sdk.Run{Input: "q", Output: "a"}, status: sdk.StatusSkipped, calls: 0, inReason: "no context",
		},
		{
			name: "no judge is skipped with how to configure one", judge: false,
			run: sdk.Run{Input: "q", Output: "a", Context: three}, status: sdk.StatusSkipped, inReason: "--judge-url",
		},
		{
			name: "too few verdicts then repaired", judge: true,
			reply: func(_ string, n int) string {
				if n == 1 {
					return mastraVerdicts("yes", "no")
				}
				return mastraVerdicts("yes", "no", "yes")
			},
			run: sdk.Run{Input: "q", Output: "a", Context: three}, status: sdk.StatusScored, want: 0.83, calls: 2,
		},
		{
			name: "too many verdicts twice fails naming the mismatch", judge: true,
			reply: func(string, int) string { return mastraVerdicts("yes", "no", "yes", "yes") },
			run:   sdk.Run{Input: "q", Output: "a", Context: three}, status: sdk.StatusFailed, calls: 2, inReason: "4 verdicts for 3 passages",
		},
		{
			name: "index out of range without repair fails at once", judge: true, config: `{"repair": false}`,
			reply: func(string, int) string {
				return `{"verdicts": [{"context_index": 0, "verdict": "yes"}, {"context_index": 1, "verdict": "no"}, {"context_index": 7, "verdict": "yes"}]}`
			},
			run: sdk.Run{Input: "q", Output: "a", Context: three}, status: sdk.StatusFailed, calls: 1, inReason: "context_index 7 out of range",
		},
		{
			name: "verdicts out of order are sorted by index", judge: true,
			reply: func(string, int) string {
				return `{"verdicts": [{"context_index": 2, "verdict": "yes"}, {"context_index": 0, "verdict": "yes"}, {"context_index": 1, "verdict": "no"}]}`
			},
			run: sdk.Run{Input: "q", Output: "a", Context: three}, status: sdk.StatusScored, want: 0.83, calls: 1, flag: "reference_from_output",
		},
		{
			name: "duplicate passages are reported", judge: true,
			reply: func(string, int) string { return mastraVerdicts("yes", "yes") },
			run:   sdk.Run{Input: "q", Output: "a", Expected: "e", Context: passages("Same  text.", "same text.")}, status: sdk.StatusScored, want: 1, calls: 1,
			flag: "duplicate_passages", inReason: "2 = 1",
		},
		{
			name: "judge prose is a failure, never 0", judge: true, config: `{"repair": false}`,
			reply: func(string, int) string { return "I think the passages are mostly fine." },
			run:   sdk.Run{Input: "q", Output: "a", Context: three}, status: sdk.StatusFailed, calls: 1, inReason: "unusable verdicts",
		},
		{
			name: "context from a metadata path", judge: true, config: `{"context_path": "retrieval.chunks"}`,
			reply: func(string, int) string { return mastraVerdicts("no", "yes") },
			run: sdk.Run{Input: "q", Output: "a", Metadata: map[string]any{"retrieval": map[string]any{
				"chunks": []any{"first", map[string]any{"id": "doc-9", "text": "second"}}}}},
			status: sdk.StatusScored, want: 0.5, calls: 1,
		},
		{
			name: "missing metadata path is skipped naming it", judge: true, config: `{"context_path": "retrieval.chunks"}`,
			reply: func(string, int) string { return mastraVerdicts() },
			run:   sdk.Run{Input: "q", Output: "a", Context: three}, status: sdk.StatusSkipped, calls: 0, inReason: "metadata.retrieval.chunks",
		},
		{
			name: "empty output as the reference is skipped without a call", judge: true,
			reply: func(string, int) string { return mastraVerdicts("yes", "no", "yes") },
			run:   sdk.Run{Input: "q", Output: " ", Context: three}, status: sdk.StatusSkipped, calls: 0, inReason: "the output is empty", flag: "empty_output",
		},
		{
			name: "an action-only turn as the reference is skipped without a call", judge: true,
			reply: func(string, int) string { return mastraVerdicts("yes", "no", "yes") },
			run: sdk.Run{Input: "Cancel my 3pm meeting", Context: three,
				ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "cancel_event", Arguments: `{"time":"15:00"}`, Result: `{"cancelled":true}`}}},
			status: sdk.StatusSkipped, calls: 0, inReason: "its only output is tool calls",
		},
		{
			name: "an error as the reference is skipped without a call", judge: true,
			reply: func(string, int) string { return mastraVerdicts("yes", "no", "yes") },
			run:   sdk.Run{Input: "What is the capital of France?", Output: "ERROR: upstream timeout", Context: three}, status: sdk.StatusSkipped, calls: 0,
			inReason: "the output is an error", flag: "error_text",
		},
		{
			name: "an error output with an expected answer still grades the retriever", judge: true,
			reply: func(string, int) string { return mastraVerdicts("yes", "no", "yes") },
			run:   sdk.Run{Input: "What is the capital of France?", Output: "ERROR: upstream timeout", Expected: "Paris", Context: three}, status: sdk.StatusScored,
			want: 0.83, calls: 1,
		},
		{
			name: "metadata path of the wrong type fails naming it", judge: true, config: `{"context_path": "retrieval"}`,
			reply: func(string, int) string { return mastraVerdicts() },
			run:   sdk.Run{Input: "q", Output: "a", Metadata: map[string]any{"retrieval": 42.0}}, status: sdk.StatusFailed, calls: 0, inReason: "metadata.retrieval",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var j *scriptJudge
			var sj sdk.Judge
			if c.judge {
				j = &scriptJudge{reply: c.reply}
				sj = j
			}
			s := open(t, sj, c.config, nil)
			res := s.Score(context.Background(), c.run)
			if res.Status != c.status {
				t.Fatalf("status %s, want %s (reason %q, error %+v)", res.Status, c.status, res.Reason, res.Error)
			}
			if c.status == sdk.StatusScored && res.Value() != c.want {
				t.Errorf("score %v, want %v", res.Value(), c.want)
			}
			if c.status != sdk.StatusScored && res.Score != nil {
				t.Errorf("%s result carries a score %v", res.Status, *res.Score)
			}
			if j != nil && j.calls != c.calls {
				t.Errorf("%d judge calls, want %d", j.calls, c.calls)
			}
			if !strings.Contains(res.Reason, c.inReason) {
				t.Errorf("reason %q does not mention %q", res.Reason, c.inReason)
			}
			if c.flag != "" && !res.HasFlag(c.flag) {
				t.Errorf("flags %v lack %q", res.Flags, c.flag)
			}
		})
	}
}

// TestPromptOrder: the judge reads the question before the reference and the passages.
func TestPromptOrder(t *testing.T) {
	j := &scriptJudge{reply: func(string, int) string { return mastraVerdicts("yes") }}
	s := open(t, j, "", nil)
	s.Score(context.Background(), sdk.Run{Input: "QUESTION-X", Output: "ANSWER-Y", Context: passages("PASSAGE-Z")})
	p := j.seen[0]
	q, a, z := strings.Index(p, "QUESTION-X"), strings.Index(p, "ANSWER-Y"), strings.Index(p, "PASSAGE-Z")
	if q < 0 || a < 0 || z < 0 || !(q < a && a < z) {
		t.Errorf("want question < answer < passage in the prompt, got %d %d %d:\n%s", q, a, z, p)
	}
}

func TestConfigRejected(t *testing.T) {
	reg := host.NewRegistry()
	if err := reg.Register(host.Native(contextprecision.New), false); err != nil {
		t.Fatal(err)
	}
	h := host.New(reg)
	_, err := h.Open(context.Background(), contextprecision.Name, host.OpenOptions{Config: json.RawMessage(`{"mode": "rerank"}`)})
	if err == nil || !strings.Contains(err.Error(), "mode") {
		t.Fatalf("want an error naming mode, got %v", err)
	}
}

func BenchmarkSimilarityMode(b *testing.B) {
	s := contextprecision.New()
	if err := s.(sdk.Configurer).Configure(json.RawMessage(`{"mode": "similarity"}`)); err != nil {
		b.Fatal(err)
	}
	run := sdk.Run{Input: "q", Output: "a", Expected: strings.Repeat("The Eiffel Tower is in Paris. ", 4),
		Context: passages(strings.Repeat("The Eiffel Tower is in Paris. ", 4), strings.Repeat("Bananas are yellow. ", 6), "Short one.")}
	run.NumberContext()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Score(context.Background(), sdk.Call{Run: run}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestThroughBroker runs both judge modes against the OpenAI-compatible test server through
// the real broker: Mastra's mode makes one call, Ragas' mode one per passage, and re-scoring
// costs nothing.
func TestThroughBroker(t *testing.T) {
	srv := judgetest.New(
		judgetest.Rule{Match: "Return exactly 3 verdicts", Reply: "Here you go:\n```json\n" + mastraVerdicts("yes", "no", "yes") + "\n```"},
		judgetest.Rule{Match: "Context:\nCats purr.", Reply: `{"reason": "unrelated", "verdict": "0"}`},
		judgetest.Rule{Match: "Context:\n", Reply: `{"reason": "useful", "verdict": 1}`},
	)
	defer srv.Close()
	b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	run := sdk.Run{Input: "What is the capital of France?", Output: "Paris", Context: passages("Paris is the capital of France.", "Cats purr.", "Paris is in France.")}
	for _, c := range []struct {
		mode  string
		calls int
	}{{"judge", 1}, {"per_passage", 3}} {
		t.Run(c.mode, func(t *testing.T) {
			s := open(t, b, `{"mode": "`+c.mode+`"}`, nil)
			before := srv.Calls()
			res := s.Score(context.Background(), run)
			if res.Status != sdk.StatusScored || res.Value() != 0.83 {
				t.Fatalf("got %s %v (%+v), want scored 0.83", res.Status, res.Value(), res.Error)
			}
			if got := srv.Calls() - before; got != c.calls {
				t.Errorf("%d calls reached the endpoint, want %d", got, c.calls)
			}
			again := s.Score(context.Background(), run)
			if again.Value() != res.Value() || srv.Calls()-before != c.calls {
				t.Errorf("re-scoring changed the score or reached the endpoint (%d calls)", srv.Calls()-before-c.calls)
			}
		})
	}
}
