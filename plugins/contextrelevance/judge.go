package contextrelevance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/verdict"
)

// judgeCall makes the scorer's one judge call and keeps what a result reports of it: the
// steps and the telemetry.
type judgeCall struct {
	ctx   context.Context
	judge sdk.Judge
	steps []sdk.Step
	tel   sdk.Telemetry
}

// ask sends one request for an answer of schema and decodes it into v. It records the
// judge step (prompt, raw answer, then what was read from it with record). A failed
// request, a truncated answer or one that is not the JSON asked for is an error.
func (j *judgeCall) ask(system, user string, schema json.RawMessage, v any) error {
	prompt := system + "\n\n" + user
	req := sdk.CompletionRequest{
		Messages: []sdk.Message{{Role: "system", Content: system}, {Role: "user", Content: user}},
		JSON:     true,
		Schema:   schema,
	}
	out, err := j.judge.Complete(j.ctx, []sdk.CompletionRequest{req})
	if err != nil {
		j.step("judge", prompt, nil)
		return err
	}
	if len(out) != 1 {
		j.step("judge", prompt, nil)
		return &sdk.Error{Code: sdk.CodeJudgeError, Message: fmt.Sprintf("judge returned %d responses for 1 request", len(out))}
	}
	r := out[0]
	if r.Cached {
		j.tel.CacheHits++
	} else if r.Error == nil {
		j.tel.JudgeCalls++
	}
	j.tel.PromptTokens += r.PromptTokens
	j.tel.CompletionTokens += r.CompletionTokens
	if r.Error != nil {
		j.step("judge", prompt, nil)
		return r.Error
	}
	j.step("judge", prompt, map[string]any{"raw": r.Content})
	if r.FinishReason == "length" {
		return fmt.Errorf("the judge's answer was cut off at its token limit; raise the judge's max tokens (judge output: %s)", clip(r.Content))
	}
	return verdict.Extract(r.Content, v)
}

// record adds what was read from the judge's answer to the judge step.
func (j *judgeCall) record(parsed any) {
	if len(j.steps) == 0 {
		return
	}
	last := &j.steps[len(j.steps)-1]
	var out map[string]any
	if len(last.Output) > 0 {
		_ = json.Unmarshal(last.Output, &out)
	}
	if out == nil {
		out = map[string]any{}
	}
	out["parsed"] = parsed
	last.Output, _ = json.Marshal(out)
}

// step records a step; output is marshalled to JSON.
func (j *judgeCall) step(name, prompt string, output any) {
	var raw json.RawMessage
	if output != nil {
		raw, _ = json.Marshal(output)
	}
	j.steps = append(j.steps, sdk.Step{Name: name, Prompt: prompt, Output: raw})
}

// scored is the scored result with the steps and telemetry so far.
func (j *judgeCall) scored(score float64, reason string, flags ...string) sdk.Result {
	res := sdk.Scored(score, reason)
	res.Flags = flags
	res.Steps, res.Telemetry = j.steps, j.tel
	return res
}

// fail is the failed result for err, keeping the steps so far: err's code when it carries
// one (timeout, limit_exceeded ...), judge_error otherwise (the judge answered, not usably).
func (j *judgeCall) fail(err error) sdk.Result {
	code, msg := sdk.CodeJudgeError, err.Error()
	var e *sdk.Error
	if errors.As(err, &e) {
		code, msg = e.Code, e.Message
	}
	res := sdk.Failed(code, Name+": "+msg)
	res.Steps, res.Telemetry = j.steps, j.tel
	return res
}

// clip shortens the judge's answer for a message, at a character boundary.
func clip(s string) string {
	n := 500
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
