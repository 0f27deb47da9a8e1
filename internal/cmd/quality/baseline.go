package main

import (
	"regexp"
	"strings"
)

// The platform pre-screen that scorekit replaces, implemented as ../shared/PEERS.md
// describes it, so the report measures it in the same run. Neither is a registered scorer.

// baselineFlagBelow is the relevance under which the platform flagged a run.
const baselineFlagBelow = 0.5

// originalRelevance is the platform's word-overlap relevance: the set of input words
// longer than 3 characters (lower-cased, split on white space); relevance is the number of
// output words found in that set over the size of the set, capped at 1, 0.5 when the set is
// empty, floored at 0.2.
func originalRelevance(input, output string) float64 {
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

// proposedRelevance is the platform's proposed fix: words longer than 2 characters, the
// denominator capped at 10; a "structured" output (a newline, over 100 characters, or a
// match of the character class) gets max(0.5, 0.5 + 0.5 x overlap), others max(overlap, 0.3).
func proposedRelevance(input, output string) float64 {
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
