package builtin_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/grounding/groundingtest"
	"github.com/scorekit/scorekit/internal/judgetest"
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
	quiet := host.WithLogger(slog.New(slog.DiscardHandler))
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
			var mCalls, mPrompt, mCompletion, recorded float64
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
				if rec == nil {
					continue
				}
				recorded++
				for _, call := range rec.Calls {
					mCalls++
					mPrompt += float64(call.PromptTokens)
					mCompletion += float64(call.CompletionTokens)
				}
			}
			p, ok := nativeBuiltin(name)
			if !ok {
				b.Fatalf("%s is not built in", name)
			}
			reg := host.NewRegistry()
			if err := reg.Register(p, false); err != nil {
				b.Fatal(err)
			}
			srv := judgetest.New(rules...)
			defer srv.Close()
			var calls, words, promptBytes, answerBytes, scored float64
			b.ResetTimer()
			for range b.N {
				br, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge", MaxRetries: -1})
				if err != nil {
					b.Fatal(err)
				}
				s, err := host.New(reg, quiet, host.WithJudge(br)).Open(context.Background(), name, host.OpenOptions{})
				if err != nil {
					b.Fatal(err)
				}
				before := len(srv.Requests())
				for _, run := range runs {
					res := s.Score(context.Background(), run)
					switch res.Status {
					case sdk.StatusScored:
						scored++
					case sdk.StatusFailed:
						b.Fatalf("%s: %s", run.ID, res.Reason)
					}
				}
				for _, r := range srv.Requests()[before:] {
					for _, m := range r.Messages {
						promptBytes += float64(len(m.Content))
					}
					for _, rule := range rules {
						if strings.Contains(r.LastUser(), rule.Match) {
							answerBytes += float64(len(rule.Reply))
							break
						}
					}
				}
				u := br.Usage(broker.DefaultTenant)
				calls += float64(u.Calls)
				words += float64(u.PromptTokens)
				s.Close(context.Background())
				br.Close()
			}
			b.StopTimer()
			n := float64(b.N * len(runs))
			b.ReportMetric(calls/n, "calls/run")
			b.ReportMetric(promptBytes/4/n, "prompt_tokens_est/run")
			b.ReportMetric(answerBytes/4/n, "completion_tokens_est/run")
			b.ReportMetric(calls/scored, "calls/scored_run")
			b.ReportMetric(words/n, "prompt_words/run")
			if recorded > 0 {
				b.ReportMetric(mCalls/recorded, "mastra_calls/run")
				b.ReportMetric(mPrompt/recorded, "mastra_prompt_tokens/run")
				b.ReportMetric(mCompletion/recorded, "mastra_completion_tokens/run")
			}
		})
	}
}
