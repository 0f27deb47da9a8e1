package contextprecision

import (
	"github.com/scorekit/scorekit/sdk"
)

// similarityVerdicts marks a passage relevant when its best similarity to a reference
// passage reaches threshold, as Ragas' non-LLM context precision does.
func similarityVerdicts(ps []sdk.Passage, refs []string, threshold float64) ([]bool, []sdk.Step) {
	verdicts := make([]bool, len(ps))
	best := make([]float64, len(ps))
	for i, p := range ps {
		for _, r := range refs {
			if s := Similarity(p.Text, r); s > best[i] {
				best[i] = s
			}
		}
		verdicts[i] = best[i] >= threshold
	}
	return verdicts, []sdk.Step{step("analyze", "", map[string]any{"similarity": best, "threshold": threshold, "verdicts": verdicts})}
}

// Similarity is 1 - Levenshtein distance / length of the longer string, over Unicode code
// points: 1 for equal strings (two empty strings included), 0 when nothing aligns.
func Similarity(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	n := max(len(ra), len(rb))
	if n == 0 {
		return 1
	}
	return 1 - float64(levenshtein(ra, rb))/float64(n)
}

// levenshtein is the edit distance with unit costs, in O(min(len)) memory.
func levenshtein(a, b []rune) int {
	if len(a) < len(b) {
		a, b = b, a
	}
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		prev := row[0]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			cur := row[j]
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			row[j] = min(row[j]+1, row[j-1]+1, prev+cost)
			prev = cur
		}
	}
	return row[len(b)]
}
