// Package relevancy is the answer-relevancy scorer: does the agent's output do what its
// input required?
//
// It has three modes, chosen with the config field "mode":
//
//   - judge (default): one judge call. The prompt asks whether the output addresses what
//     the input required (answer the question, perform the action, transform the input as
//     the agent's purpose demands), says that relevance is not word overlap, and anchors
//     the 0-1 rubric with examples (a one-word factual answer, an email turned into a
//     triage, an action reported done). The agent's purpose comes from run metadata
//     (purpose, instructions or system_prompt) when present.
//   - statements: Mastra's answer-relevancy method. Split the output into statements,
//     get a yes/unsure/no verdict per statement against the input, score
//     (yes + uncertainty_weight * unsure) / verdicts, then ask for a reason. Three calls.
//   - questions: Ragas' answer-relevancy method. Generate N questions the output answers,
//     each with a noncommittal flag, and score the mean cosine similarity between the
//     embeddings of the input and of each question. N calls plus one embeddings call.
//
// The statements and questions modes score word-level topicality and are kept for
// comparison with those tools: they are the methods that scored "Paris" and a correct
// email triage near 0. Prefer judge.
//
// A turn that acts through tools is graded on what it did: judge mode shows the judge the
// tool calls and their results beside the output, and a turn whose only output is its
// actions is graded on them ("completes the requested action"). The statements and
// questions modes compare text, so they skip such a turn rather than score it 0.
//
// Policies: an empty output scores 0 without a judge call (flag empty_output), and so does
// an output that is an error message, a stack trace or a provider failure in place of an
// answer, or a run whose caller recorded an error (flag error_text; the pre-screen's checks,
// plugins/prescreen.Unanswered), in every mode, and a turn whose only output is tool calls
// that all failed (flag tool_error): such an output does nothing the input required, which
// needs no judge to see. A turn that made calls is not empty. A judge that answers on a
// 0-100 scale is read as percent (flag percentage_scale). A judge
// failure, a truncated or unreadable judge answer, or a score on an ambiguous scale is a
// failed result with the reason, never 0. Without a judge the result is skipped with a
// reason that says how to configure one. In questions mode a negative cosine counts as 0
// (a question that points away from the input is no evidence of relevance, and must not
// cancel one that matches), and the score is 0 only when every generated question is
// flagged noncommittal (Ragas 0.1 behaviour; Ragas 0.2 and later zero the score when any
// one is, which lets one noisy generation erase two good ones). Some but not all
// noncommittal sets the flag partly_noncommittal.
//
// The package depends on the standard library, the sdk, the pre-screen's error check and
// the judge scorers' shared kit (internal/judgekit) only: it also compiles to WASM.
package relevancy

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/scorekit/scorekit/internal/judgekit"
	"github.com/scorekit/scorekit/internal/prescreen"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/verdict"
)

// Name is the scorer's name.
const Name = "relevancy"

// Modes for Config.Mode.
const (
	ModeJudge      = "judge"
	ModeStatements = "statements"
	ModeQuestions  = "questions"
)

// Flags the scorer sets.
const (
	// FlagEmptyOutput: the output is empty or white space; the score is 0.
	FlagEmptyOutput = prescreen.FlagEmptyOutput
	// FlagErrorText: the output is an error, not an answer; the score is 0.
	FlagErrorText = prescreen.FlagErrorText
	// FlagToolError: the turn's only output is tool calls that all failed; the score is 0.
	FlagToolError = prescreen.FlagToolError
	// FlagNoncommittal: every generated question was flagged noncommittal (questions mode).
	FlagNoncommittal = "noncommittal"
	// FlagPartlyNoncommittal: some generated questions were flagged noncommittal.
	FlagPartlyNoncommittal = "partly_noncommittal"
	// FlagVerdictCountMismatch: the judge returned a different number of verdicts than
	// there were statements (statements mode; the score divides by the verdicts, as
	// Mastra does).
	FlagVerdictCountMismatch = "verdict_count_mismatch"
	// FlagReasonUnavailable: the reason step failed; the score stands (statements mode).
	FlagReasonUnavailable = "reason_unavailable"
)

// Config is the scorer's config.
type Config struct {
	// Mode is judge, statements or questions. Optional. Default is judge.
	Mode string `json:"mode"`
	// UncertaintyWeight is the weight of an "unsure" verdict in statements mode.
	// Optional. Default is 0.3 (Mastra's).
	UncertaintyWeight float64 `json:"uncertainty_weight"`
	// Questions is how many questions questions mode generates. Optional. Default is 3
	// (Ragas' strictness).
	Questions int `json:"questions"`
}

// configSchema is the JSON Schema of Config.
var configSchema = judgekit.ConfigSchema(
	`"mode": {"type": "string", "enum": ["judge", "statements", "questions"], "default": "judge",
      "description": "judge: one call that asks whether the output does what the input required; statements: Mastra's statement verdicts; questions: Ragas' generated questions and embeddings."}`,
	`"uncertainty_weight": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.3,
      "description": "Weight of an unsure verdict in statements mode."}`,
	`"questions": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3,
      "description": "Questions generated in questions mode."}`)

const defaults = `{"mode": "judge", "uncertainty_weight": 0.3, "questions": 3}`

// New returns the relevancy scorer in judge mode; Configure changes the mode.
func New() sdk.Scorer { return judgekit.NewScorer(Name, info, defaultConfig, check, grade) }

func defaultConfig() Config { return Config{Mode: ModeJudge, UncertaintyWeight: 0.3, Questions: 3} }

// info describes the scorer.
func info() sdk.Info {
	info := judgekit.Info(Name, "Answer relevancy: whether the output does what the input required (answers the question, "+
		"performs the action, transforms the input as the agent's purpose demands). Modes: judge (default, one call), "+
		"statements (Mastra), questions (Ragas).", configSchema, defaults)
	info.Capabilities = append(info.Capabilities, sdk.CapEmbed)
	return info
}

// check refuses a mode the scorer does not have, an uncertainty weight outside 0 to 1 and
// a number of questions outside 1 to 10.
func check(cfg Config) error {
	if err := judgekit.OneOf(Name, "mode", cfg.Mode, ModeJudge, ModeStatements, ModeQuestions); err != nil {
		return err
	}
	if err := judgekit.Unit(Name, map[string]float64{"uncertainty_weight": cfg.UncertaintyWeight}); err != nil {
		return err
	}
	if cfg.Questions < 1 || cfg.Questions > 10 {
		return fmt.Errorf("relevancy: config: questions %d: want 1 to 10", cfg.Questions)
	}
	return nil
}

// grade scores call.Run in the configured mode.
func grade(ctx context.Context, cfg Config, call sdk.Call) (sdk.Result, error) {
	run := &call.Run
	if res, ok := judgekit.Unanswered(run, ", so it does nothing the input required; no judge call was made"); ok {
		return res, nil
	}
	if call.Judge == nil {
		return sdk.NoJudge(Name), nil
	}
	if cfg.Mode != ModeJudge && prescreen.ToolOnly(run) {
		return sdk.Skipped("relevancy's " + cfg.Mode + " mode compares the output's text with the input, and this turn's " +
			"only output is its tool calls; judge mode (the default) grades what it did"), nil
	}
	p := &pipeline{ctx: ctx, judge: call.Judge, run: run, mode: cfg.Mode}
	switch cfg.Mode {
	case ModeStatements:
		return p.statements(cfg.UncertaintyWeight), nil
	case ModeQuestions:
		return p.questions(cfg.Questions), nil
	default:
		return p.judgeMode(), nil
	}
}

// pipeline runs one call's steps and records them.
type pipeline struct {
	ctx   context.Context
	judge sdk.Judge
	run   *sdk.Run
	mode  string
	steps []sdk.Step
	tel   sdk.Telemetry
}

// step records a step; output is marshalled to JSON.
func (p *pipeline) step(name, prompt string, output any) {
	var raw json.RawMessage
	if output != nil {
		b, err := json.Marshal(output)
		if err == nil {
			raw = b
		}
	}
	p.steps = append(p.steps, sdk.Step{Name: name, Prompt: prompt, Output: raw})
}

// ask sends one request and returns its content.
func (p *pipeline) ask(system, prompt string, temperature float64) (sdk.CompletionResponse, error) {
	msgs := make([]sdk.Message, 0, 2)
	if system != "" {
		msgs = append(msgs, sdk.Message{Role: "system", Content: system})
	}
	msgs = append(msgs, sdk.Message{Role: "user", Content: prompt})
	out, err := p.judge.Complete(p.ctx, []sdk.CompletionRequest{{Messages: msgs, JSON: true, Temperature: temperature}})
	if err != nil {
		return sdk.CompletionResponse{}, err
	}
	if len(out) != 1 {
		return sdk.CompletionResponse{}, &sdk.Error{Code: sdk.CodeJudgeError, Message: fmt.Sprintf("judge returned %d responses for 1 request", len(out))}
	}
	judgekit.Account(&p.tel, out[0])
	if out[0].Error != nil {
		return out[0], out[0].Error
	}
	return out[0], nil
}

// askJSON sends one request of the step name (temperature 0) and reads its JSON answer
// into out. ok is false when the request fails or the answer is not that JSON: the step is
// recorded (with the answer, when there was one) and res is the failed result.
func (p *pipeline) askJSON(name, system, prompt string, out any) (res sdk.Result, ok bool) {
	resp, err := p.ask(system, prompt, 0)
	if err != nil {
		p.step(name, prompt, nil)
		return p.fail(name, err), false
	}
	if err := verdict.Extract(resp.Content, out); err != nil {
		p.step(name, prompt, map[string]any{"raw": resp.Content})
		return p.fail(name, err), false
	}
	return sdk.Result{}, true
}

// scored finishes a scored result with the recorded steps and telemetry.
func (p *pipeline) scored(score float64, reason string, flags ...string) sdk.Result {
	res := sdk.Scored(score, reason)
	res.Flags = flags
	res.Steps = p.steps
	res.Telemetry = p.tel
	return res
}

// fail returns the failed result for err in step, keeping the steps so far. The code is
// err's when it carries one (timeout, limit_exceeded ...), judge_error otherwise: the
// judge answered but not usably.
func (p *pipeline) fail(step string, err error) sdk.Result {
	code, msg := judgekit.Code(err)
	res := sdk.Failed(code, fmt.Sprintf("relevancy (%s mode), %s step: %s", p.mode, step, msg))
	res.Steps = p.steps
	res.Telemetry = p.tel
	return res
}
