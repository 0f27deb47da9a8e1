package prescreen

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

// abstentions are phrases of an answer that abstains.
var abstentions = newPhraseSet("i have no comment", "no comment", "i don't know", "i do not know", "i'm not sure", "i am not sure",
	"cannot be determined", "can't be determined", "there is no clear information", "there is no information", "does not provide information",
	"doesn't provide information", "does not provide any information", "doesn't provide any information", "not explicitly", "does not mention",
	"doesn't mention", "is not mentioned", "no direct answer", "the question is ambiguous", "it depends",
	// Asking back is abstaining too.
	"could you clarify", "can you clarify", "please clarify", "provide more context", "don't understand the question",
	"do not understand the question")
