package host_test

import (
	"context"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/sdk"
)

// askScorer asks the judge once and scores what it says.
type askScorer struct{}

func (askScorer) Info() sdk.Info {
	return sdk.Info{Name: "ask", Version: "1.0.0", ABIVersion: sdk.ABIVersion, Description: "asks once",
		Range: sdk.Unit, Threshold: 0.5, Capabilities: []sdk.Capability{sdk.CapJudge}}
}

func (askScorer) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	if call.Judge == nil {
		return sdk.NoJudge("ask"), nil
	}
	out, err := sdk.Ask(ctx, call.Judge, "", "Q: "+call.Run.Input+"\nA: "+call.Run.Output)
	if err != nil {
		return sdk.Result{}, err
	}
	return sdk.Scored(float64(len(out.Content)%2), "len parity"), nil
}

// TestJudgeTelemetry: each result's telemetry carries the broker's cost of that one call —
// endpoint calls, retries, tokens — and a re-score is a cache hit with no call.
func TestJudgeTelemetry(t *testing.T) {
	srv := judgetest.New(
		judgetest.Rule{Status: 429, RetryAfter: "0", Times: 1},
		judgetest.Rule{Reply: `{"score": 1}`},
	)
	defer srv.Close()
	b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	reg := host.NewRegistry()
	if err := reg.Register(host.Native(func() sdk.Scorer { return askScorer{} }), false); err != nil {
		t.Fatal(err)
	}
	s, err := host.New(reg, host.WithJudge(b)).Open(context.Background(), "ask", host.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	run := sdk.Run{Input: "What is the capital of France?", Output: "Paris"}

	first := s.Score(context.Background(), run)
	if first.Status != sdk.StatusScored {
		t.Fatalf("status %s: %+v", first.Status, first.Error)
	}
	tm := first.Telemetry
	if tm.JudgeCalls != 1 || tm.Retries != 1 || tm.CacheHits != 0 || tm.PromptTokens == 0 {
		t.Errorf("first call telemetry %+v: want 1 call, 1 retry, 0 cache hits, prompt tokens > 0", tm)
	}

	second := s.Score(context.Background(), run)
	tm = second.Telemetry
	if tm.JudgeCalls != 0 || tm.CacheHits != 1 || tm.Retries != 0 {
		t.Errorf("re-score telemetry %+v: want 0 calls, 1 cache hit, 0 retries", tm)
	}
	if srv.Calls() != 2 { // the 429 and the success
		t.Errorf("endpoint saw %d requests, want 2", srv.Calls())
	}
}
