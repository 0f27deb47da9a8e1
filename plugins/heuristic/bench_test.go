package heuristic_test

import (
	"context"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// BenchmarkScorers runs each scorer through the native host pipeline on a typical
// question/answer run (a 30-word question, a 60-word answer, an expected answer).
func BenchmarkScorers(b *testing.B) {
	question := "Which city hosted the first modern Olympic Games, in what year did they take place, " +
		"and how many nations sent athletes to compete in the events?"
	answer := strings.Repeat("The first modern Olympic Games were held in Athens in 1896, with athletes from fourteen nations. ", 4)
	run := sdk.Run{Input: question, Output: answer, Expected: "Athens, 1896, fourteen nations"}
	for _, tc := range []struct {
		f   func() sdk.Scorer
		cfg string
		run sdk.Run
	}{
		{heuristic.NewCompleteness, "", run},
		{heuristic.NewContentSimilarity, "", run},
		{heuristic.NewKeywordCoverage, "", run},
		{heuristic.NewTextualDifference, "", run},
		{heuristic.NewTone, "", run},
		{heuristic.NewExactMatch, "", run},
		{heuristic.NewLevenshtein, "", run},
		{heuristic.NewNumericDiff, "", sdk.Run{Output: "1896", Expected: "1900"}},
		{heuristic.NewJSONValid, `{"schema": {"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}, "year": {"type": "integer"}}}}`,
			sdk.Run{Output: `{"city": "Athens", "year": 1896, "nations": 14}`}},
		{heuristic.NewListContains, "", sdk.Run{Output: `["Athens", "1896", "fourteen nations"]`, Expected: `["athens", "1896", "14 nations"]`}},
	} {
		name := tc.f().Info().Name
		b.Run(name, func(b *testing.B) {
			s, err := open(b, tc.f, tc.cfg)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if res := s.Score(ctx, tc.run); res.Status != sdk.StatusScored {
					b.Fatalf("%s: %s", res.Status, res.Reason)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
		})
	}
}
