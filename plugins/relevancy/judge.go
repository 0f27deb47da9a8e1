package relevancy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/verdict"
)

const judgeSystem = `You grade whether an AI agent's output does what its input required. You are strict about ` +
	`the task and indifferent to wording. You answer with one JSON object and nothing else.`

// judgeInstructions precede the run. They are constant so that an endpoint's prompt
// cache can reuse them.
const judgeInstructions = `Decide whether what the agent produced, its OUTPUT and its ACTIONS when it took any, addresses what its INPUT required.

What the input requires depends on the agent's purpose. A question requires an answer. A request requires the action to be performed, or its result reported. Raw material (an email, a document, a ticket, a log) requires the transformation the agent exists for: a triage, a summary, a classification, a reply, an extraction.

An agent may do what was asked through tools. Its ACTIONS (the tools it called, with their arguments and what each returned) are part of what it produced, as much as its text: a request performed through a tool call whose result shows it was done is addressed, even when the agent said nothing. A call whose result is an error did not perform the action, unless a later call did; an output that reports success the results do not show does not address the request.

Relevance is not word overlap. A one-word answer that answers the question is fully relevant although it repeats none of the question's words. A long output that repeats the input's words but does not do what was required is not relevant. Do not judge factual correctness; other checks do that. A direct answer of the right kind addresses the question even if it may be wrong. Extra material that does not get in the way costs little; material in place of the requested result costs a lot.

Examples:
- Input: "What is the capital of France?" Output: "Paris". Score 1.0: it answers the question directly.
- Purpose: triage incoming support email and post a summary to Slack. Input: a raw customer email asking for a refund of a double charge. Output: "Billing / refund request, priority P2. Customer was charged twice for order 1234 and asks for a refund; reply within 24h." Score 1.0: the triage is exactly what the input required, although it shares few words with the email.
- Input: "Cancel my 3pm meeting with Dana." Output: "Done: your 3pm with Dana is cancelled and she has been notified." Score 1.0: the action was performed and reported.
- Input: "Cancel my 3pm meeting." Actions: cancel_event({"time": "15:00"}), result {"cancelled": true}. Output: nothing. Score 1.0: it completes the requested action.
- Input: "Cancel my 3pm meeting." Actions: cancel_event({"time": "15:00"}), result {"error": "calendar unavailable"}. Output: "Done, it is cancelled." Score 0.0: the action failed and the output claims it succeeded.
- Input: "What is the capital of France?" Output: "France is famous for its cuisine and its wine." Score 0.1: on the topic, but it does not answer.
- Input: "Summarize the attached contract." Output: "ERROR: upstream timeout". Score 0.0: it does nothing that was required.

Refusals: refusing a harmful or dangerous request is the right response and addresses it. Refusing a harmless request does not. An honest "I don't know" to a question that cannot be answered addresses it in part.

Rubric (0 to 1):
- 1.0: does what the input required, fully and directly, in its output or its actions.
- 0.7 to 0.9: does it, with a minor omission or with distracting extra material.
- 0.4 to 0.6: does part of what was required, or does it only indirectly.
- 0.1 to 0.3: stays on the topic but does not do what was required.
- 0.0: unrelated, empty, an error message, or a refusal of a harmless request.`

// judgeAnswer is the JSON the judge is asked for.
type judgeAnswer struct {
	Score     any    `json:"score"`
	Reasoning string `json:"reasoning"`
}

// judgePrompt builds the prompt: instructions, the agent's purpose when known, then the
// input, the agent's actions (tool calls and results) when it made any, the output, then
// the answer format.
func judgePrompt(run *sdk.Run) string {
	var b strings.Builder
	b.WriteString(judgeInstructions)
	if purpose := run.Purpose(); purpose != "" {
		b.WriteString("\n\nThe agent's purpose (from its instructions):\n<purpose>\n")
		b.WriteString(purpose)
		b.WriteString("\n</purpose>")
	}
	b.WriteString("\n\nINPUT (what the agent was given):\n<input>\n")
	b.WriteString(run.Input)
	b.WriteString("\n</input>\n\n")
	if actions := run.ToolCallsText(); actions != "" {
		b.WriteString("ACTIONS (the tools the agent called, in order, and what each returned):\n<actions>\n")
		b.WriteString(actions)
		b.WriteString("\n</actions>\n\n")
	}
	b.WriteString("OUTPUT (what the agent said):\n<output>\n")
	if strings.TrimSpace(run.Output) == "" && len(run.ToolCalls) > 0 {
		b.WriteString("(nothing: the agent answered through its actions alone)")
	} else {
		b.WriteString(run.Output)
	}
	b.WriteString("\n</output>\n\n")
	b.WriteString(`Reply with JSON only: {"reasoning": "<one or two sentences>", "score": <a number from 0 to 1>}`)
	return b.String()
}

// judgeMode asks the judge once.
func (p *pipeline) judgeMode() sdk.Result {
	prompt := judgePrompt(p.run)
	recorded := judgeSystem + "\n\n" + prompt
	resp, err := p.ask(judgeSystem, prompt, 0)
	if err != nil {
		p.step("judge", recorded, nil)
		return p.fail("judge", err)
	}
	var ans judgeAnswer
	if err := verdict.Extract(resp.Content, &ans); err != nil {
		// A judge that answers with the bare score ("100", "0.9") said what was asked.
		bare := strings.Trim(strings.TrimSpace(resp.Content), `"`)
		if _, nerr := verdict.Number(bare); !errors.Is(err, verdict.ErrNoJSON) || nerr != nil {
			p.step("judge", recorded, map[string]any{"raw": resp.Content})
			return p.fail("judge", err)
		}
		ans.Score = bare
	}
	score, err := verdict.Score(ans.Score)
	if err != nil {
		p.step("judge", recorded, map[string]any{"raw": resp.Content})
		return p.fail("judge", withRaw(err, resp.Content))
	}
	p.step("judge", recorded, map[string]any{"score": score, "raw_score": ans.Score, "reasoning": ans.Reasoning})
	reason := ans.Reasoning
	if reason == "" {
		reason = "the judge gave no reasoning"
	}
	// verdict.Score read a bare number above 1 as a percentage ("95%" states its scale).
	if raw, err := verdict.Number(fmt.Sprint(ans.Score)); err == nil && raw > 1 {
		return p.scored(score, reason, verdict.FlagPercentageScale)
	}
	return p.scored(score, reason)
}

// withRaw adds the judge's raw answer to an error that lacks it.
func withRaw(err error, raw string) error {
	if len(raw) > 500 {
		raw = raw[:500] + "..."
	}
	return &rawErr{err: err, raw: raw}
}

type rawErr struct {
	err error
	raw string
}

func (e *rawErr) Error() string { return e.err.Error() + "; judge output: " + e.raw }
func (e *rawErr) Unwrap() error { return e.err }
