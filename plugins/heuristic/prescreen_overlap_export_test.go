package heuristic

import "github.com/scorekit/scorekit/sdk"

// NewPrescreenWordsShared returns the pre-screen with its word-overlap signal forced to
// "the output shares words with the input", for TestNoVerdictFromOverlap.
func NewPrescreenWordsShared() sdk.Scorer {
	p := defaultScreenParams
	p.wordsShared = true
	return &prescreen{params: p}
}
