// Package heuristic holds scorers that need no LLM: the tier-1 pre-screen and the
// deterministic scorers users know from Mastra and autoevals.
//
// The pre-screen's policies for refusals (every refusal fails, in every language; a judge
// decides whether declining was right), for weak evidence (a hint that does not fail the run)
// and for non-committal answers are documented on [NewPrescreen] and measured in QUALITY.md.
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
