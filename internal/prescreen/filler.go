package prescreen

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

// fillerPhrases are pleasantries that say nothing.
var fillerPhrases = newPhraseSet("as an ai", "i hope this helps", "hope this helps", "let me know if", "feel free to", "happy to help",
	"glad to help", "great question", "good question", "is there anything else", "i'm here to help", "i am here to help", "how can i help",
	"how can i assist", "i'd be happy to", "i would be happy to", "thank you for your question", "thanks for asking",
	"i can help", "here to assist", "what can i do for you", "sure!", "certainly!", "of course!", "absolutely!")
