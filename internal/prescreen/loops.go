package prescreen

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/scorekit/scorekit/internal/textkit"
)

// A loop is the same block back to back, whatever it holds: a model stuck in one writes a
// sentence, a paragraph, a function or its whole answer again, with nothing between the
// copies but white space (issue 32). Repeated structure is not a loop: a table's rows, a
// list's items and an itinerary's headings differ from one another, or sit between other
// lines; a ruled line for the user to write on holds no words. So a block counts when its
// copies follow one another exactly (white space aside) and it holds enough words to be a
// statement of its own.
const (
	// loopMinChars and loopMinWords: the least a block of lines must hold to count twice.
	loopMinChars = 40
	loopMinWords = 3
	// loopMinPeriod: the least a text repeated whole, or within one line, must hold.
	loopMinPeriod = 24
	// loopMaxLines: the longest block of lines compared (a function of 40 lines and its fence).
	loopMaxLines = 60
)

// findBlockLoop finds a block repeated back to back: a block of lines (a paragraph, a
// function, a whole fenced answer) twice in a row, or a text or a line that is one block
// written two times or more. An input that asks for a repetition ("repeat it three times")
// is answered by one.
func findBlockLoop(t *screenText) (string, bool) {
	if strings.Contains(t.inLow, "repeat") {
		return "", false
	}
	if b, n := periodicText(t.out); n >= 2 {
		return strconv.Quote(textkit.Clip(b, 40)) + ": the whole output is this block " + strconv.Itoa(n) + " times back to back", true
	}
	if b, n := repeatedLineBlock(t.out, t.isCode()); n >= 2 {
		return strconv.Quote(textkit.Clip(b, 40)) + ": a block of lines written " + strconv.Itoa(n) + " times back to back", true
	}
	if t.isCode() {
		return "", false
	}
	var found string
	var copies int
	forEachLine(t.out, func(l string) bool {
		if len(l) >= 2*loopMinPeriod {
			found, copies = periodicText(l)
		}
		return copies < 2
	})
	if copies >= 2 {
		return strconv.Quote(textkit.Clip(found, 40)) + ": a line that is this block " + strconv.Itoa(copies) + " times back to back", true
	}
	return "", false
}

// periodicText reports whether s, white space aside, is one block written two times or more
// back to back (the last copy may stop short): the block and the number of whole copies.
// The block must hold loopMinPeriod bytes and loopMinWords words. It is asked only when
// the opening of s is found again further on, which most texts fail at once.
func periodicText(s string) (string, int) {
	s = strings.TrimSpace(s)
	if len(s) < 2*loopMinPeriod {
		return "", 0
	}
	head := s[:loopMinPeriod]
	if strings.ContainsAny(head, " \t\r\n") {
		// The opening as written, up to its first line break, is what a copy repeats.
		if i := strings.IndexAny(head, "\r\n"); i >= 0 {
			head = head[:i]
		}
	}
	if len(head) < 8 || !strings.Contains(s[len(head):], head) {
		return "", 0
	}
	// Each copy but the last is followed by the space that joins it to the next: with one
	// more at the end, the text is whole copies of the block and its space.
	norm := textkit.CollapseSpace(s) + " "
	// The shortest period of norm, from the prefix function (Knuth-Morris-Pratt).
	pi := make([]int32, len(norm))
	for i := 1; i < len(norm); i++ {
		k := pi[i-1]
		for k > 0 && norm[i] != norm[k] {
			k = pi[k-1]
		}
		if norm[i] == norm[k] {
			k++
		}
		pi[i] = k
	}
	period := len(norm) - int(pi[len(norm)-1])
	block := strings.TrimSpace(norm[:period])
	copies := len(norm) / period
	if copies < 2 || len(block) < loopMinPeriod || wordCount(block) < loopMinWords {
		return "", 0
	}
	return block, copies
}

// repeatedLineBlock finds a block of one to loopMaxLines lines (blank lines and white space
// aside) written again right after itself, holding loopMinChars bytes and loopMinWords
// words: the block's first line and the number of copies in a row. In code the block must
// not be a line or two repeated within itself.
func repeatedLineBlock(s string, code bool) (string, int) {
	type line struct {
		h           uint64
		start, end  int // the trimmed line in s
		size, words int
	}
	var lines []line
	for off := 0; off < len(s) && len(lines) < 400; {
		end := strings.IndexByte(s[off:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += off
		}
		l := strings.TrimSpace(s[off:end])
		if l != "" {
			start := off + strings.Index(s[off:end], l)
			h, size := spaceHash(l)
			lines = append(lines, line{h: h, start: start, end: start + len(l), size: size, words: wordCount(l)})
		}
		off = end + 1
	}
	if len(lines) < 2 {
		return "", 0
	}
	// For each block length m, run counts how many lines in a row equal the line m after them;
	// m of them in a row is a block written twice.
	for m := 1; m <= min(loopMaxLines, len(lines)/2); m++ {
		run := 0
		for i := 0; i+m < len(lines); i++ {
			if lines[i].h != lines[i+m].h {
				run = 0
				continue
			}
			run++
			if run < m {
				continue
			}
			first := i - m + 1
			size, words := 0, 0
			for _, l := range lines[first : first+m] {
				size += l.size
				words += l.words
			}
			if size < loopMinChars || words < loopMinWords || code && innerPeriod(lines[first:first+m], func(a, b line) bool { return a.h == b.h }) < 3 {
				// Too little to be a statement of its own; in code, a line or two written
				// again and again is unrolled statements ("a.x; a.x; a.x"), which the
				// ten-copy rule of findRepetition reads.
				continue
			}
			copies := 2
			for next := first + copies*m; next+m <= len(lines) && sameLines(lines, first, next, m, func(a, b int) bool { return lines[a].h == lines[b].h }); next += m {
				copies++
			}
			return s[lines[first].start:lines[first].end], copies
		}
	}
	return "", 0
}

// innerPeriod returns the fewest lines after which a block repeats itself: 1 for a line
// written again and again, len(block) for a block of distinct lines.
func innerPeriod[T any](block []T, eq func(a, b T) bool) int {
	for d := 1; d < len(block); d++ {
		ok := true
		for k := 0; k+d < len(block) && ok; k++ {
			ok = eq(block[k], block[k+d])
		}
		if ok {
			return d
		}
	}
	return len(block)
}

// sameLines reports whether the m lines from a equal the m lines from b.
func sameLines[T any](_ []T, a, b, m int, eq func(a, b int) bool) bool {
	for k := range m {
		if !eq(a+k, b+k) {
			return false
		}
	}
	return true
}

// spaceHash hashes s with every run of white space read as one space, and returns the
// length of s so read.
func spaceHash(s string) (uint64, int) {
	h := uint64(14695981039346656037)
	n := 0
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\r' {
			space = true
			continue
		}
		if space {
			h ^= ' '
			h *= 1099511628211
			n++
			space = false
		}
		h ^= uint64(c)
		h *= 1099511628211
		n++
	}
	return h, n
}

// wordCount counts the runs of letters in s, each letter of a script written without spaces
// (Chinese, Japanese, Thai) counting as a word of its own.
func wordCount(s string) int {
	n := 0
	in := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r >= 0x2E80 && unicode.IsLetter(r) || unicode.Is(unicode.Thai, r):
			n++
			in = false
		case unicode.IsLetter(r):
			if !in {
				n++
			}
			in = true
		default:
			in = false
		}
	}
	return n
}
