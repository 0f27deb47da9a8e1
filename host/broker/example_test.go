package broker_test

import (
	"context"
	"fmt"

	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/sdk"
)

// A broker against an OpenAI-compatible endpoint (here the test server), metered for one
// scoring call of one tenant. Finishing the call with a usable result caches its answer,
// so the second identical call is answered from the cache.
func Example() {
	srv := judgetest.New(judgetest.Rule{Reply: `{"score": 1, "reasoning": "answers the question"}`})
	defer srv.Close()

	b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "gpt-4o-mini", MaxConcurrency: 8})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for range 2 {
		m := b.Meter("acme", "relevancy")
		resp, err := sdk.Ask(ctx, m, "", "Is 'Paris' a relevant answer to 'What is the capital of France?'")
		if err != nil {
			panic(err)
		}
		res := sdk.Scored(1, "the judge's verdict parsed") // what the scorer made of the answer
		m.Finish(&res)
		tel := res.Telemetry
		fmt.Printf("%s cached=%v calls=%d hits=%d\n", resp.Content, resp.Cached, tel.JudgeCalls, tel.CacheHits)
	}
	fmt.Printf("tenant acme: %d call, %d cache hit\n", b.Usage("acme").Calls, b.Usage("acme").CacheHits)
	// Output:
	// {"score": 1, "reasoning": "answers the question"} cached=false calls=1 hits=0
	// {"score": 1, "reasoning": "answers the question"} cached=true calls=0 hits=1
	// tenant acme: 1 call, 1 cache hit
}
