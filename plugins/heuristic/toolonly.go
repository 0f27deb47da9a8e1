package heuristic

import (
	"github.com/scorekit/scorekit/internal/prescreen"
	"github.com/scorekit/scorekit/sdk"
)

// skipToolOnly returns the skipped result of a text-comparing scorer for a turn whose
// only output is its tool calls: there is no text to compare, and 0 would call a turn
// that did its job a failure.
func skipToolOnly(name string, run *sdk.Run) (sdk.Result, bool) {
	if !prescreen.ToolOnly(run) {
		return sdk.Result{}, false
	}
	return sdk.Skipped(name + " compares text, and this turn's only output is its tool calls; " +
		"grade what it did with tool_calls, prescreen or a judge scorer (relevancy)"), true
}
