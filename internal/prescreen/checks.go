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

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
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
