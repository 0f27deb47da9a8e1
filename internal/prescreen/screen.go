// Package prescreen is the pre-screen's checks: what plugins/heuristic's prescreen scorer
// (heuristic.NewPrescreen, whose doc states the policy) runs on a run, and what the other
// built-in scorers share of them: the judge scorers' guard (Unanswered), what counts as a
// failed tool call (ToolCallFailed) and a turn whose only output is its tool calls
// (ToolOnly). One package holds them so that the guard and the pre-screen never disagree,
// and it is internal so that the scorers that share it need not import another scorer's
// package, nor make its checks a promise to those who link the scorers.
package prescreen

import (
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// Flags the pre-screen raises. FlagNonCommittal, FlagWrongShape and FlagOffTopic are hints
// that do not fail the run (heuristic.NewPrescreen says why); every other flag fails it, as
// FlagToolError does.
const (
	FlagEmptyOutput  = "empty_output"
	FlagErrorText    = "error_text"
	FlagPlaceholder  = "placeholder"
	FlagRefusal      = "refusal"
	FlagTruncated    = "truncated"
	FlagRepetition   = "repetition"
	FlagFiller       = "filler"
	FlagOffTopic     = "off_topic"
	FlagEcho         = "echo"
	FlagWrongShape   = "wrong_shape"
	FlagNonCommittal = "non_committal"
)

// Dimensions of the pre-screen and their weights; the host's weighted mean of the two is the
// overall score.
const (
	DimIntegrity = "integrity"
	DimRelevance = "relevance"
	// Threshold sits above 0.5, so a single dimension at 0 (a hard failure) fails the run
	// whatever the other says, while a soft doubt (relevance 0.5) alone does not.
	Threshold = 0.6
)

// OffTopicMinWords is the default of the prescreen's off_topic_min_words: how many content
// words an output needs before sharing none with the input raises the off_topic flag. It
// decides the flag only, never the verdict (QUALITY.md: at 6, 0.6% of TruthfulQA's best
// answers share no content word with their question, against 29% of the same answers
// paired with another question).
const OffTopicMinWords = 6

// CutoffMinWords is the default of the prescreen's cutoff_min_words: an output of fewer
// words is never called cut off by its last word alone (the caller's stop reason and an
// unclosed code fence still count).
const CutoffMinWords = 25

// Params are the prescreen's tunable thresholds, its config.
type Params struct {
	OffTopicMinWords int `json:"off_topic_min_words"`
	CutoffMinWords   int `json:"cutoff_min_words"`
	// WordsShared forces the word-overlap signal to "the output shares words with the
	// input" (tests only: no verdict may depend on that signal). It is never read from a
	// config.
	WordsShared bool `json:"-"`
}

// DefaultParams are the prescreen's thresholds when its config sets none.
var DefaultParams = Params{OffTopicMinWords: OffTopicMinWords, CutoffMinWords: CutoffMinWords}

// screenFinding is one reason to distrust a run.
type screenFinding struct {
	flag   string
	detail string
}

// Screen runs every check and returns the result with both dimensions and the overall
// score already computed as their weighted mean, so a caller without a host reads the
// same number the host recomputes.
func Screen(run *sdk.Run, params Params) sdk.Result {
	integrity, relevance := 1.0, 1.0
	var found []screenFinding
	out := strings.TrimSpace(run.Output)
	if out == "" {
		return screenNoText(run)
	}
	// The prepared run stays on the stack.
	var st screenText
	st.fill(run.Input, out, run.Purpose())
	st.toolFailed = anyToolCallFailed(run)
	st.outWords = splitWords(st.outLow)
	st.wordsShared = params.WordsShared
	t := &st
	end, endDetail := readCallerEnd(run.Metadata)
	hard := func(f screenFinding) {
		integrity = 0
		found = append(found, f)
	}
	if end == endErrored {
		hard(screenFinding{FlagErrorText, endDetail})
	} else if d, ok := findErrorText(t); ok {
		hard(screenFinding{FlagErrorText, d})
	}
	if d, ok := findPlaceholder(t); ok {
		hard(screenFinding{FlagPlaceholder, d})
	}
	abstains, abstained := findNonCommittal(t)
	// A refusal, like an abstention, has no answer shape to check.
	noShape := abstained
	switch d, refused := findRefusal(t); {
	case end == endRefused:
		hard(screenFinding{FlagRefusal, endDetail})
		relevance, noShape = 0, true
	case refused && !abstained:
		// "I can't say: it is not mentioned" abstains rather than refuses; see the policy.
		hard(screenFinding{FlagRefusal, d + "; whether declining was right is a judge's call"})
		relevance, noShape = 0, true
	}
	if d, ok := findRepetition(t); ok {
		hard(screenFinding{FlagRepetition, d})
	}
	if end == endTruncated {
		hard(screenFinding{FlagTruncated, endDetail})
	} else if d, ok := findTruncation(t, params.CutoffMinWords); ok && end != endFinished {
		hard(screenFinding{FlagTruncated, d})
	}
	if integrity > 0 {
		if d, ok := findFiller(t); ok {
			hard(screenFinding{FlagFiller, d})
			relevance = 0
		}
	}
	if integrity > 0 {
		if d, ok := findToolError(run, t); ok {
			hard(screenFinding{FlagToolError, d})
		}
	}
	if integrity > 0 && !noShape {
		var fs []screenFinding
		relevance, fs = shapeRelevance(t, params.OffTopicMinWords)
		found = append(found, fs...)
	}
	if abstained {
		found = append(found, screenFinding{FlagNonCommittal, abstains})
	}
	return screenResult(integrity, relevance, found)
}

func screenResult(integrity, relevance float64, found []screenFinding) sdk.Result {
	score := 0.5*integrity + 0.5*relevance
	r := sdk.Scored(score, screenReason(score, found))
	r.Dimensions = map[string]float64{DimIntegrity: integrity, DimRelevance: relevance}
	for _, f := range found {
		r.Flags = append(r.Flags, f.flag)
	}
	return r
}

func screenReason(score float64, found []screenFinding) string {
	if len(found) == 0 {
		return "no reason found to distrust this run"
	}
	var b strings.Builder
	if score < Threshold {
		b.WriteString("distrusted: ")
	} else {
		b.WriteString("passed with notes: ")
	}
	for i, f := range found {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.flag)
		b.WriteString(" (")
		b.WriteString(f.detail)
		b.WriteString(")")
	}
	return b.String()
}
