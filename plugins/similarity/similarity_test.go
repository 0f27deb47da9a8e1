package similarity_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/plugins/similarity"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/scorertest"
)

var colours = sdk.Run{
	Input:    "What are the primary colours of paint?",
	Output:   "Red and blue, and also green.",
	Expected: "The primary colours of paint are red, yellow and blue.",
}

const colourAnswer = `{"expected_units": [
 {"unit": "red is a primary colour", "match": "exact", "output_unit": "Red", "note": "same"},
 {"unit": "yellow is a primary colour", "match": "missing", "output_unit": null, "note": "absent"},
 {"unit": "blue is a primary colour", "match": "semantic", "output_unit": "blue", "note": "same"}],
 "contradictions": [],
 "extra_output_units": ["green is a primary colour"]}`

func judgeWith(reply string, err error, prompts *[]sdk.CompletionRequest) scorertest.JudgeFunc {
	return func(_ context.Context, req sdk.CompletionRequest) (string, error) {
		if prompts != nil {
			*prompts = append(*prompts, req)
		}
		return reply, err
	}
}

func TestJudgeMethod(t *testing.T) {
	var reqs []sdk.CompletionRequest
	s := scorertest.New(t, similarity.New, scorertest.WithJudge(judgeWith(colourAnswer, nil, &reqs)))
	res := s.Score(colours)
	// (1.2 + 0.8 - 0.15) / 3.6 - 0.05 = 0.4639
	if res.Status != sdk.StatusScored || *res.Score != 0.46 {
		t.Fatalf("%s %v %v", res.Status, res.Value(), res.Error)
	}
	for _, want := range []string{"3 reference units: 1 exact, 1 semantic, 1 missing", `missing "yellow is a primary colour"`, "1 extra output units (-0.05)", "score 0.46"} {
		if !strings.Contains(res.Reason, want) {
			t.Errorf("reason %q lacks %q", res.Reason, want)
		}
	}
	if len(reqs) != 1 || res.Telemetry.JudgeCalls != 1 {
		t.Fatalf("%d judge calls, want 1", len(reqs))
	}
	p := reqs[0].Messages[1].Content
	for _, want := range []string{"<reference>\nThe primary colours of paint are red, yellow and blue.\n</reference>", "<output>\nRed and blue, and also green.\n</output>"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if strings.Index(p, "Example 1.") > strings.Index(p, "<reference>") {
		t.Error("the run comes before the constant instructions")
	}
	if !strings.Contains(string(reqs[0].Schema), `"enum":["exact","semantic","partial","missing"]`) {
		t.Errorf("schema %s", reqs[0].Schema)
	}
	if len(res.Steps) != 2 || !strings.Contains(string(res.Steps[0].Output), `"match":"missing"`) || res.Steps[1].Name != "score" {
		t.Errorf("steps %+v", res.Steps)
	}
}

func TestJudgeAnswersThatFail(t *testing.T) {
	tests := []struct{ name, reply, want string }{
		{"no units", `{"expected_units": [], "contradictions": [], "extra_output_units": []}`, "no unit in the reference"},
		{"no units array", `{"matches": []}`, `no "expected_units" array`},
		{"unknown match", `{"expected_units": [{"unit": "red", "match": "close", "output_unit": "red", "note": ""}], "contradictions": [], "extra_output_units": []}`, `match close is not one of`},
		{"empty unit", `{"expected_units": [{"unit": " ", "match": "exact", "output_unit": "red", "note": ""}], "contradictions": [], "extra_output_units": []}`, "unit 1 of the judge's answer is empty"},
		{"prose", "They are quite similar.", "no JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := scorertest.New(t, similarity.New, scorertest.WithJudge(judgeWith(tt.reply, nil, nil))).Score(colours)
			if res.Status != sdk.StatusFailed || res.Error.Code != sdk.CodeJudgeError || !strings.Contains(res.Error.Message, tt.want) {
				t.Fatalf("%s %v, want judge_error naming %q", res.Status, res.Error, tt.want)
			}
		})
	}
	res := scorertest.New(t, similarity.New, scorertest.WithJudge(judgeWith("", &sdk.Error{Code: sdk.CodeLimitExceeded, Message: "token budget spent"}, nil))).Score(colours)
	if res.Status != sdk.StatusFailed || res.Error.Code != sdk.CodeLimitExceeded {
		t.Fatalf("%s %v", res.Status, res.Error)
	}
}

func TestEdges(t *testing.T) {
	with := func(f func(*sdk.Run)) sdk.Run {
		r := colours
		f(&r)
		return r
	}
	tests := []struct {
		name   string
		run    sdk.Run
		judge  bool
		status sdk.Status
		score  float64
		flag   string
		want   string
	}{
		{"no reference", with(func(r *sdk.Run) { r.Expected = "" }), true, sdk.StatusSkipped, 0, "", "record the reference answer in run.expected"},
		{"blank reference", with(func(r *sdk.Run) { r.Expected = " \n " }), true, sdk.StatusSkipped, 0, "", "record the reference answer in run.expected"},
		{"tool-only turn", with(func(r *sdk.Run) {
			r.Output = ""
			r.ToolCalls = []sdk.ToolCall{{Name: "paint", Result: "ok"}}
		}), true, sdk.StatusSkipped, 0, "", "only output is its tool calls"},
		{"empty output", with(func(r *sdk.Run) { r.Output = "" }), true, sdk.StatusScored, 0, similarity.FlagEmptyOutput, "says none of what the reference says"},
		{"an error in place of an answer", with(func(r *sdk.Run) { r.Output = "Error: 503 Service Unavailable" }), true, sdk.StatusScored, 0, similarity.FlagErrorText, "no judge call was made"},
		{"no judge", colours, false, sdk.StatusSkipped, 0, "", "needs an LLM judge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reqs []sdk.CompletionRequest
			var opts []scorertest.Option
			if tt.judge {
				opts = append(opts, scorertest.WithJudge(judgeWith(colourAnswer, nil, &reqs)))
			}
			res := scorertest.New(t, similarity.New, opts...).Score(tt.run)
			if res.Status != tt.status || (tt.status == sdk.StatusScored && *res.Score != tt.score) || !strings.Contains(res.Reason, tt.want) {
				t.Fatalf("%s %v %q, want %s %v naming %q", res.Status, res.Value(), res.Reason, tt.status, tt.score, tt.want)
			}
			if tt.flag != "" && !res.HasFlag(tt.flag) {
				t.Errorf("flags %v, want %s", res.Flags, tt.flag)
			}
			if len(reqs) != 0 {
				t.Errorf("%d judge calls, want none", len(reqs))
			}
		})
	}
}

// TestEmbeddingsMethod runs the embeddings method through the host's broker against the
// test server, whose vectors are a hashed bag of words: texts that share words have a
// positive cosine.
func TestEmbeddingsMethod(t *testing.T) {
	srv := judgetest.New()
	defer srv.Close()
	b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge", EmbeddingModel: "embed", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	want := cos(judgetest.Embed(colours.Expected), judgetest.Embed(colours.Output))
	res := scorertest.New(t, similarity.New, scorertest.WithJudge(b), scorertest.WithConfig(`{"method": "embeddings"}`)).Score(colours)
	if res.Status != sdk.StatusScored || math.Abs(*res.Score-math.Round(want*100)/100) > 1e-9 || want <= 0 {
		t.Fatalf("%s %v %v, want the cosine %v", res.Status, res.Value(), res.Error, want)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || len(reqs[0].Input) != 2 || reqs[0].Input[0] != colours.Expected {
		t.Fatalf("requests %+v, want one embeddings request with the reference and the output", reqs)
	}
	for _, tt := range []struct {
		threshold string
		score     float64
	}{{"0.1", 1}, {"0.99", 0}} {
		res := scorertest.New(t, similarity.New, scorertest.WithJudge(b), scorertest.WithConfig(`{"method": "embeddings", "threshold": `+tt.threshold+`}`)).Score(colours)
		if res.Status != sdk.StatusScored || *res.Score != tt.score || !strings.Contains(res.Reason, "threshold "+tt.threshold) {
			t.Fatalf("threshold %s: %s %v %q", tt.threshold, res.Status, res.Value(), res.Reason)
		}
	}

	// A judge without an embeddings model: skipped, saying how to configure one.
	nb, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer nb.Close()
	res = scorertest.New(t, similarity.New, scorertest.WithJudge(nb), scorertest.WithConfig(`{"method": "embeddings"}`)).Score(colours)
	if res.Status != sdk.StatusSkipped || !strings.Contains(res.Reason, "judge.embedding_model") {
		t.Fatalf("no embedding model: %s %q", res.Status, res.Reason)
	}
	if !strings.Contains(broker.ErrNoEmbeddingModel.Error(), "no embedding model configured") {
		t.Fatalf("the broker's error %q no longer says what the scorer looks for", broker.ErrNoEmbeddingModel)
	}

	// An embeddings endpoint that fails: failed with its code, never 0.
	bad := judgetest.New(judgetest.Rule{Embeddings: true, Status: 500})
	defer bad.Close()
	eb, err := broker.New(broker.Config{BaseURL: bad.URL(), Model: "judge", EmbeddingModel: "embed", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer eb.Close()
	res = scorertest.New(t, similarity.New, scorertest.WithJudge(eb), scorertest.WithConfig(`{"method": "embeddings"}`)).Score(colours)
	if res.Status != sdk.StatusFailed || !strings.Contains(res.Reason, "embeddings") {
		t.Fatalf("failing endpoint: %s %q", res.Status, res.Reason)
	}
}

// vectors is a judge whose embeddings are fixed.
type vectors [][]float32

func (v vectors) Complete(context.Context, []sdk.CompletionRequest) ([]sdk.CompletionResponse, error) {
	return nil, errors.New("no completions here")
}

func (v vectors) Embed(context.Context, []string) ([][]float32, error) { return v, nil }

func TestEmbeddingsEdges(t *testing.T) {
	tests := []struct {
		name   string
		v      vectors
		status sdk.Status
		score  float64
		flag   string
	}{
		{"same direction", vectors{{1, 2}, {2, 4}}, sdk.StatusScored, 1, ""},
		{"orthogonal", vectors{{1, 0}, {0, 1}}, sdk.StatusScored, 0, ""},
		{"opposite counts 0", vectors{{1, 0}, {-1, 0.1}}, sdk.StatusScored, 0, similarity.FlagNegativeCosine},
		{"a zero vector", vectors{{0, 0}, {1, 0}}, sdk.StatusFailed, 0, ""},
		{"one vector for two texts", vectors{{1, 0}}, sdk.StatusFailed, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := scorertest.New(t, similarity.New, scorertest.WithJudge(tt.v), scorertest.WithConfig(`{"method": "embeddings"}`)).Score(colours)
			if res.Status != tt.status || (tt.status == sdk.StatusScored && *res.Score != tt.score) {
				t.Fatalf("%s %v %v", res.Status, res.Value(), res.Error)
			}
			if tt.flag != "" && !res.HasFlag(tt.flag) {
				t.Errorf("flags %v, want %s", res.Flags, tt.flag)
			}
		})
	}
}

func TestConfig(t *testing.T) {
	for _, bad := range []string{`{"method": "ragas"}`, `{"contradiction_penalty": 3}`, `{"threshold": 2}`, `{"scale": 10}`} {
		if _, err := scorertest.Open(similarity.New, scorertest.WithConfig(bad)); err == nil {
			t.Errorf("config %s accepted", bad)
		}
	}
	res := scorertest.New(t, similarity.New, scorertest.WithJudge(judgeWith(colourAnswer, nil, nil)),
		scorertest.WithConfig(`{"missing_penalty": 0, "extra_info_penalty": 0}`)).Score(colours)
	if res.Status != sdk.StatusScored || *res.Score != 0.56 {
		t.Fatalf("%s %v", res.Status, res.Value())
	}
}

func cos(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}
