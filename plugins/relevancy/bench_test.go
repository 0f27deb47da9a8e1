package relevancy_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/sdk"
)

// scriptedJudge answers every step of every mode.
func scriptedJudge(delay time.Duration) *judgetest.Server {
	return judgetest.New(
		judgetest.Rule{Match: "Break the text below", Reply: `{"statements": ["Paris is the capital of France.", "It is known for the Eiffel Tower."]}`, Delay: delay},
		judgetest.Rule{Match: "Judge how relevant", Reply: `{"results": [{"result": "yes", "reason": "answers it"}, {"result": "unsure", "reason": "related"}]}`, Delay: delay},
		judgetest.Rule{Match: "Explain the relevancy", Reply: `{"reason": "The score is 0.65 because the first statement answers the question and the second is related context."}`, Delay: delay},
		judgetest.Rule{Match: "Write the question", Reply: `{"question": "What is the capital of France?", "noncommittal": 0}`, Delay: delay},
		judgetest.Rule{Reply: `{"reasoning": "The output names the capital, which is what the question asked.", "score": 1}`, Delay: delay},
	)
}

func benchRun(i int) sdk.Run {
	return sdk.Run{
		Input:  fmt.Sprintf("What is the capital of France? (run %d)", i),
		Output: fmt.Sprintf("Paris is the capital of France. It is known for the Eiffel Tower (%d).", i),
	}
}

// BenchmarkCostPerScore reports judge calls and tokens per relevancy score in each mode.
// Every iteration scores a new run, so nothing comes from the cache. The test server
// counts a token per word.
func BenchmarkCostPerScore(b *testing.B) {
	for _, mode := range []string{"judge", "statements", "questions"} {
		b.Run(mode, func(b *testing.B) {
			srv := scriptedJudge(0)
			defer srv.Close()
			br, s := setup(b, srv, `{"mode": "`+mode+`"}`, nil)
			b.ResetTimer()
			for i := range b.N {
				if res := s.Score(context.Background(), benchRun(i)); res.Status != sdk.StatusScored {
					b.Fatalf("%s: %v", res.Status, res.Error)
				}
			}
			b.StopTimer()
			u := br.Usage(broker.DefaultTenant)
			bytes := 0
			for _, r := range srv.Requests() {
				for _, msg := range r.Messages {
					bytes += len(msg.Content)
				}
				for _, in := range r.Input {
					bytes += len(in)
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(u.Calls)/n, "calls/score")
			b.ReportMetric(float64(u.PromptTokens)/n, "prompt_words/score")
			b.ReportMetric(float64(bytes)/4/n, "prompt_tokens_est/score")
			b.ReportMetric(float64(u.CompletionTokens)/n, "completion_words/score")
		})
	}
}

// BenchmarkThroughput scores against a judge with 200 ms latency at concurrency 16: the
// ceiling is 16 / 0.2 s = 80 scores/s in judge mode (one call per score).
func BenchmarkThroughput(b *testing.B) {
	const workers = 16
	srv := scriptedJudge(200 * time.Millisecond)
	defer srv.Close()
	br, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge", EmbeddingModel: "embed", MaxConcurrency: workers})
	if err != nil {
		b.Fatal(err)
	}
	s := open(b, `{"mode": "judge"}`, host.WithJudge(br))
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	b.ResetTimer()
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if res := s.Score(context.Background(), benchRun(i)); res.Status != sdk.StatusScored {
					mu.Lock()
					failed++
					mu.Unlock()
				}
			}
		}()
	}
	for i := range b.N {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if failed > 0 {
		b.Fatalf("%d of %d scores failed", failed, b.N)
	}
	rate := float64(b.N) / elapsed.Seconds()
	b.ReportMetric(rate, "scores/s")
	b.ReportMetric(100*rate/80, "%_of_80/s")
	b.ReportMetric(float64(srv.MaxInFlight()), "max_in_flight")
}

// BenchmarkRescoreHitRate scores a dataset of 50 runs, then scores it again, and reports
// the share of the second pass's judge requests answered from the cache.
func BenchmarkRescoreHitRate(b *testing.B) {
	for _, mode := range []string{"judge", "statements", "questions"} {
		b.Run(mode, func(b *testing.B) {
			srv := scriptedJudge(0)
			defer srv.Close()
			var hits, calls int64
			for range b.N {
				br, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge", EmbeddingModel: "embed"})
				if err != nil {
					b.Fatal(err)
				}
				s := open(b, `{"mode": "`+mode+`"}`, host.WithJudge(br))
				for i := range 50 {
					s.Score(context.Background(), benchRun(i))
				}
				before := br.Usage(broker.DefaultTenant)
				for i := range 50 {
					s.Score(context.Background(), benchRun(i))
				}
				after := br.Usage(broker.DefaultTenant)
				hits += after.CacheHits - before.CacheHits
				calls += after.Calls - before.Calls
			}
			b.ReportMetric(100*float64(hits)/float64(hits+calls), "%_hits")
			b.ReportMetric(float64(calls)/float64(b.N), "calls_on_rescore")
		})
	}
}
