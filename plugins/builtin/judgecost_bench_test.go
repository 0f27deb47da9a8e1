package builtin_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/sdk"
)

// mastraCost sums what Mastra's scorer spent on the cases it recorded.
type mastraCost struct {
	cases, calls, prompt, completion float64
}

// add counts one case's recorded calls; a case without any is not a recorded case.
func (m *mastraCost) add(calls []corpus.MastraCall) {
	if len(calls) == 0 {
		return
	}
	m.cases++
	for _, c := range calls {
		m.calls++
		m.prompt += float64(c.PromptTokens)
		m.completion += float64(c.CompletionTokens)
	}
}

// benchJudgeCost scores runs with the built-in name through the host and a new broker each
// iteration (so nothing comes from the cache), the test judge answering by rules, and
// reports the judge calls and tokens per run beside Mastra's recorded cost. Tokens are
// estimated as bytes / 4 of the messages sent and the answers returned (the test judge
// counts words, also reported). A failed result stops the benchmark; so does a skipped one
// unless skips are allowed.
func benchJudgeCost(b *testing.B, name string, rules []judgetest.Rule, runs []sdk.Run, mastra mastraCost, allowSkips bool) {
	p, ok := nativeBuiltin(name)
	if !ok {
		b.Fatalf("%s is not built in", name)
	}
	reg := host.NewRegistry()
	if err := reg.Register(p, false); err != nil {
		b.Fatal(err)
	}
	quiet := host.WithLogger(slog.New(slog.DiscardHandler))
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
			switch {
			case res.Status == sdk.StatusScored:
				scored++
			case res.Status == sdk.StatusSkipped && allowSkips:
			default:
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
	b.ReportMetric(calls/scored, "calls/scored_run")
	b.ReportMetric(promptBytes/4/n, "prompt_tokens_est/run")
	b.ReportMetric(answerBytes/4/n, "completion_tokens_est/run")
	b.ReportMetric(words/n, "prompt_words/run")
	if mastra.cases > 0 {
		b.ReportMetric(mastra.calls/mastra.cases, "mastra_calls/run")
		b.ReportMetric(mastra.prompt/mastra.cases, "mastra_prompt_tokens/run")
		b.ReportMetric(mastra.completion/mastra.cases, "mastra_completion_tokens/run")
	}
}
