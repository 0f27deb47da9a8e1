package heuristic_test

import (
	"context"
	"fmt"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// The pre-screen passes a correct one-word answer and fails a provider error, through the
// host, which computes the overall score and passed.
func ExampleNewPrescreen() {
	ctx := context.Background()
	reg := host.NewRegistry()
	if err := reg.Register(host.Native(heuristic.NewPrescreen), false); err != nil {
		panic(err)
	}
	s, err := host.New(reg).Open(ctx, "prescreen", host.OpenOptions{})
	if err != nil {
		panic(err)
	}
	defer s.Close(ctx)
	for _, run := range []sdk.Run{
		{Input: "What is the capital of France?", Output: "Paris"},
		{Input: "What is the capital of France?", Output: "Error code: 429 - Rate limit reached for requests"},
	} {
		res := s.Score(ctx, run)
		fmt.Printf("%q: score %.2f passed %v flags %v\n", run.Output, res.Value(), *res.Passed, res.Flags)
	}
	// Output:
	// "Paris": score 1.00 passed true flags []
	// "Error code: 429 - Rate limit reached for requests": score 0.50 passed false flags [error_text]
}
