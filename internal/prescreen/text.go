package prescreen

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// screenText is a run prepared once for every check.
type screenText struct {
	in, out       string // trimmed input and output, as written
	inLow, outLow string // lower case, typographic apostrophes made plain
	purposeLow    string
	head          string   // the first sentences of outLow, where refusals and errors show
	outWords      []string // lower-case words of the output
	truncated     bool     // the caller says the model stopped at its token limit
	code          int8     // whether out looks like code: 0 not known yet, 1 yes, -1 no (isCode)
	// toolFailed: a tool call of this turn returned an error, so an answer that reports a
	// failure is relaying it, not failing itself.
	toolFailed bool
	// wordsShared forces contentOverlap to report a shared word (see Params.WordsShared).
	wordsShared bool
}

// maxScreenInput and maxScreenOutput bound the text a check reads, so a 100 KB document
// costs what an 8 KB one does. A longer text is read as its head and its tail, where the
// question, the greeting, the opening of an answer and the place it stops are.
const (
	maxScreenInput  = 8 << 10
	maxScreenOutput = 16 << 10
)

func headAndTail(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	return s[:limit/2] + "\n" + s[len(s)-limit/2:]
}

// fill prepares the run in t, all but t.outWords (splitWords of t.outLow). A method on a
// caller's value rather than a constructor, so the value can stay on the caller's stack.
func (t *screenText) fill(in, out, purpose string) {
	in, out = headAndTail(in, maxScreenInput), headAndTail(out, maxScreenOutput)
	t.in, t.out = strings.TrimSpace(in), out
	t.inLow = foldLower(t.in)
	t.outLow = foldLower(out)
	t.purposeLow = foldLower(purpose)
	t.head = headOf(t.outLow)
}

// isCode reports whether the output looks like code (looksLikeCode), computed once.
func (t *screenText) isCode() bool {
	if t.code == 0 {
		t.code = -1
		if looksLikeCode(t.out) {
			t.code = 1
		}
	}
	return t.code > 0
}

// headOf returns the opening of a lower-case output where refusals and abstentions show: its
// first 240 bytes, which hold a sentence or two of English, or as many characters of a
// script that takes two to three bytes a character (Greek, Cyrillic, Arabic, Indic, Thai,
// CJK), cut at a character boundary.
func headOf(s string) string {
	if len(s) <= 240 {
		return s
	}
	n := 240
	wide := 0
	for i := 0; i < 240; i++ {
		if s[i] >= 0x80 {
			wide++
		}
	}
	if wide > 80 {
		n = min(len(s), 240+wide*2)
	}
	for n < len(s) && n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// splitWords splits s into runs of letters and digits (an inner apostrophe stays: "don't").
func splitWords(s string) []string {
	out := make([]string, 0, len(s)/6+1)
	eachWord(s, func(w string) bool { out = append(out, w); return true })
	return out
}

// eachWord calls f for each word of s, as splitWords splits them, without allocating, until
// f returns false. ASCII, most of any text, takes a fast path.
func eachWord(s string, f func(string) bool) {
	start := -1
	for i := 0; i < len(s); {
		c := s[i]
		var w bool
		size := 1
		if c < utf8.RuneSelf {
			w = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || (c == '\'' && start >= 0)
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			w = unicode.IsLetter(r) || unicode.IsDigit(r)
		}
		switch {
		case w && start < 0:
			start = i
		case !w && start >= 0:
			if !f(trimApostrophes(s[start:i])) {
				return
			}
			start = -1
		}
		i += size
	}
	if start >= 0 {
		f(trimApostrophes(s[start:]))
	}
}

func trimApostrophes(w string) string {
	for len(w) > 0 && w[len(w)-1] == '\'' {
		w = w[:len(w)-1]
	}
	return w
}

// isStopword reports whether w carries no topic: function words, question words, and the
// pleasantries and verbs every answer uses.
func isStopword(w string) bool { return screenStopwords.has(w) }

// screenStopwords are isStopword's words.
var screenStopwords = newWordSet(
	"a", "about", "above", "absolutely", "after", "again", "against", "ai", "all", "also", "am",
	"an", "and", "another", "answer", "any", "anyone", "anything", "are", "aren't", "as", "assist",
	"assistance", "at", "back", "be", "because", "been", "before", "being", "below", "between",
	"both", "but", "by", "can", "can't", "cannot", "certainly", "could", "couldn't", "course", "did",
	"didn't", "do", "does", "doesn't", "doing", "don't", "down", "during", "each", "either", "else",
	"even", "ever", "every", "everyone", "everything", "feel", "few", "for", "free", "from",
	"further", "get", "gets", "give", "glad", "good", "got", "great", "had", "hadn't", "happy",
	"has", "hasn't", "have", "haven't", "having", "he", "he's", "help", "helps", "her", "here",
	"here's", "hers", "herself", "him", "himself", "his", "hope", "how", "how's", "however", "i",
	"i'd", "i'll", "i'm", "i've", "if", "in", "into", "is", "isn't", "it", "it's", "its", "itself",
	"just", "know", "language", "let", "let's", "like", "lot", "lots", "made", "make", "makes",
	"many", "may", "me", "might", "model", "more", "most", "much", "must", "mustn't", "my", "myself",
	"need", "no", "nor", "not", "nothing", "now", "of", "off", "ok", "okay", "on", "once", "one",
	"only", "or", "other", "ought", "our", "ours", "ourselves", "out", "over", "own", "per",
	"please", "question", "questions", "really", "same", "shall", "shan't", "she", "she's", "should",
	"shouldn't", "since", "so", "some", "someone", "something", "still", "such", "sure", "tell",
	"than", "thank", "thanks", "that", "that's", "the", "their", "theirs", "them", "themselves",
	"then", "there", "there's", "these", "they", "they'd", "they'll", "they're", "they've", "thing",
	"things", "think", "this", "those", "through", "to", "too", "under", "until", "up", "upon", "us",
	"use", "used", "using", "very", "via", "want", "was", "wasn't", "way", "ways", "we", "we'd",
	"we'll", "we're", "we've", "well", "were", "weren't", "what", "what's", "when", "when's",
	"where", "where's", "whether", "which", "while", "who", "who's", "whom", "whose", "why", "why's",
	"will", "with", "within", "without", "won't", "would", "wouldn't", "yes", "yet", "you", "you'd",
	"you'll", "you're", "you've", "your", "yours", "yourself", "yourselves")

// crudeStem folds a word to a crude stem so "agents" meets "agent" and "triaged" meets "triage".
func crudeStem(w string) string {
	// The suffixes "ing", "ies", "ied", "es", "ed", "ly", "s" are tried in that order; the first
	// that w ends with, leaving more than three letters (more than two for "s"), comes off.
	// A plain plural s comes off short words too ("firs" meets "fir").
	if n := len(w); n > 3 {
		switch w[n-1] {
		case 'g':
			if n > 6 && w[n-3:] == "ing" {
				w = w[:n-3]
			}
		case 's':
			switch {
			case n > 6 && w[n-3:] == "ies":
				w = w[:n-3]
			case n > 5 && w[n-2] == 'e':
				w = w[:n-2]
			default:
				w = w[:n-1]
			}
		case 'd':
			switch {
			case n > 6 && w[n-3:] == "ied":
				w = w[:n-3]
			case n > 5 && w[n-2] == 'e':
				w = w[:n-2]
			}
		case 'y':
			if n > 5 && w[n-2] == 'l' {
				w = w[:n-2]
			}
		}
	}
	if len(w) > 6 {
		w = w[:6]
	}
	return w
}

func isContent(w string) bool { return len(w) >= 3 && !isStopword(w) }

// containsAnyOf reports whether s contains any of subs.
func containsAnyOf(s string, subs []string) (string, bool) {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return x, true
		}
	}
	return "", false
}

// forEachLine calls f for each trimmed non-empty line of s until f returns false.
func forEachLine(s string, f func(string) bool) {
	for s != "" {
		var line string
		line, s, _ = strings.Cut(s, "\n")
		if line = strings.TrimSpace(line); line != "" && !f(line) {
			return
		}
	}
}

// stripCode removes fenced and inline code, where templates and nulls are legitimate.
func stripCode(s string) string {
	if !strings.Contains(s, "`") {
		return s
	}
	var b strings.Builder
	for i := 0; ; i++ {
		part, rest, found := strings.Cut(s, "```")
		if i%2 == 0 {
			for j, seg := range strings.Split(part, "`") {
				if j%2 == 0 {
					b.WriteString(seg)
				}
			}
		}
		if !found {
			break
		}
		s = rest
	}
	return b.String()
}
