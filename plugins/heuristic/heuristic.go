// Package heuristic holds scorers that need no LLM: the tier-1 pre-screen and the
// deterministic scorers users know from Mastra and autoevals.
//
// The pre-screen's policies for refusals (every refusal fails, in every language; a judge
// decides whether declining was right), for weak evidence (a hint that does not fail the run)
// and for non-committal answers are documented on [NewPrescreen] and measured in QUALITY.md.
//
// A turn that does its job through tools (a meeting cancelled by a call, and no text) is
// judged on what it did: the pre-screen reads its calls (see [NewPrescreen], "Actions"),
// and every other scorer here compares text, so it skips such a turn with a reason rather
// than score it 0.
//
// The pre-screen's checks live in internal/prescreen, which the judge scorers share for
// their guard against answers nothing could grade; this package is the scorers.
package heuristic

import "github.com/scorekit/scorekit/sdk"

// Factories returns a factory for every scorer in the package.
func Factories() []func() sdk.Scorer {
	return []func() sdk.Scorer{
		// Each scorer adds its constructor here.
		NewPrescreen,
		NewCompleteness,
		NewContentSimilarity,
		NewKeywordCoverage,
		NewTextualDifference,
		NewTone,
		NewExactMatch,
		NewLevenshtein,
		NewNumericDiff,
		NewJSONValid,
		NewListContains,
	}
}
