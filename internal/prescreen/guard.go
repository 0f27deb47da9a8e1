package prescreen

import (
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// Unanswered is the judge scorers' guard: it reports whether run's output answers nothing a
// judge could grade, so the scorer records flag instead of paying for a call. It is
// [GrossFailure] (an empty output, an error the caller recorded in metadata, an error
// message, stack trace or provider failure where an answer should be) with the input taken
// into account: output that looks like an error because it quotes or explains an error the
// input itself is about ("my script prints a traceback; why?") is left to the judge, as the
// pre-screen leaves it. A turn whose only output is its tool calls did something a judge
// can grade, unless every call failed (FlagToolError) or the caller recorded an error.
// detail says what was found. It uses the pre-screen's own checks, so
// the guard and the pre-screen never disagree.
func Unanswered(run *sdk.Run) (flag, detail string, ok bool) {
	if strings.TrimSpace(run.Output) == "" {
		return noTextUnanswered(run)
	}
	flag, ok = GrossFailure(run.Output, run.Metadata)
	switch {
	case !ok:
		return "", "", false
	case flag == FlagEmptyOutput:
		return flag, "the output is empty", true
	}
	if end, why := readCallerEnd(run.Metadata); end == endErrored {
		return FlagErrorText, why, true
	}
	var t screenText
	t.fill(run.Input, strings.TrimSpace(run.Output), "")
	t.toolFailed = anyToolCallFailed(run)
	if d, found := findErrorText(&t); found {
		return FlagErrorText, "the output is an error, not an answer (" + d + ")", true
	}
	return "", "", false
}
