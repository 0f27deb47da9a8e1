package heuristic

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/scorekit/scorekit/internal/textkit"
	"github.com/scorekit/scorekit/sdk"
)

// textualDifferenceScorer is the scorer NewTextualDifference returns.
type textualDifferenceScorer struct {
	// scratch holds *diffScratch, so concurrent calls each reuse their own buffers.
	scratch sync.Pool
}

// diffScratch is what one call of TextualDifference reuses from the last.
type diffScratch struct {
	wa, wb []string
	left   map[string]int32
}

var _ sdk.Scorer = (*textualDifferenceScorer)(nil)

// NewTextualDifference returns the textual difference scorer.
// A turn whose only output is its tool calls is skipped: there is no text to compare.
//
// It measures how much of the input survives in the output, as Mastra's
// textual difference scorer does: the score is 2 x LCS / (characters of input + output),
// where LCS is the longest common subsequence of characters (the ratio difflib's
// SequenceMatcher approximates). Identical texts score 1, one empty text against a
// non-empty one 0. The result's analyze step records the number of changed words, the
// length difference (|len(a) - len(b)| / max length) and confidence = 1 - length difference.
//
// The LCS is computed with the bit-parallel algorithm (64 characters per machine word), so
// texts cost O(n x m / 64) time and O(n + m) memory instead of the reference's full table.
// Beyond alignBudget word steps (two texts both longer than about 32,000 characters) the LCS
// is computed within a band around the diagonal: exact when the texts differ by fewer
// insertions and deletions than the band is wide, otherwise a lower bound, and the result
// is flagged approximated.
func NewTextualDifference() sdk.Scorer { return &textualDifferenceScorer{} }

// Info describes the scorer.
func (*textualDifferenceScorer) Info() sdk.Info {
	return describe("textual_difference",
		"Similarity ratio of input and output, 2 x longest common subsequence / total length, with the count "+
			"of changed words and the length difference. Mastra's textual difference scorer.",
		0.5, "", "")
}

// Score grades call.Run: the similarity ratio of input and output.
func (t *textualDifferenceScorer) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	if r, ok := skipToolOnly("textual_difference", &call.Run); ok {
		return r, nil
	}
	in, out := call.Run.Input, call.Run.Output
	ratio, exact, ok := lcsRatioASCII(in, out)
	la, lb := len(in), len(out)
	if !ok {
		a, b := []rune(in), []rune(out)
		var err error
		if ratio, exact, err = lcsRatio(ctx, a, b); err != nil {
			return sdk.Result{}, err
		}
		la, lb = len(a), len(b)
	}
	sc, _ := t.scratch.Get().(*diffScratch)
	if sc == nil {
		sc = &diffScratch{}
	}
	changes := sc.countChanges(in, out)
	t.scratch.Put(sc)
	lengthDiff := 0.0
	if m := max(la, lb); m > 0 {
		lengthDiff = float64(abs(la-lb)) / float64(m)
	}
	reason := string(text(make([]byte, 0, 96)).s("similarity ratio ").f2(ratio).s(" with ").d(changes).s(" changed words and a length difference of ").f0(100 * lengthDiff).s("%"))
	if !exact {
		reason = fmt.Sprintf("similarity ratio at least %.2f (approximated: both texts are too long for an exact LCS within the cost limit) with %d changed words and a length difference of %.0f%%", ratio, changes, 100*lengthDiff)
	}
	res := sdk.Scored(ratio, reason)
	if !exact {
		res.Flags = []string{FlagApproximated}
	}
	res.Steps = []sdk.Step{numbersStep("analyze", []string{"changes", "confidence", "length_diff", "ratio"},
		[]float64{float64(changes), 1 - lengthDiff, lengthDiff, ratio})}
	return res, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// lcsRatioASCII is lcsRatio for two ASCII texts of which the shorter, past their common
// prefix and suffix, has at most 64 characters (most runs): bytes are characters, and one
// machine word holds the LCS's bit vector. ok is false for any other pair.
func lcsRatioASCII(a, b string) (ratio float64, exact, ok bool) {
	if !isASCII(a) || !isASCII(b) {
		return 0, false, false
	}
	switch {
	case a == b:
		return 1, true, true
	case len(a) == 0 || len(b) == 0:
		return 0, true, true
	}
	// The bytes are only read: viewing the strings as slices copies nothing.
	x, y, p, s := trimCommon(unsafe.Slice(unsafe.StringData(a), len(a)), unsafe.Slice(unsafe.StringData(b), len(b)))
	if len(y) > 64 {
		return 0, false, false
	}
	l := p + s
	if len(y) > 0 {
		var m [utf8.RuneSelf]uint64
		for i := 0; i < len(y); i++ {
			m[y[i]] |= 1 << uint(i)
		}
		v := ^uint64(0)
		for i := 0; i < len(x); i++ {
			u := m[x[i]]
			v = (v + v&u) | (v &^ u)
		}
		if len(y) < 64 {
			v |= ^uint64(0) << uint(len(y))
		}
		l += 64 - bits.OnesCount64(v)
	}
	return 2 * float64(l) / float64(len(a)+len(b)), true, true
}

// isASCII reports whether s is all ASCII, eight bytes at a time.
func isASCII(s string) bool {
	i := 0
	if len(s) >= 8 {
		p := unsafe.Pointer(unsafe.StringData(s))
		for ; i+8 <= len(s); i += 8 {
			if *(*uint64)(unsafe.Add(p, i))&0x8080808080808080 != 0 {
				return false
			}
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lcsRatio is 2 x LCS(a, b) / (len(a) + len(b)); 1 for equal inputs, 0 when one is empty.
// exact is false when the LCS is the banded lower bound (see lcsLength).
func lcsRatio(ctx context.Context, a, b []rune) (ratio float64, exact bool, err error) {
	if slices.Equal(a, b) {
		return 1, true, nil
	}
	if len(a) == 0 || len(b) == 0 {
		return 0, true, nil
	}
	l, exact, err := lcsLength(ctx, a, b, alignBudget)
	return 2 * float64(l) / float64(len(a)+len(b)), exact, err
}

// countChanges counts changed words the way the reference does: texts equal up to white
// space differ by the difference in word count (at least 1); otherwise the larger word count
// minus the words of a greedily matched in b.
func countChanges(a, b string) int {
	var sc diffScratch
	return sc.countChanges(a, b)
}

// countChanges is countChanges with the word counts kept in sc. Valid UTF-8 is split
// into words as it is read, never into lists of words: a 1 MiB text has ~150,000 of them,
// and a list costs 16 bytes each, twice over while it grows.
func (sc *diffScratch) countChanges(a, b string) int {
	if a == b {
		return 0
	}
	if utf8.ValidString(a) && utf8.ValidString(b) {
		// Collapsing white space changes no word of valid UTF-8, so the words of the
		// texts are those of their collapsed forms, and the forms are equal when the
		// words are.
		if len(a)+len(b) <= listedBytes {
			return sc.countListed(a, b)
		}
		na, nb := countFields(a), countFields(b)
		switch {
		case na == nb && sameFields(a, b):
			return 1
		case na == 0:
			return nb
		case nb == 0:
			return na
		}
		return max(na, nb) - sc.matches(a, b, na, nb)
	}
	na, nb := textkit.CollapseSpace(a), textkit.CollapseSpace(b)
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

// listedBytes is the most text countChanges splits into lists of words (at most half as
// many words, a few KiB of list): short texts are split once, where counting, comparing
// and matching their words one pass at a time read each text three times, which a
// WebAssembly guest pays for word by word. Longer texts are read as a stream.
const listedBytes = 8 << 10

// countListed is countChanges for two short texts of valid UTF-8: each split once into
// sc's lists.
func (sc *diffScratch) countListed(a, b string) int {
	defer sc.reset()
	sc.wa, sc.wb = appendFields(sc.wa[:0], a), appendFields(sc.wb[:0], b)
	na, nb := len(sc.wa), len(sc.wb)
	switch {
	case na == nb && slices.Equal(sc.wa, sc.wb):
		return 1
	case na == 0:
		return nb
	case nb == 0:
		return na
	}
	if na*nb <= 1024 {
		return max(na, nb) - greedyMatches(sc.wa, sc.wb)
	}
	wa, wb := sc.wa, sc.wb
	if nb > na {
		wa, wb = wb, wa
	}
	if sc.left == nil {
		sc.left = make(map[string]int32, len(wb))
	}
	for _, y := range wb {
		sc.left[y]++
	}
	matched := 0
	for _, x := range wa {
		if sc.left[x] > 0 {
			sc.left[x]--
			matched++
		}
	}
	return max(na, nb) - matched
}

// asciiSpace marks the bytes unicode.IsSpace reports for ASCII.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// nextField returns the first word of s at or after i as strings.Fields splits words, and
// the index just past it; ok is false when no word is left.
func nextField(s string, i int) (word string, next int, ok bool) {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if !asciiSpace[c] {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += n
	}
	if i == len(s) {
		return "", i, false
	}
	start := i
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if asciiSpace[c] {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			break
		}
		i += n
	}
	return s[start:i], i, true
}

// countFields is len(strings.Fields(s)), without the list.
func countFields(s string) int {
	n := 0
	for _, i, ok := nextField(s, 0); ok; _, i, ok = nextField(s, i) {
		n++
	}
	return n
}

// sameFields reports whether a and b have the same words, in order.
func sameFields(a, b string) bool {
	i, j := 0, 0
	for {
		x, ni, okx := nextField(a, i)
		y, nj, oky := nextField(b, j)
		if okx != oky || x != y {
			return false
		}
		if !okx {
			return true
		}
		i, j = ni, nj
	}
}

// reset empties sc for the pool: it keeps no text alive, and drops a map grown large by
// a long text (a large map costs its size to clear).
func (sc *diffScratch) reset() {
	clear(sc.wa) // what the last call filled; a longer earlier fill was cleared by its own call
	clear(sc.wb)
	if len(sc.left) > 1<<12 {
		sc.left = nil
	}
	clear(sc.left)
}

// matches is greedyMatches of the words of a and b (na and nb of them): short texts' words
// are listed in sc's buffers, long texts' counted in sc's map, filled from the text with
// fewer words (the intersection of two multisets is symmetric).
func (sc *diffScratch) matches(a, b string, na, nb int) int {
	defer sc.reset()
	if na*nb <= 1024 {
		sc.wa, sc.wb = appendFields(sc.wa[:0], a), appendFields(sc.wb[:0], b)
		return greedyMatches(sc.wa, sc.wb)
	}
	if nb > na {
		a, b, nb = b, a, na
	}
	if sc.left == nil || nb > 1<<12 {
		sc.left = make(map[string]int32, nb)
	}
	left := sc.left
	for y, i, ok := nextField(b, 0); ok; y, i, ok = nextField(b, i) {
		left[y]++
	}
	matched := 0
	for x, i, ok := nextField(a, 0); ok; x, i, ok = nextField(a, i) {
		if left[x] > 0 {
			left[x]--
			matched++
		}
	}
	return matched
}

// appendFields appends the words of s to dst.
func appendFields(dst []string, s string) []string {
	for w, i, ok := nextField(s, 0); ok; w, i, ok = nextField(s, i) {
		dst = append(dst, w)
	}
	return dst
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
