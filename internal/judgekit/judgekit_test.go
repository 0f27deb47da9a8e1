package judgekit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/sdk"
)

// judge answers every request with its responses, or fails the batch with err, and keeps
// the requests it got.
type judge struct {
	out  []sdk.CompletionResponse
	err  error
	reqs []sdk.CompletionRequest
}

func (j *judge) Complete(_ context.Context, reqs []sdk.CompletionRequest) ([]sdk.CompletionResponse, error) {
	j.reqs = append(j.reqs, reqs...)
	return j.out, j.err
}

func (j *judge) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("no embeddings")
}

func TestOneOf(t *testing.T) {
	if err := OneOf("s", "method", "b", "a", "b"); err != nil {
		t.Fatalf("OneOf of an allowed value: %v", err)
	}
	for _, tc := range []struct {
		allowed []string
		want    string
	}{
		{[]string{"mastra", "ragas", "deepeval"}, `s: config: method "x": want mastra, ragas or deepeval`},
		{[]string{"judge", "embeddings"}, `s: config: method "x": want judge or embeddings`},
		{[]string{"only"}, `s: config: method "x": want only`},
	} {
		if err := OneOf("s", "method", "x", tc.allowed...); err == nil || err.Error() != tc.want {
			t.Errorf("OneOf(%q) = %v, want %q", tc.allowed, err, tc.want)
		}
	}
}

func TestUnit(t *testing.T) {
	if err := Unit("s", map[string]float64{"a": 0, "b": 1, "c": 0.5}); err != nil {
		t.Fatalf("Unit of numbers in [0, 1]: %v", err)
	}
	if err := Unit("s", map[string]float64{"a": 0.5, "penalty": 1.5}); err == nil || err.Error() != "s: config: penalty 1.5: want a number from 0 to 1" {
		t.Errorf("Unit of 1.5 = %v", err)
	}
}

func TestDecodeConfig(t *testing.T) {
	type config struct {
		Method string `json:"method"`
	}
	cfg := config{Method: "default"}
	for _, raw := range []string{"", " null ", "{}"} {
		if err := DecodeConfig("s", json.RawMessage(raw), &cfg); err != nil || cfg.Method != "default" {
			t.Errorf("DecodeConfig(%q) = %v, %+v; want the defaults kept", raw, err, cfg)
		}
	}
	if err := DecodeConfig("s", json.RawMessage(`{"method": "m"}`), &cfg); err != nil || cfg.Method != "m" {
		t.Errorf("DecodeConfig of a method = %v, %+v", err, cfg)
	}
	if err := DecodeConfig("s", json.RawMessage(`{"mode": "m"}`), &cfg); err == nil || !strings.HasPrefix(err.Error(), "s: config: ") ||
		!strings.Contains(err.Error(), `unknown field "mode"`) {
		t.Errorf("DecodeConfig of an unknown field = %v", err)
	}
}

// TestSend: the exchange records the prompt, the model asked for, the answer and what it
// cost; a cut-off answer, a failed request, a batch error and a wrong number of answers
// are errors, and Fail keeps their code.
func TestSend(t *testing.T) {
	req := sdk.CompletionRequest{Messages: []sdk.Message{{Role: "system", Content: "sys"}, {Role: "user", Content: "user"}}, Model: "m1"}
	j := &judge{out: []sdk.CompletionResponse{{Content: `{"a": 1}`, PromptTokens: 7, CompletionTokens: 3}}}
	ex, content, err := Send(context.Background(), j, req, "max_tokens")
	if err != nil || content != `{"a": 1}` {
		t.Fatalf("Send = %q, %v", content, err)
	}
	if tel := ex.Telemetry; ex.Prompt != "sys\n\nuser" || tel.JudgeCalls != 1 || tel.CacheHits != 0 || tel.PromptTokens != 7 || tel.CompletionTokens != 3 {
		t.Errorf("exchange = %+v", ex)
	}
	ex.Parsed = map[string]any{"a": 1}
	if got := string(ex.Step().Output); got != `{"model":"m1","parsed":{"a":1},"raw":"{\"a\": 1}"}` {
		t.Errorf("step output = %s", got)
	}
	res := ex.Scored(0.5, "why", map[string]any{"score": 0.5})
	if len(res.Steps) != 2 || res.Steps[1].Name != "score" || string(res.Steps[1].Output) != `{"score":0.5}` || res.Telemetry.JudgeCalls != 1 {
		t.Errorf("Scored = %+v", res)
	}

	j = &judge{out: []sdk.CompletionResponse{{Content: `{"a": `, FinishReason: "length", Cached: true}}}
	ex, _, err = Ask(context.Background(), j, "sys", "user", json.RawMessage(`{"type":"object"}`))
	if err == nil || !strings.Contains(err.Error(), "raise the judge's max tokens") || ex.Telemetry.CacheHits != 1 || ex.Raw == nil {
		t.Errorf("Ask of a cut-off answer = %v, %+v", err, ex)
	}
	if r := j.reqs[0]; !r.JSON || string(r.Schema) != `{"type":"object"}` || len(r.Messages) != 2 {
		t.Errorf("Ask sent %+v", r)
	}
	if res := ex.Fail("s", err); res.Error.Code != sdk.CodeJudgeError || !strings.HasPrefix(res.Reason, "s: the judge's answer was cut off") {
		t.Errorf("Fail = %+v", res)
	}

	j = &judge{out: []sdk.CompletionResponse{{Error: &sdk.Error{Code: sdk.CodeTimeout, Message: "deadline"}}}}
	ex, _, err = Ask(context.Background(), j, "sys", "user", nil)
	if res := ex.Fail("s", err); res.Error.Code != sdk.CodeTimeout || res.Reason != "s: deadline" || ex.Telemetry.JudgeCalls != 0 {
		t.Errorf("Fail of a failed request = %+v, telemetry %+v", res, ex.Telemetry)
	}

	j = &judge{out: []sdk.CompletionResponse{{}, {}}}
	if _, _, err = Ask(context.Background(), j, "sys", "user", nil); err == nil || !strings.Contains(err.Error(), "judge returned 2 responses for 1 request") {
		t.Errorf("Ask of two answers = %v", err)
	}
	j = &judge{err: errors.New("budget exhausted")}
	if _, _, err = Ask(context.Background(), j, "sys", "user", nil); err == nil || err.Error() != "budget exhausted" {
		t.Errorf("Ask of a batch error = %v", err)
	}
}

func TestCosine(t *testing.T) {
	for _, tc := range []struct {
		a, b []float32
		want float64
		ok   bool
	}{
		{[]float32{1, 0}, []float32{1, 0}, 1, true},
		{[]float32{1, 0}, []float32{0, 2}, 0, true},
		{[]float32{1, 1}, []float32{-1, -1}, -1, true},
		{[]float32{0, 0}, []float32{1, 0}, 0, false},
		{[]float32{1}, []float32{1, 0}, 0, false},
		{nil, nil, 0, false},
	} {
		got, ok := Cosine(tc.a, tc.b)
		if ok != tc.ok || math.Abs(got-tc.want) > 1e-12 || got < -1 || got > 1 {
			t.Errorf("Cosine(%v, %v) = %v, %v; want %v, %v", tc.a, tc.b, got, ok, tc.want, tc.ok)
		}
	}
}

func TestCode(t *testing.T) {
	if code, msg := Code(fmt.Errorf("wrapped: %w", &sdk.Error{Code: sdk.CodeTimeout, Message: "deadline"})); code != sdk.CodeTimeout || msg != "deadline" {
		t.Errorf("Code of a wrapped sdk.Error = %q, %q", code, msg)
	}
	if code, msg := Code(errors.New("not JSON")); code != sdk.CodeJudgeError || msg != "not JSON" {
		t.Errorf("Code of a plain error = %q, %q", code, msg)
	}
}

// TestUnanswered: an output that answers nothing scores 0 with the pre-screen's flag and
// reason; an answer, or a turn that acted through tools, is left to the scorer.
func TestUnanswered(t *testing.T) {
	res, ok := Unanswered(&sdk.Run{Input: "What is the capital of France?", Output: " "}, ", so it says nothing")
	if !ok || res.Status != sdk.StatusScored || res.Value() != 0 || len(res.Flags) != 1 || res.Flags[0] != "empty_output" ||
		!strings.HasSuffix(res.Reason, ", so it says nothing") {
		t.Errorf("Unanswered of an empty output = %+v, %v", res, ok)
	}
	for _, run := range []sdk.Run{
		{Input: "What is the capital of France?", Output: "Paris."},
		{Input: "Cancel my 3pm", ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "cancel", Result: `{"cancelled": true}`}}},
	} {
		if res, ok := Unanswered(&run, ", so"); ok {
			t.Errorf("Unanswered(%+v) = %+v; want the run left to the scorer", run, res)
		}
	}
}

// TestConfigSchema: the schema is JSON, an object of the properties given and no others.
func TestConfigSchema(t *testing.T) {
	raw := ConfigSchema(`"method": {"type": "string", "enum": ["a", "b"],
      "description": "the method"}`, `"context_path": {"type": "string"}`)
	var s struct {
		Schema     string                     `json:"$schema"`
		Type       string                     `json:"type"`
		Additional *bool                      `json:"additionalProperties"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatalf("ConfigSchema is not JSON: %v\n%s", err, raw)
	}
	if s.Type != "object" || s.Additional == nil || *s.Additional || len(s.Properties) != 2 ||
		s.Properties["method"] == nil || s.Properties["context_path"] == nil || !strings.Contains(s.Schema, "2020-12") {
		t.Errorf("ConfigSchema = %s", raw)
	}
}

func TestYesNo(t *testing.T) {
	for _, c := range []struct {
		in      string
		yes, ok bool
	}{
		{"yes", true, true}, {" True ", true, true}, {"1", true, true},
		{"NO", false, true}, {"false", false, true}, {" 0", false, true},
		{"maybe", false, false}, {"", false, false}, {"0.5", false, false},
	} {
		if yes, ok := YesNo(c.in); yes != c.yes || ok != c.ok {
			t.Errorf("YesNo(%q) = %v, %v; want %v, %v", c.in, yes, ok, c.yes, c.ok)
		}
	}
}
