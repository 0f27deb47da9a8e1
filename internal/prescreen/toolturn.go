package prescreen

import (
	"encoding/json"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// An agent acts through tools: a turn whose only output is a calendar event cancelled or
// a ticket filed has done its job without a word. The scorers here read a run's tool
// calls as part of what the agent produced: the pre-screen never calls a turn with calls
// empty, and the scorers that compare text skip a turn that has none rather than score
// it 0.

// ToolOnly reports whether a run's only output is its tool calls: no text, at least one
// call. Scorers that compare text skip such a run rather than score it 0, since there is
// no text to compare.
func ToolOnly(run *sdk.Run) bool {
	return len(run.ToolCalls) > 0 && strings.TrimSpace(run.Output) == ""
}

// ToolCallFailed reports whether the result a run records for a call says the call
// failed: a JSON object with a non-empty "error" (or "errorText"), "is_error" or
// "isError" true (Anthropic's tool results, MCP), or "success" or "ok" false; or text
// that is an error message, a stack trace or a provider failure (the pre-screen's error
// check; not under an input about errors when the pre-screen asks, since a tool asked for
// errors returns them). A call without a recorded result has not failed as far as anyone
// can tell.
func ToolCallFailed(c sdk.ToolCall) bool { return callFailed("", c) }

// callFailed is ToolCallFailed for a call made to answer input: when the input is about
// errors ("show me the errors the payments service logged"), a text result full of errors
// is what was asked for, so only a result's own error flags count.
func callFailed(inputLow string, c sdk.ToolCall) bool {
	res := strings.TrimSpace(c.Result)
	if res == "" {
		return false
	}
	if res[0] == '{' {
		var obj map[string]any
		if json.Unmarshal([]byte(res), &obj) == nil {
			return objectSaysFailed(obj)
		}
	}
	if mentionsErrors(inputLow) {
		return false
	}
	flag, ok := GrossFailure(res, nil)
	return ok && flag == FlagErrorText
}

func objectSaysFailed(obj map[string]any) bool {
	for _, k := range [...]string{"error", "errorText", "error_text"} {
		if present(obj[k]) {
			return true
		}
	}
	for _, k := range [...]string{"is_error", "isError"} {
		if b, ok := obj[k].(bool); ok && b {
			return true
		}
	}
	for _, k := range [...]string{"success", "ok"} {
		if b, ok := obj[k].(bool); ok && !b {
			return true
		}
	}
	return false
}
