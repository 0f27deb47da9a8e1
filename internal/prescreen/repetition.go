package prescreen

import (
	"strconv"
	"strings"

	"github.com/scorekit/scorekit/internal/textkit"
)

// findRepetition finds degenerate loops: the same line or block of lines back to back, a
// word stuttered, or text that keeps repeating the same phrases.
//
// Repeated structure is not a loop: the same bold heading on every day of an itinerary, the
// same label line in every section of a list, "if err != nil {" after every call. A loop
// repeats with nothing between the copies, so only back-to-back copies count. Code repeats
// lines by design (unrolled statements, array literals), so in code a loop needs many more
// copies and the phrase count does not apply.
func findRepetition(t *screenText) (string, bool) {
	// The prose around fenced code is read as prose; an output that is code through and
	// through is read as code (asked only once something repeats: most outputs do not).
	prose := t.outLow
	ws := t.outWords
	if strings.Contains(prose, "```") {
		prose = stripCode(prose)
		ws = splitWords(prose)
	}
	// The same word many times in a row: "the the the the ...". Numbers repeat in the data
	// code holds ("0, 0, 0, 0").
	run := 1
	for i := 1; i < len(ws); i++ {
		if ws[i] == ws[i-1] {
			run++
			if (run >= 6 && !t.isCode() || run >= 12 && !isNumberToken(ws[i])) && stuttered(prose, ws[i], run) {
				return strconv.Quote(ws[i]) + " repeated " + strconv.Itoa(run) + " times in a row", true
			}
		} else {
			run = 1
		}
	}
	block, n := backToBackLines(prose, 4)
	if n > 0 && n < 10 && t.isCode() {
		n = 0
	}
	if n == 0 && len(prose) < len(t.outLow) {
		block, n = backToBackLines(t.outLow, 10) // inside the fences, as code
	}
	if n > 0 {
		if len(block) > 40 {
			block = block[:40] + "..."
		}
		return strconv.Quote(block) + " repeats " + strconv.Itoa(n) + " times back to back", true
	}
	if d, ok := findBlockLoop(t); ok {
		return d, true
	}
	// Few distinct 4-word phrases in a long text: it loops. Code is not read this way.
	if len(ws) < 40 || t.isCode() {
		return "", false
	}
	// A 4-word phrase is keyed by a hash of its words' hashes: no strings are built.
	hs := make([]uint64, len(ws))
	for i, w := range ws {
		hs[i] = fnv64(w)
	}
	grams := make(map[uint64]struct{}, len(ws))
	for i := 0; i+4 <= len(hs); i++ {
		grams[((hs[i]*31+hs[i+1])*31+hs[i+2])*31+hs[i+3]] = struct{}{}
	}
	total := len(ws) - 3
	if distinct := len(grams); float64(distinct) < 0.4*float64(total) {
		return strconv.Itoa(distinct) + " distinct 4-word phrases in " + strconv.Itoa(total), true
	}
	return "", false
}

// stuttered reports whether the word w is written n times in a row with only white space
// between the copies: "the the the". The same word in a list of values ("[None, None],
// [None, None]") is data, not a stutter.
func stuttered(prose, w string, n int) bool {
	return strings.Contains(textkit.CollapseSpace(prose), strings.TrimSpace(strings.Repeat(w+" ", n)))
}

// isNumberToken reports whether a word is a number: "0", "42", "0xfc".
func isNumberToken(w string) bool {
	return w != "" && w[0] >= '0' && w[0] <= '9'
}

// backToBackLines finds a block of one to three lines (of 12 characters or more in all) that
// repeats at least minCopies times (three times for a block of two or three lines, when
// minCopies is four) with nothing between the copies but blank lines. It returns the block's
// first line and the number of copies. It reads the lines once, keeping the last three.
func backToBackLines(s string, minCopies int) (string, int) {
	var last [4]string // last[0] is the current line, last[k] the line k before it
	var run [4]int     // run[k]: how many lines in a row equal the line k before them
	seen := 0
	found, copies := "", 0
	forEachLine(s, func(l string) bool {
		copy(last[1:], last[:3])
		last[0] = l
		seen++
		for k := 1; k <= 3; k++ {
			if seen <= k || last[0] != last[k] {
				run[k] = 0
				continue
			}
			run[k]++
			size := 0
			for _, b := range last[:k] {
				size += len(b)
			}
			need := minCopies
			if k > 1 {
				need = max(3, minCopies-1)
			}
			if n := run[k]/k + 1; size >= 12 && n >= need {
				found, copies = last[k-1], n
				return false
			}
		}
		return seen < 400
	})
	return found, copies
}
