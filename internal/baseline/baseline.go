// Package baseline is the word-overlap pre-screen of the platform scorekit replaces,
// implemented as its platform described it (QUALITY.md, "How to reproduce"), so that the quality report and the
// insight tests can measure it in the same run as the scorers that replace it. It is not a
// registered scorer: nothing in the host's registry or the command line offers it.
//
// Two versions exist: the original ([OriginalRelevance]), which floors every correct short
// answer at 0.2, and the platform's proposed fix ([ProposedRelevance]), which lifts nearly
// everything to 0.5 or more. A run is flagged when its relevance is under [FlagBelow].
package baseline

import (
	"context"
	"regexp"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// FlagBelow is the relevance under which the platform flagged a run.
const FlagBelow = 0.5

// OriginalRelevance is the platform's word-overlap relevance: the set of input words
// longer than 3 characters (lower-cased, split on white space); relevance is the number of
// output words found in that set over the size of the set, capped at 1, 0.5 when the set is
// empty, floored at 0.2.
func OriginalRelevance(input, output string) float64 {
	set := wordSet(input, 3)
	if len(set) == 0 {
		return 0.5
	}
	r := float64(found(output, set)) / float64(len(set))
	return max(min(r, 1), 0.2)
}

// structuredPattern is the proposed fix's character class as written: it was meant to
// match markdown and emoji, but "emoji" inside the class also matches e, m, o, j and i.
var structuredPattern = regexp.MustCompile(`[\*\-\#\:emoji\|]`)

// ProposedRelevance is the platform's proposed fix: words longer than 2 characters, the
// denominator capped at 10; a "structured" output (a newline, over 100 characters, or a
// match of the character class) gets max(0.5, 0.5 + 0.5 x overlap), others max(overlap, 0.3).
func ProposedRelevance(input, output string) float64 {
	set := wordSet(input, 2)
	overlap := 0.5
	if len(set) > 0 {
		overlap = min(float64(found(output, set))/float64(min(len(set), 10)), 1)
	}
	if strings.Contains(output, "\n") || len(output) > 100 || structuredPattern.MatchString(output) {
		return max(0.5, 0.5+0.5*overlap)
	}
	return max(overlap, 0.3)
}

func wordSet(s string, longer int) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(s)) {
		if len(w) > longer {
			set[w] = true
		}
	}
	return set
}

func found(output string, set map[string]bool) int {
	n := 0
	for _, w := range strings.Fields(strings.ToLower(output)) {
		if set[w] {
			n++
		}
	}
	return n
}

// Name is the name the [New] scorer reports.
const Name = "word_overlap"

// New returns the original word-overlap relevance as an sdk.Scorer ("word_overlap", range
// 0-1, threshold [FlagBelow]), so tests can score runs with it through the host exactly as
// they score them with the scorers that replace it.
func New() sdk.Scorer { return scorer{} }

type scorer struct{}

var _ sdk.Scorer = scorer{}

func (scorer) Info() sdk.Info {
	return sdk.Info{
		Name:        Name,
		Version:     "1.0.0",
		ABIVersion:  sdk.ABIVersion,
		Description: "The replaced platform pre-screen: input words longer than 3 characters found in the output, floored at 0.2. A baseline for measurements, not a scorer to use.",
		Range:       sdk.Unit,
		Threshold:   FlagBelow,
	}
}

func (scorer) Score(_ context.Context, call sdk.Call) (sdk.Result, error) {
	return sdk.Scored(OriginalRelevance(call.Run.Input, call.Run.Output), "share of the input's long words found in the output"), nil
}
