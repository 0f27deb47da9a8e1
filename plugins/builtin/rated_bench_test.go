package builtin_test

import (
	"context"
	"encoding/json"
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
	quiet := host.WithLogger(slog.New(slog.DiscardHandler))
	for _, name := range []string{"context_relevance", "answer_similarity", "noise_robustness"} {
		b.Run(name, func(b *testing.B) {
			rules, answered, err := groundingtest.Rules(dir, name)
			if err != nil {
				b.Fatal(err)
			}
			// The runs, and Mastra's recorded cost of the same cases.
			var runs []sdk.Run
			var mCalls, mPrompt, mCompletion, recorded float64
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
				if len(rec.Calls) == 0 {
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
			var calls, words, promptBytes, answerBytes float64
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
					if res := s.Score(context.Background(), run); res.Status != sdk.StatusScored {
						b.Fatalf("%s: %s %s", run.ID, res.Status, res.Reason)
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
			b.ReportMetric(float64(len(runs)), "runs")
			b.ReportMetric(calls/n, "calls/run")
			b.ReportMetric(promptBytes/4/n, "prompt_tokens_est/run")
			b.ReportMetric(answerBytes/4/n, "completion_tokens_est/run")
			b.ReportMetric(words/n, "prompt_words/run")
			if recorded > 0 {
				b.ReportMetric(mCalls/recorded, "mastra_calls/run")
				b.ReportMetric(mPrompt/recorded, "mastra_prompt_tokens/run")
				b.ReportMetric(mCompletion/recorded, "mastra_completion_tokens/run")
			}
		})
	}
}
