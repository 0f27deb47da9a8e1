package telemetry_test

import (
	"context"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/internal/service/telemetry"
	"github.com/scorekit/scorekit/sdk"
)

// plainJudge is a judge that does not meter its calls.
type plainJudge struct{}

func (plainJudge) Complete(context.Context, []sdk.CompletionRequest) ([]sdk.CompletionResponse, error) {
	return nil, nil
}
func (plainJudge) Embed(context.Context, []string) ([][]float32, error) { return nil, nil }

// The traced judge keeps host.JudgeMeter exactly when the judge it wraps has it: the host
// finds the broker's metering (tokens per tenant and scorer, what the cache may keep)
// through it, and a wrapper that drops it turns metering off without a word.
func TestJudgeKeepsMetering(t *testing.T) {
	srv := judgetest.New()
	defer srv.Close()
	b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	tel := telemetry.New(telemetry.Options{})
	for _, tt := range []struct {
		name  string
		judge sdk.Judge
		meter bool
	}{
		{"the broker", b, true},
		{"a judge without metering", plainJudge{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := tel.Judge(tt.judge).(host.JudgeMeter); ok != tt.meter {
				t.Fatalf("traced judge meters: %v, want %v", ok, tt.meter)
			}
		})
	}
}
