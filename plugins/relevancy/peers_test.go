package relevancy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/plugins/relevancy"
	"github.com/scorekit/scorekit/sdk"
)

// fixturesPath is Mastra's answer-relevancy test cases with the verdicts gpt-4o gave,
// from the repository's reference data (see testdata/README.md).
const fixturesPath = "../../testdata/mastra/fixtures.json"

type mastraCase struct {
	Input              string   `json:"input"`
	Output             string   `json:"output"`
	ExpectedScore      float64  `json:"expected_score"`
	RecordedStatements []string `json:"recorded_statements"`
	RecordedResults    []string `json:"recorded_results"`
	RecordedScore      *float64 `json:"recorded_score"`
	Note               string   `json:"note"`
}

func loadMastra(t *testing.T) []mastraCase {
	t.Helper()
	b, err := os.ReadFile(fixturesPath)
	if err != nil {
		t.Fatalf("read Mastra fixtures: %v; the shared reference data must sit beside the repository at %s", err, fixturesPath)
	}
	var f struct {
		AnswerRelevancy struct {
			Cases []mastraCase `json:"cases"`
		} `json:"answer_relevancy"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.AnswerRelevancy.Cases
}

// TestStatementsModeReproducesMastra replays the recorded statements and verdicts through
// the test server and the broker, and checks the score against the one Mastra's code
// computed from them (recorded_score). One fixture ("The weather is nice today.") has no
// recording, because no Mastra test exercises it, so there is nothing to replay. Where
// the Mastra test's own expectation differs from its recorded score (0.43 vs 0.65: that
// test asserts only isCloserTo(score, 0.43, 0)), the recorded score is Mastra's output.
func TestStatementsModeReproducesMastra(t *testing.T) {
	cases := loadMastra(t)
	replayed := 0
	for i, c := range cases {
		if c.RecordedScore == nil {
			if !strings.Contains(c.Note, "no recording") {
				t.Errorf("case %d has no recorded score and no note saying why", i)
			}
			continue
		}
		replayed++
		t.Run(fmt.Sprintf("%d %.30s", i, c.Output), func(t *testing.T) {
			stmts, _ := json.Marshal(map[string]any{"statements": c.RecordedStatements})
			results := make([]map[string]string, len(c.RecordedResults))
			for k, r := range c.RecordedResults {
				results[k] = map[string]string{"result": r, "reason": "recorded"}
			}
			verdicts, _ := json.Marshal(map[string]any{"results": results})
			srv := judgetest.New(
				judgetest.Rule{Match: "Break the text below", Reply: string(stmts)},
				judgetest.Rule{Match: "Judge how relevant", Reply: string(verdicts)},
				judgetest.Rule{Match: "Explain the relevancy", Reply: fmt.Sprintf("The score is %v because of the recorded verdicts.", *c.RecordedScore)},
			)
			defer srv.Close()
			_, s := setup(t, srv, `{"mode": "statements"}`, nil)
			res := s.Score(context.Background(), sdk.Run{Input: c.Input, Output: c.Output})
			if res.Status != sdk.StatusScored {
				t.Fatalf("%s: %v", res.Status, res.Error)
			}
			if got := relevancy.RoundMastra(*res.Score); math.Abs(got-*c.RecordedScore) > 1e-9 {
				t.Fatalf("score %v, Mastra %v (verdicts %v)", got, *c.RecordedScore, c.RecordedResults)
			}
			wantCalls := 3
			if strings.TrimSpace(c.Output) == "" {
				wantCalls = 0 // an empty output is 0 without asking, as Mastra's empty statement list is
			}
			if srv.Calls() != wantCalls {
				t.Fatalf("%d judge calls, want %d", srv.Calls(), wantCalls)
			}
			if wantCalls == 3 {
				names := []string{}
				for _, st := range res.Steps {
					names = append(names, st.Name)
				}
				if strings.Join(names, ",") != "preprocess,analyze,generateScore,generateReason" || !strings.HasPrefix(res.Reason, "The score is") {
					t.Fatalf("steps %v, reason %q", names, res.Reason)
				}
			}
		})
	}
	if replayed != 9 {
		t.Fatalf("replayed %d Mastra cases, want 9 of %d", replayed, len(cases))
	}
}

func TestStatementScoreAndRounding(t *testing.T) {
	tests := []struct {
		name    string
		results []string
		weight  float64
		want    float64
	}{
		{"all yes", []string{"yes", "Yes "}, 0.3, 1},
		{"yes and unsure", []string{"yes", "unsure"}, 0.3, 0.65},
		{"one third", []string{"yes", "no", "no"}, 0.3, 0.33},
		{"unknown labels count as no", []string{"maybe", "yes"}, 0.3, 0.5},
		{"no verdicts", nil, 0.3, 0},
		{"weight 0", []string{"unsure"}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := relevancy.RoundMastra(relevancy.StatementScore(tt.results, tt.weight)); got != tt.want {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
	// Mastra's rounding nudges by Number.EPSILON: 1.005 -> 1.01.
	if got := relevancy.RoundMastra(1.005); got != 1.01 {
		t.Fatalf("RoundMastra(1.005) = %v", got)
	}
}

// negativeWord finds a word whose test-server embedding points away from text's (the
// signed hashing puts both in one bucket with opposite signs).
func negativeWord(t *testing.T, text string) string {
	t.Helper()
	a := judgetest.Embed(text)
	for i := range 100000 {
		w := fmt.Sprintf("w%d", i)
		b := judgetest.Embed(w)
		var dot float64
		for k := range a {
			dot += float64(a[k] * b[k])
		}
		if dot < -0.1 {
			return w
		}
	}
	t.Fatal("no word with a negative cosine found")
	return ""
}

func TestQuestionsMode(t *testing.T) {
	const input = "capital"
	neg := negativeWord(t, input)
	q := func(question string, nc int) judgetest.Rule {
		return judgetest.Rule{Reply: fmt.Sprintf(`{"question": %q, "noncommittal": %d}`, question, nc), Times: 1}
	}
	tests := []struct {
		name      string
		rules     []judgetest.Rule
		want      float64
		wantFlag  string
		wantError string
	}{
		{"questions that restate the input", []judgetest.Rule{q(input, 0), q(input, 0), q(input, 0)}, 1, "", ""},
		{"negative cosine counts as zero", []judgetest.Rule{q(input, 0), q(neg, 0), q(input, 0)}, 2.0 / 3, "", ""},
		{"all noncommittal scores zero", []judgetest.Rule{q(input, 1), q(input, 1), q(input, 1)}, 0, relevancy.FlagNoncommittal, ""},
		{"some noncommittal keeps the mean", []judgetest.Rule{q(input, 1), q(input, 0), q(input, 0)}, 1, relevancy.FlagPartlyNoncommittal, ""},
		{"no question generated fails", []judgetest.Rule{q("", 0), q("", 0), q("", 0)}, 0, "", "no question"},
		{"embeddings down fails", []judgetest.Rule{q(input, 0), q(input, 0), q(input, 0), {Embeddings: true, Status: 400}}, 0, "", "HTTP 400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := judgetest.New(tt.rules...)
			defer srv.Close()
			_, s := setup(t, srv, `{"mode": "questions"}`, nil)
			res := s.Score(context.Background(), sdk.Run{Input: input, Output: "Paris is the capital of France."})
			if tt.wantError != "" {
				if res.Status != sdk.StatusFailed || !strings.Contains(res.Error.Message, tt.wantError) {
					t.Fatalf("result = %s %v, want failed with %q", res.Status, res.Error, tt.wantError)
				}
				return
			}
			if res.Status != sdk.StatusScored || math.Abs(*res.Score-math.Round(tt.want*100)/100) > 1e-9 {
				t.Fatalf("result = %s %v (%v), want %v", res.Status, res.Score, res.Error, tt.want)
			}
			if tt.wantFlag != "" && !res.HasFlag(tt.wantFlag) {
				t.Fatalf("flags = %v, want %s", res.Flags, tt.wantFlag)
			}
			if srv.Calls() != 4 {
				t.Fatalf("%d calls, want 3 generations and 1 embeddings request", srv.Calls())
			}
		})
	}
}

func TestQuestionsModeNeedsAnEmbeddingModel(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"question": "q", "noncommittal": 0}`})
	defer srv.Close()
	s := open(t, `{"mode": "questions", "questions": 1}`, withBroker(t, srv))
	res := s.Score(context.Background(), paris)
	if res.Status != sdk.StatusFailed || !strings.Contains(res.Error.Message, "embedding model") {
		t.Fatalf("result = %s %v", res.Status, res.Error)
	}
}
