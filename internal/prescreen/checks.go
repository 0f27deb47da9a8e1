package prescreen

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/scorekit/scorekit/internal/textkit"
)

// findNotice finds a short product notice of the set's kind in an output of its own: at most
// noticeRunes runes on at most two lines, not code, not a list, and not the input's own words.
// A failure notice must also ask to retry ("Der Server ist nicht erreichbar; Versuchen Sie es
// später erneut") or be a dozen words alone ("Verbindungsabbruch wegen Zeitüberschreitung.").
func findNotice(t *screenText, set *phraseSet) (string, bool) {
	if len(t.out) > 4*noticeRunes || strings.Count(t.out, "\n") > 1 || utf8.RuneCountInString(t.out) > noticeRunes {
		return "", false
	}
	// The phrase before the shape: most outputs have none, and the shape costs more.
	m, ok := set.find(t.outLow)
	if !ok || strings.Contains(t.inLow, m) || t.isCode() || isStructured(t.out) || shortAnswer(t) {
		return "", false
	}
	if set == noticeFailures && !noticeRetries.has(t.outLow) && len(strings.Fields(t.out)) > 12 && utf8.RuneCountInString(t.out) > 36 {
		return "", false
	}
	return m, true
}

// shortAnswer reports whether the output is a word or two answering a question: "失败"
// (failure) for how an effort ended, a name for who did something ("Shibata", whose letters
// hold a failure word of another language). A product notice says what failed in a sentence,
// and is shown in place of what was asked for, not as the answer to a question.
func shortAnswer(t *screenText) bool {
	if len(t.outWords) > 2 || utf8.RuneCountInString(strings.TrimRight(t.out, ".。!！")) > 24 || strings.ContainsAny(t.out, ",;:，；：") {
		return false
	}
	in := strings.TrimSpace(t.inLow)
	if strings.HasSuffix(in, "?") || strings.HasSuffix(in, "？") || strings.HasSuffix(in, "吗") || strings.HasSuffix(in, "呢") {
		return true
	}
	q, _, _ := strings.Cut(in, " ")
	switch q {
	case "who", "what", "which", "how", "where", "when", "why", "whose", "whom", "name":
		return true
	}
	return false
}

// noticeRunes is the longest output read as a product notice.
const noticeRunes = 200

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

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

// findTruncation finds outputs that stop mid-way: an unclosed code fence, or a long text that
// ends on a word that cannot end a sentence.
func findTruncation(t *screenText, minWords int) (string, bool) {
	if strings.Count(t.out, "```")%2 == 1 {
		return "an unclosed code fence", true
	}
	if len(t.outWords) < minWords {
		return "", false
	}
	last := strings.TrimSpace(t.out)
	switch last[len(last)-1] {
	case ',', '(', '[', '{', ':':
		return "ends with " + strconv.Quote(last[len(last)-1:]), true
	}
	lastWord := t.outWords[len(t.outWords)-1]
	if !strings.HasSuffix(strings.ToLower(last), lastWord) {
		return "", false
	}
	switch lastWord {
	// Words that cannot end a sentence. "on", "in", "to", "that", "is" can ("and so on",
	// "log in", "what it is"), so they are not here.
	case "and", "or", "the", "a", "an", "of", "with", "from", "but", "because", "your", "their", "its", "our", "my",
		"these", "those", "if", "than", "which", "whose", "into", "onto", "toward", "towards", "between", "among", "such", "very":
		return "stops after " + strconv.Quote(lastWord), true
	}
	return "", false
}

// findFiller finds outputs made only of pleasantries: "As an AI ...", "I hope this helps!".
func findFiller(t *screenText) (string, bool) {
	// Any content word means the output says something; most outputs show one at once.
	for _, w := range t.outWords {
		if isContent(w) || isAnswerWord(w) {
			return "", false
		}
	}
	p, ok := fillerPhrases.find(t.outLow)
	if !ok {
		return "", false
	}
	return "only pleasantries (" + p + ")", true
}

// isAnswerWord reports whether a short word is an answer by itself: yes, no, a number.
func isAnswerWord(w string) bool {
	switch w {
	case "yes", "no", "not", "none", "all", "one", "two", "six", "ten":
		return true
	}
	return w != "" && w[0] >= '0' && w[0] <= '9'
}

// findNonCommittal finds answers that abstain: "I have no comment", "the context does not say".
func findNonCommittal(t *screenText) (string, bool) {
	// Every phrase below has one of these words near the start of the output.
	gate := false
	for _, w := range t.outWords[:min(len(t.outWords), 48)] {
		switch w {
		case "comment", "know", "sure", "determined", "information", "explicitly", "mention", "mentioned", "direct", "ambiguous", "depends",
			"clarify", "understand", "context":
			gate = true
		}
	}
	if !gate {
		return "", false
	}
	m, ok := abstentions.find(t.head)
	if !ok {
		return "", false
	}
	return "abstains (" + m + ")", true
}

// fnv64 is the 64-bit FNV-1a hash of s.
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// fillerPhrases are pleasantries that say nothing.
var fillerPhrases = newPhraseSet("as an ai", "i hope this helps", "hope this helps", "let me know if", "feel free to", "happy to help",
	"glad to help", "great question", "good question", "is there anything else", "i'm here to help", "i am here to help", "how can i help",
	"how can i assist", "i'd be happy to", "i would be happy to", "thank you for your question", "thanks for asking",
	"i can help", "here to assist", "what can i do for you", "sure!", "certainly!", "of course!", "absolutely!")

// abstentions are phrases of an answer that abstains.
var abstentions = newPhraseSet("i have no comment", "no comment", "i don't know", "i do not know", "i'm not sure", "i am not sure",
	"cannot be determined", "can't be determined", "there is no clear information", "there is no information", "does not provide information",
	"doesn't provide information", "does not provide any information", "doesn't provide any information", "not explicitly", "does not mention",
	"doesn't mention", "is not mentioned", "no direct answer", "the question is ambiguous", "it depends",
	// Asking back is abstaining too.
	"could you clarify", "can you clarify", "please clarify", "provide more context", "don't understand the question",
	"do not understand the question")
