package builtin_test

import (
	"encoding/json"
	"testing"

	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/grounding/groundingtest"
	"github.com/scorekit/scorekit/sdk"
)

// BenchmarkRatedCost reports the judge calls and tokens per run of context_relevance,
// answer_similarity and noise_robustness on Mastra's own cases (testdata/mastra-grounding),
// the test judge answering with what groundingtest builds from Mastra's recordings, beside
// what Mastra's scorers spent on the same cases as its recordings hold (recorded.calls).
// Where Mastra recorded the case (context relevance 03-04, answer similarity 01-10 and 14)
// both sides are measured on those cases; noise sensitivity has no recording (Mastra's code
// makes 2 calls), so scorekit's side is measured on every case the set answers. Each
// iteration scores the runs through the host and a new broker, so nothing comes from the
// cache. Tokens are estimated as bytes / 4 of the messages sent and the answers returned
// (the test judge counts words, also reported); Mastra's are gpt-4o-mini's own counts.
//
//	go test -run '^$' -bench RatedCost -benchtime 20x ./plugins/builtin
func BenchmarkRatedCost(b *testing.B) {
	dir, err := corpus.Dir()
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"context_relevance", "answer_similarity", "noise_robustness"} {
		b.Run(name, func(b *testing.B) {
			rules, answered, err := groundingtest.Rules(dir, name)
			if err != nil {
				b.Fatal(err)
			}
			// The runs, and Mastra's recorded cost of the same cases.
			var runs []sdk.Run
			var mastra mastraCost
			for _, c := range answered {
				var rec struct {
					Calls []corpus.MastraCall `json:"calls"`
				}
				if len(c.Recorded) > 0 && string(c.Recorded) != "null" {
					if err := json.Unmarshal(c.Recorded, &rec); err != nil {
						b.Fatal(err)
					}
				}
				if name != "noise_robustness" && len(rec.Calls) == 0 {
					continue
				}
				runs = append(runs, *c.Run)
				mastra.add(rec.Calls)
			}
			benchJudgeCost(b, name, rules, runs, mastra, false)
		})
	}
}
