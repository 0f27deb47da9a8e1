package heuristic

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/scorekit/scorekit/sdk"
)

// TextualDifference measures how much of the input survives in the output, as Mastra's
// textual difference scorer does: the score is 2 x LCS / (characters of input + output),
// where LCS is the longest common subsequence of characters (the ratio difflib's
// SequenceMatcher approximates). Identical texts score 1, one empty text against a
// non-empty one 0. The result's analyze step records the number of changed words, the
// length difference (|len(a) - len(b)| / max length) and confidence = 1 - length difference.
//
// The LCS is computed with the bit-parallel algorithm (64 characters per machine word), so
// long texts cost O(n x m / 64) time and O(m) memory instead of the reference's full table.
type TextualDifference struct{}

var _ sdk.Scorer = (*TextualDifference)(nil)

// NewTextualDifference returns the textual difference scorer.
func NewTextualDifference() sdk.Scorer { return &TextualDifference{} }

// Info describes the scorer.
func (*TextualDifference) Info() sdk.Info {
	return describe("textual_difference",
		"Similarity ratio of input and output, 2 x longest common subsequence / total length, with the count "+
			"of changed words and the length difference. Mastra's textual difference scorer.",
		0.5, "", "")
}

// Score grades call.Run: the similarity ratio of input and output.
func (*TextualDifference) Score(_ context.Context, call sdk.Call) (sdk.Result, error) {
	a, b := []rune(call.Run.Input), []rune(call.Run.Output)
	ratio := lcsRatio(a, b)
	changes := countChanges(call.Run.Input, call.Run.Output)
	lengthDiff := 0.0
	if m := max(len(a), len(b)); m > 0 {
		lengthDiff = float64(abs(len(a)-len(b))) / float64(m)
	}
	res := sdk.Scored(ratio, fmt.Sprintf("similarity ratio %.2f with %d changed words and a length difference of %.0f%%", ratio, changes, 100*lengthDiff))
	res.Steps = []sdk.Step{step("analyze", map[string]float64{
		"ratio": ratio, "changes": float64(changes), "length_diff": lengthDiff, "confidence": 1 - lengthDiff,
	})}
	return res, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// lcsRatio is 2 x LCS(a, b) / (len(a) + len(b)); 1 for equal inputs, 0 when one is empty.
func lcsRatio(a, b []rune) float64 {
	if slices.Equal(a, b) {
		return 1
	}
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	return 2 * float64(lcsLength(a, b)) / float64(len(a)+len(b))
}

// lcsLength returns the length of the longest common subsequence of a and b, with the
// bit-vector algorithm: V starts all ones over a's positions; for each character c of b,
// with M the positions of c in a, U = V & M and V = (V + U) | (V &^ M). The LCS is the
// number of zero bits left in V.
func lcsLength(a, b []rune) int {
	if len(a) > len(b) {
		a, b = b, a // the bit vector spans the shorter text
	}
	words := (len(a) + 63) / 64
	// index maps a character of a to its mask: ASCII through a table (slot k+1; 0 is none),
	// the rest through a map, as map operations are dear as wasm.
	var ascii [utf8.RuneSelf]int32
	var other map[rune]int
	find := func(r rune) (int, bool) {
		if r >= 0 && r < utf8.RuneSelf {
			k := ascii[r]
			return int(k) - 1, k > 0
		}
		k, ok := other[r]
		return k, ok
	}
	var masks []uint64
	for i, r := range a {
		k, ok := find(r)
		if !ok {
			k = len(masks) / words
			if r >= 0 && r < utf8.RuneSelf {
				ascii[r] = int32(k + 1)
			} else {
				if other == nil {
					other = make(map[rune]int)
				}
				other[r] = k
			}
			masks = append(masks, make([]uint64, words)...)
		}
		masks[k*words+i/64] |= 1 << (uint(i) % 64)
	}
	v := make([]uint64, words)
	for i := range v {
		v[i] = ^uint64(0)
	}
	for _, r := range b {
		k, ok := find(r)
		if !ok {
			continue // M = 0 leaves V unchanged
		}
		m := masks[k*words : (k+1)*words]
		var carry uint64
		for i := range v {
			u := v[i] & m[i]
			sum, c := bits.Add64(v[i], u, carry)
			carry = c
			v[i] = sum | (v[i] &^ m[i])
		}
	}
	zeros := 0
	for i, x := range v {
		if i == words-1 && len(a)%64 != 0 {
			x |= ^uint64(0) << uint(len(a)%64) // bits past the end of a are not positions
		}
		zeros += 64 - bits.OnesCount64(x)
	}
	return zeros
}

// countChanges counts changed words the way the reference does: texts equal up to white
// space differ by the difference in word count (at least 1); otherwise the larger word count
// minus the words of a greedily matched in b.
func countChanges(a, b string) int {
	na, nb := collapseSpace(a), collapseSpace(b)
	if na == nb {
		if a != b {
			return max(abs(len(strings.Fields(a))-len(strings.Fields(b))), 1)
		}
		return 0
	}
	wa, wb := strings.Fields(na), strings.Fields(nb)
	switch {
	case len(wa) == 0:
		return len(wb)
	case len(wb) == 0:
		return len(wa)
	}
	return max(len(wa), len(wb)) - greedyMatches(wa, wb)
}

// greedyMatches counts the words of wa matched, in order, to the first unused equal word
// of wb. That is the size of the multiset intersection, so long texts count it with a map
// instead of comparing every pair.
func greedyMatches(wa, wb []string) int {
	matched := 0
	if len(wa)*len(wb) <= 1024 {
		used := make([]bool, len(wb))
		for _, x := range wa {
			for j, y := range wb {
				if !used[j] && x == y {
					used[j] = true
					matched++
					break
				}
			}
		}
		return matched
	}
	left := make(map[string]int, len(wb))
	for _, y := range wb {
		left[y]++
	}
	for _, x := range wa {
		if left[x] > 0 {
			left[x]--
			matched++
		}
	}
	return matched
}
