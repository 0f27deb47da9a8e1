package prescreen

import (
	"strings"
	"unicode/utf8"
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
