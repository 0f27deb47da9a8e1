// Package judgekit holds what the built-in judge scorers in plugins/ share, so that each
// piece lives once: the methods they have alike ([Scorer]: Info, Configure,
// ObservesContext), the Info they declare, the decoding and checks of their config, the
// judge call they make ([Ask], [Send]) with what a result records of it ([Exchange]: the
// "judge" step, the telemetry, the failed, skipped and scored results), and the cosine of
// two embeddings.
//
// The package depends on the standard library, the sdk and the pre-screen's checks only: it
// compiles into the WASM build of the built-ins.
package judgekit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/scorekit/scorekit/internal/prescreen"
	"github.com/scorekit/scorekit/internal/textkit"
	"github.com/scorekit/scorekit/sdk"
)

// Info is the Info a built-in judge scorer declares: version 1.0.0, scores on 0-1 passing
// at 0.5 and shown to two decimals, the judge capability, and its config's schema and
// defaults. The caller adds its dimensions or further capabilities.
func Info(name, description, configSchema, defaults string) sdk.Info {
	return sdk.Info{
		Name:         name,
		Version:      "1.0.0",
		ABIVersion:   sdk.ABIVersion,
		Description:  description,
		Range:        sdk.Unit,
		Threshold:    0.5,
		Decimals:     2,
		ConfigSchema: json.RawMessage(configSchema),
		Defaults:     json.RawMessage(defaults),
		Capabilities: []sdk.Capability{sdk.CapJudge},
	}
}

// ConfigSchema is the JSON Schema (draft 2020-12) of a judge scorer's config: an object
// with the given properties, each a member of "properties" (`"name": {...}`), and no
// others, as [DecodeConfig] refuses unknown fields.
func ConfigSchema(properties ...string) string {
	return "{\n  \"$schema\": \"https://json-schema.org/draft/2020-12/schema\",\n  \"type\": \"object\",\n" +
		"  \"additionalProperties\": false,\n  \"properties\": {\n    " + strings.Join(properties, ",\n    ") + "\n  }\n}"
}

// DecodeConfig decodes a scorer's config over its defaults (what cfg holds), refusing
// unknown fields; an empty or null config keeps the defaults.
func DecodeConfig(scorer string, raw json.RawMessage, cfg any) error {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(cfg); err != nil {
		return fmt.Errorf("%s: config: %w", scorer, err)
	}
	return nil
}

// OneOf checks that a config field's value is one of allowed: `scorer: config: method "x":
// want mastra, ragas or deepeval` otherwise.
func OneOf(scorer, field, value string, allowed ...string) error {
	for _, a := range allowed {
		if value == a {
			return nil
		}
	}
	want := allowed[len(allowed)-1]
	if len(allowed) > 1 {
		want = strings.Join(allowed[:len(allowed)-1], ", ") + " or " + want
	}
	return fmt.Errorf("%s: config: %s %q: want %s", scorer, field, value, want)
}

// Unit checks that each config field of fields (by name) is a number from 0 to 1, as the
// weights and penalties are.
func Unit(scorer string, fields map[string]float64) error {
	for name, v := range fields {
		if v < 0 || v > 1 {
			return fmt.Errorf("%s: config: %s %v: want a number from 0 to 1", scorer, name, v)
		}
	}
	return nil
}

// Unanswered is the result of a run whose output answers nothing (empty, an error message in
// its place, tool calls that all failed: prescreen.Unanswered): 0 with the pre-screen's
// flag, without a judge call, the reason being the pre-screen's followed by rest. ok is
// false when the output is an answer.
func Unanswered(run *sdk.Run, rest string) (res sdk.Result, ok bool) {
	flag, why, ok := prescreen.Unanswered(run)
	if !ok {
		return sdk.Result{}, false
	}
	res = sdk.Scored(0, why+rest)
	res.Flags = []string{flag}
	return res, true
}

// Exchange is one judge call and what was read from it, for a result's steps and
// telemetry.
type Exchange struct {
	// Prompt is what was sent: the system message, a blank line, the user message.
	Prompt string
	// Model is the judge model the request asked for; "" for the host's.
	Model string
	// Raw is the judge's answer as returned; nil before one came.
	Raw *string
	// Parsed is what was read from it, recorded in the step.
	Parsed any
	// Telemetry is what the scorer can see of the call's cost; the host's broker replaces
	// it with its own counts when it meters the call.
	Telemetry sdk.Telemetry
}

// Ask sends one request, a system and a user message, asking for JSON in the shape of
// schema (structured output where the endpoint offers it), and returns the answer's
// content; see [Send].
func Ask(ctx context.Context, j sdk.Judge, system, user string, schema json.RawMessage) (*Exchange, string, error) {
	return Send(ctx, j, sdk.CompletionRequest{
		Messages: []sdk.Message{{Role: "system", Content: system}, {Role: "user", Content: user}},
		JSON:     true,
		Schema:   schema,
	}, "the judge's max tokens")
}

// Send sends req, one request of a system and a user message, and returns the answer's
// content. A failed request, an answer cut off at the token limit (maxTokens names the
// setting to raise), or a batch error is an error; the exchange records it.
func Send(ctx context.Context, j sdk.Judge, req sdk.CompletionRequest, maxTokens string) (*Exchange, string, error) {
	var prompt []string
	for _, m := range req.Messages {
		prompt = append(prompt, m.Content)
	}
	ex := &Exchange{Prompt: strings.Join(prompt, "\n\n"), Model: req.Model}
	out, err := j.Complete(ctx, []sdk.CompletionRequest{req})
	if err != nil {
		return ex, "", err
	}
	if len(out) != 1 {
		return ex, "", &sdk.Error{Code: sdk.CodeJudgeError, Message: fmt.Sprintf("judge returned %d responses for 1 request", len(out))}
	}
	r := out[0]
	Account(&ex.Telemetry, r)
	if r.Error != nil {
		return ex, "", r.Error
	}
	ex.Raw = &r.Content
	if r.FinishReason == "length" {
		return ex, r.Content, fmt.Errorf("the judge's answer was cut off at its token limit; raise %s (judge output: %s)", maxTokens, textkit.Clip(r.Content, 500))
	}
	return ex, r.Content, nil
}

// Account adds what a scorer can see of the responses' cost to t: a judge call or a cache
// hit each, and their tokens. The host's broker overwrites these with its own counts
// (retries included) when it meters the calls.
func Account(t *sdk.Telemetry, rs ...sdk.CompletionResponse) {
	for _, r := range rs {
		if r.Cached {
			t.CacheHits++
		} else if r.Error == nil {
			t.JudgeCalls++
		}
		t.PromptTokens += r.PromptTokens
		t.CompletionTokens += r.CompletionTokens
	}
}

// Step is the exchange as the result's "judge" step.
func (ex *Exchange) Step() sdk.Step {
	out := map[string]any{}
	if ex.Model != "" {
		out["model"] = ex.Model
	}
	if ex.Raw != nil {
		out["raw"] = *ex.Raw
	}
	if ex.Parsed != nil {
		out["parsed"] = ex.Parsed
	}
	var raw json.RawMessage
	if len(out) > 0 {
		raw, _ = json.Marshal(out)
	}
	return sdk.Step{Name: "judge", Prompt: ex.Prompt, Output: raw}
}

// Record is res with the exchange as its one step, and the exchange's telemetry.
func (ex *Exchange) Record(res sdk.Result) sdk.Result {
	res.Steps, res.Telemetry = []sdk.Step{ex.Step()}, ex.Telemetry
	return res
}

// Code is the code and message a failed result gives for err: err's when it carries an
// [sdk.Error] (timeout, limit_exceeded ...), judge_error and its text otherwise: the judge
// answered, but not usably.
func Code(err error) (code, msg string) {
	var e *sdk.Error
	if errors.As(err, &e) {
		return e.Code, e.Message
	}
	return sdk.CodeJudgeError, err.Error()
}

// Fail is the failed result for err ([Code]), with the exchange so far.
func (ex *Exchange) Fail(scorer string, err error) sdk.Result {
	code, msg := Code(err)
	return ex.Record(sdk.Failed(code, scorer+": "+msg))
}

// Skipped is the skipped result of a run the judge's answer showed there was nothing to
// score in, with the exchange and flags.
func (ex *Exchange) Skipped(reason string, flags []string) sdk.Result {
	res := ex.Record(sdk.Skipped(reason))
	res.Flags = flags
	return res
}

// Scored is the scored result with the exchange's step, then the "score" step recording
// how the answer became the score ([ScoreStep]), and the exchange's telemetry.
func (ex *Exchange) Scored(score float64, reason string, scoreStep any) sdk.Result {
	res := sdk.Scored(score, reason)
	res.Steps = []sdk.Step{ex.Step(), ScoreStep(scoreStep)}
	res.Telemetry = ex.Telemetry
	return res
}

// ScoreStep is the "score" step: how the judge's answer became the score.
func ScoreStep(output any) sdk.Step {
	b, _ := json.Marshal(output)
	return sdk.Step{Name: "score", Output: b}
}

// YesNo reads a yes/no verdict as judges write it: "yes", "true" or "1", "no", "false" or
// "0", without regard to case or surrounding space. ok is false for anything else.
func YesNo(s string) (yes, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "yes", "true", "1":
		return true, true
	case "no", "false", "0":
		return false, true
	}
	return false, false
}

// Cosine is the cosine similarity of two embeddings, in [-1, 1]; false when either is
// zero or empty, or they differ in length.
func Cosine(a, b []float32) (float64, bool) {
	if len(a) != len(b) || len(a) == 0 {
		return 0, false
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0, false
	}
	return max(-1, min(1, dot/math.Sqrt(na*nb))), true
}
