package prescreen

import (
	"strconv"
	"strings"
)

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
