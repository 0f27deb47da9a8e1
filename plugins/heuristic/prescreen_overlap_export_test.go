package heuristic

import (
	"github.com/scorekit/scorekit/internal/prescreen"
	"github.com/scorekit/scorekit/sdk"
)

// NewPrescreenWordsShared returns the pre-screen with its word-overlap signal forced to
// "the output shares words with the input", for TestNoVerdictFromOverlap.
func NewPrescreenWordsShared() sdk.Scorer {
	p := prescreen.DefaultParams
	p.WordsShared = true
	return &prescreenScorer{params: p}
}
