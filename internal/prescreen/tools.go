package prescreen

import (
	"strconv"
	"strings"

	"github.com/scorekit/scorekit/internal/textkit"
	"github.com/scorekit/scorekit/sdk"
)

// FlagToolError is raised when every tool call of a turn failed and its answer says
// nothing of it: the agent did not do what was asked and did not tell the user.
const FlagToolError = "tool_error"

// anyToolCallFailed reports whether a call of the run returned an error.
func anyToolCallFailed(run *sdk.Run) bool {
	if len(run.ToolCalls) == 0 {
		return false
	}
	inputLow := foldLower(headAndTail(run.Input, maxScreenInput))
	for _, c := range run.ToolCalls {
		if callFailed(inputLow, c) {
			return true
		}
	}
	return false
}

// allToolCallsFailed reports whether the run made calls and every one of them failed. A
// failure followed by a retry that worked is not a failed turn.
func allToolCallsFailed(run *sdk.Run) bool {
	if len(run.ToolCalls) == 0 {
		return false
	}
	inputLow := foldLower(headAndTail(run.Input, maxScreenInput))
	for _, c := range run.ToolCalls {
		if !callFailed(inputLow, c) {
			return false
		}
	}
	return true
}

// toolFailureDetail says which calls failed, with the first one's result: "its tool call
// failed (cancel_event: "{\"error\":\"calendar unavailable\"}")", "all 3 of its tool calls
// failed (...)".
func toolFailureDetail(run *sdk.Run) string {
	c := run.ToolCalls[0]
	what := "its tool call failed ("
	if n := len(run.ToolCalls); n > 1 {
		what = "all " + strconv.Itoa(n) + " of its tool calls failed (the first, "
	}
	return what + c.Name + ": " + strconv.Quote(textkit.Clip(strings.TrimSpace(c.Result), 80)) + ")"
}

// screenNoText screens a turn without text. One that did nothing either is empty, unless
// the caller recorded the error that stopped it (an agent that crashed: error_text). One
// whose only output is its tool calls has no text to check, so it passes unless every
// call failed (tool_error) or the caller recorded how it ended badly (an error, a
// refusal, a cut-off).
func screenNoText(run *sdk.Run) sdk.Result {
	end, endDetail := readCallerEnd(run.Metadata)
	switch {
	case end == endErrored && len(run.ToolCalls) == 0:
		return screenResult(0, 0, []screenFinding{{FlagErrorText, endDetail + "; the output is empty"}})
	case len(run.ToolCalls) == 0:
		return screenResult(0, 0, []screenFinding{{FlagEmptyOutput, "the output is empty"}})
	case end == endErrored:
		return screenResult(0, 1, []screenFinding{{FlagErrorText, endDetail}})
	case end == endRefused:
		return screenResult(0, 0, []screenFinding{{FlagRefusal, endDetail}})
	case end == endTruncated:
		return screenResult(0, 1, []screenFinding{{FlagTruncated, endDetail}})
	case allToolCallsFailed(run):
		return screenResult(0, 1, []screenFinding{{FlagToolError, toolFailureDetail(run) + " and the turn says nothing to the user"}})
	}
	r := screenResult(1, 1, nil)
	r.Reason = "no reason found to distrust this run: it acted through " + callNames(run.ToolCalls) + " without text, as an action may"
	return r
}

// noTextUnanswered is [Unanswered] for a turn without text, read as screenNoText reads it.
func noTextUnanswered(run *sdk.Run) (flag, detail string, ok bool) {
	if end, why := readCallerEnd(run.Metadata); end == endErrored {
		return FlagErrorText, why, true
	}
	if len(run.ToolCalls) == 0 {
		return FlagEmptyOutput, "the output is empty", true
	}
	if allToolCallsFailed(run) {
		return FlagToolError, toolFailureDetail(run) + " and the turn says nothing to the user", true
	}
	return "", "", false
}

// callNames says which tools a turn called: "1 tool call (cancel_event)", "3 tool calls
// (search, search, send_email)", at most five names.
func callNames(calls []sdk.ToolCall) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(calls)))
	if len(calls) == 1 {
		b.WriteString(" tool call (")
	} else {
		b.WriteString(" tool calls (")
	}
	for i, c := range calls {
		if i == 5 {
			b.WriteString(", ...")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Name)
	}
	b.WriteString(")")
	return b.String()
}

// findToolError reports a turn that answered in text although every call it made failed,
// without a word of the failure: "Done, your meeting is cancelled" after the calendar
// refused. An answer that reports the failure ("I couldn't reach the calendar") is
// honest and passes; so does one whose retry worked.
func findToolError(run *sdk.Run, t *screenText) (string, bool) {
	if !allToolCallsFailed(run) || mentionsFailure(t.outLow) {
		return "", false
	}
	return toolFailureDetail(run) + " and the answer does not say so", true
}

// mentionsFailure reports whether a lower-cased answer speaks of something having gone
// wrong, in the words answers use for it in the languages the pre-screen reads. A wide
// net on purpose: missing a report here raises a false tool_error, which costs more than
// passing a turn the judge can still grade.
func mentionsFailure(low string) bool {
	for _, w := range failureWords {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

var failureWords = [...]string{
	// English
	"fail", "error", "unable", "couldn't", "could not", "can't", "cannot", "wasn't able",
	"was not able", "not able to", "unavailable", "didn't work", "did not work",
	"went wrong", "problem", "issue", "timed out", "timeout", "not found", "denied",
	"try again", "retry", "sorry", "unfortunately", "invalid", "rejected", "refused",
	"is down", "outage", "not possible", "impossible", "didn't go through",
	"did not go through", "unsuccessful", "no luck", "not reachable", "unreachable",
	// Spanish, Portuguese, Italian, French
	"no pude", "no se pudo", "fallo", "falló", "lo siento", "não foi possível", "não consegui",
	"falha", "erro", "non è stato possibile", "non sono riuscit", "errore", "impossibile",
	"je n'ai pas pu", "n'a pas pu", "échec", "erreur", "désolé",
	// German, Dutch
	"fehler", "fehlgeschlagen", "nicht möglich", "konnte nicht", "leider", "mislukt",
	"fout", "kon niet",
	// Russian, Polish, Turkish
	"ошибк", "не удалось", "не получилось", "błąd", "nie udało", "hata", "başarısız",
	// Chinese, Japanese, Korean
	"失败", "失敗", "错误", "錯誤", "无法", "無法", "エラー", "できませんでした", "오류", "실패",
	// Arabic, Hindi
	"خطأ", "فشل", "त्रुटि", "विफल",
}
