package host_test

import (
	"context"
	"fmt"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

func ExampleDecodeRun() {
	for _, line := range []string{
		`{"input": "Capital of France?", "output": "Paris [1]", "context": ["Paris is the capital of France."], "trace": "ignored"}`,
		`{"input": "Capital of France?"}`,
		`{"output": "Paris", "context": ["a", "b", 3]}`,
	} {
		run, err := host.DecodeRun([]byte(line))
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("ok: %q cites passage %s\n", run.Output, run.Context[0].ID)
	}
	// Output:
	// ok: "Paris [1]" cites passage 1
	// run: missing required field "output"
	// run: context[2]: want a string or {id, text}, got number
}

// percent is a scorer that grades on 0-100 and says so in its Info.
type percent struct{}

func (percent) Info() sdk.Info {
	return sdk.Info{Name: "percent", Version: "1.0.0", ABIVersion: sdk.ABIVersion, Description: "example",
		Range: sdk.Range{Min: 0, Max: 100}, Threshold: 0.5}
}

func (percent) Score(context.Context, sdk.Call) (sdk.Result, error) {
	return sdk.Scored(87.5, "87.5 of 100"), nil
}

// The host maps a score from the scorer's declared range to [0, 1], records the change,
// and applies the caller's scale.
func ExampleScorer_Score() {
	reg := host.NewRegistry()
	if err := reg.Register(host.Native(func() sdk.Scorer { return percent{} }), false); err != nil {
		panic(err)
	}
	ten := 10.0
	s, err := host.New(reg).Open(context.Background(), "percent", host.OpenOptions{Scale: &ten})
	if err != nil {
		panic(err)
	}
	defer s.Close(context.Background())
	res := s.Score(context.Background(), sdk.Run{Input: "q", Output: "a"})
	fmt.Println(res.Status, *res.Score, *res.Passed)
	for _, a := range res.Adjustments {
		fmt.Printf("%s %s: %v -> %v\n", a.Rule, a.Target, a.From, a.To)
	}
	// Output:
	// scored 8.75 true
	// normalize_range score: 87.5 -> 0.875
}
