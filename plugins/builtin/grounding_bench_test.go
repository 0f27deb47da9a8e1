package builtin_test

import (
	"testing"

	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/grounding/groundingtest"
	"github.com/scorekit/scorekit/sdk"
)

// BenchmarkGroundingCost reports the judge calls and tokens per run of faithfulness,
// hallucination_free and context_recall on Mastra's own cases (testdata/mastra-grounding),
// the test judge answering with Mastra's recorded verdicts, beside what Mastra's scorers
// spent on the same cases as its recordings hold (recorded.calls; context recall has no
// recording, Mastra's code makes 3 calls). Each iteration scores every case through the
// host and a new broker, so nothing comes from the cache. Tokens are estimated as bytes /
// 4 of the messages sent and the answers returned (the test judge counts words); Mastra's
// are gpt-4o's own counts. A call the recorder replayed has no token count and adds none.
//
//	go test -run '^$' -bench GroundingCost -benchtime 20x ./plugins/builtin
func BenchmarkGroundingCost(b *testing.B) {
	dir, err := corpus.Dir()
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"faithfulness", "hallucination_free", "context_recall"} {
		b.Run(name, func(b *testing.B) {
			rules, _, err := groundingtest.Rules(dir, name)
			if err != nil {
				b.Fatal(err)
			}
			cases, err := corpus.LoadMastraGrounding(dir, groundingtest.Files[name])
			if err != nil {
				b.Fatal(err)
			}
			// The cases with a run, and Mastra's recorded cost of them.
			var runs []sdk.Run
			var mastra mastraCost
			for _, c := range cases {
				if c.Run == nil {
					continue
				}
				if name == "context_recall" && c.Mastra.Expected.Kind != "mocked_run" {
					continue
				}
				runs = append(runs, *c.Run)
				rec, err := c.Claims()
				if err != nil {
					b.Fatal(err)
				}
				if rec != nil {
					mastra.add(rec.Calls)
				}
			}
			benchJudgeCost(b, name, rules, runs, mastra, true)
		})
	}
}
