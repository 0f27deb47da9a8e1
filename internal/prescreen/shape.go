package prescreen

import (
	"strconv"
	"strings"
	"unicode"
)

// answerShape is the kind of answer an input asks for.
type answerShape int

const (
	shapeAny    answerShape = iota // a statement, an action result, a triage: any non-broken output
	shapeNumber                    // how many, how much
	shapeTime                      // when, what year
	shapePerson                    // who, whom, whose
	shapeChoice                    // "A or B?": one of the alternatives
	shapeYesNo                     // "Is ...?", "Can ...?": yes, no, or a statement about the subject
)

func (s answerShape) String() string {
	return [...]string{"any answer", "a number or quantity", "a date or time", "a name or person", "one of the alternatives", "yes, no or a statement about the question's subject"}[s]
}

// shortAnswerWords is the most words an output may have and still be judged by its shape alone;
// longer outputs are statements whose shape is not in doubt.
const shortAnswerWords = 4

// hintRelevance is the relevance of a run with only a hint against it: the weighted mean
// with integrity 1 stays above the threshold, so the run passes with notes.
const hintRelevance = 0.5

// shapeRelevance scores whether the output fits the input. Short answers are never judged
// by their words, and what the output's words say of its topic (a shape guess, a statement
// of offTopicMin content words or more that shares none with the input) is a hint that does
// not fail the run: whether an output answers what was asked is a judge's question.
func shapeRelevance(t *screenText, offTopicMin int) (float64, []screenFinding) {
	if t.inLow == "" {
		return 1, nil
	}
	if isEcho(t) {
		return 0, []screenFinding{{FlagEcho, "the output only repeats the input"}}
	}
	want := askedShape(t.inLow)
	if want != shapeAny && len(t.outWords) <= shortAnswerWords && !hasShape(want, t) {
		return hintRelevance, []screenFinding{{FlagWrongShape, "a hint: the input asks for " + want.String() + " and the short output has none"}}
	}
	if isEmail(t.inLow) && (isStructured(t.out) || isTriage(t.outWords)) {
		// A raw email asks for a triage or a summary; a Slack-style summary with labels and
		// action items is that, whatever words it picks.
		return 1, nil
	}
	if isTask(t.inLow) && isStructured(t.out) {
		// "List my agents" -> a numbered list of agent names: the list is the result the
		// task asks for, and its items need not repeat the task's words.
		return 1, nil
	}
	shared, n := contentOverlap(t)
	if shared > 0 || n < offTopicMin || isCreation(t.inLow) {
		// "Write a haiku about autumn": a creation need not repeat the task's words.
		return 1, nil
	}
	// A horror film's opening scene for "a creative opening scene for a horror movie", the
	// steps of a burpee for "Burpees": correct answers share no word with their request
	// too, so this is a hint for the judge, never a failure.
	return hintRelevance, []screenFinding{{FlagOffTopic, "a hint: " + strconv.Itoa(n) + " content words that share none with the input; whether it answers is the judge's question"}}
}

// looksLikeCode reports whether an output is mostly source code: two lines or more, and half
// of its lines or more, read as code (isCodeLine). Code need not repeat its task's words, and
// it legitimately holds format strings, template syntax and repeated lines.
func looksLikeCode(s string) bool {
	lines, code := 0, 0
	forEachLine(s, func(l string) bool {
		lines++
		if isCodeLine(l) {
			code++
		}
		return true
	})
	return code >= 2 && code*2 >= lines
}

// isCodeLine reports whether a trimmed line reads as a line of code: it ends like a statement
// or a block ("{", "}", ";", ")", "]", "):"), opens like a definition or a statement
// (codeOpenings), opens a Python or shell block ("for x in y:", "else:"), is a comment of
// code ("# ...", "// ..."), chains statements ("a.x;    a.x"), or assigns ("x = 1",
// "a.x += 2"). Prose ends its lines in words and full stops.
func isCodeLine(l string) bool {
	switch {
	case strings.HasSuffix(l, "{"), strings.HasSuffix(l, "}"), strings.HasSuffix(l, ";"), strings.HasSuffix(l, ")"),
		strings.HasSuffix(l, "]"), strings.HasSuffix(l, "):"), strings.HasSuffix(l, ":") && !strings.Contains(l, " "),
		strings.HasPrefix(l, "//"), strings.HasPrefix(l, "# ") && !strings.HasSuffix(l, "."),
		strings.Contains(l, "; ") && !strings.HasSuffix(l, ".") && !strings.Contains(l, ". "):
		return true
	case strings.HasSuffix(l, ":"):
		first, _, _ := strings.Cut(l, " ")
		switch first {
		case "if", "elif", "else", "for", "while", "with", "try", "except", "finally", "def", "class", "case", "async":
			return true
		}
	}
	for _, p := range codeOpenings {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return isAssignment(l)
}

// isAssignment reports whether a line opens with an assignment to a name, a field or an
// element: "x = 1", "a.x += 2", "dp[i][j] = 0", "n := len(s)".
func isAssignment(l string) bool {
	i := 0
	for i < len(l) && (isLowerAlnum(l[i]|0x20) && l[i] < 0x80 || l[i] == '_' || l[i] == '.' || l[i] == '[' || l[i] == ']' || l[i] == ',') {
		i++
	}
	if i == 0 || i == len(l) || l[i] != ' ' {
		return false
	}
	rest := l[i+1:]
	for _, op := range [...]string{"= ", ":= ", "+= ", "-= ", "*= ", "/= ", "|= ", "&= "} {
		if strings.HasPrefix(rest, op) {
			return true
		}
	}
	return false
}

// codeOpenings open lines of code in the common languages.
var codeOpenings = [...]string{"def ", "return", "import ", "from ", "class ", "function ", "const ", "let ", "var ", "func ",
	"public ", "private ", "if (", "for (", "while (", "#include", "package ", "fn ", "SELECT ", "select ", "print(", "console.",
	"raise ", "yield ", "elif ", "except ", "assert ", "lambda ", "pass", "break", "continue", "@"}

// askedShape reads what kind of answer the question asks for from its opening words.
func askedShape(in string) answerShape {
	q := questionSentence(in)
	switch {
	case hasPrefix(numberAsks, q):
		return shapeNumber
	// "When should I use X?" asks for a condition, not a time, so only past and scheduled
	// events want a date.
	case hasPrefix(timeAsks, q):
		return shapeTime
	case hasPrefix(personAsks, q):
		return shapePerson
	case isChoice(q):
		return shapeChoice
	case hasPrefix(yesNoAsks, q):
		return shapeYesNo
	}
	return shapeAny
}

// questionSentence returns the sentence of in that asks: the last one ending in '?', else in.
func questionSentence(in string) string {
	end := lastIndexByte(in, '?')
	if end < 0 {
		return in
	}
	start := lastSentenceEnd(in[:end])
	q := strings.TrimSpace(in[start+1 : end+1])
	// "Answer the question: What color was Cotton?" asks what follows the colon, but in
	// "Which is older: A or B?" the colon only introduces the alternatives.
	if i := lastIndexAnchored(q, ": ", 0); i >= 0 {
		first, _, _ := strings.Cut(q[i+2:], " ")
		switch first {
		case "what", "who", "whom", "whose", "when", "where", "which", "why", "how", "is", "are", "was", "were", "do", "does",
			"did", "can", "could", "will", "would", "should", "has", "have", "had":
			q = q[i+2:]
		}
	}
	return q
}

// hasPrefix reports whether s starts with a phrase of set.
func hasPrefix(set *phraseSet, s string) bool {
	_, ok := set.prefix(s)
	return ok
}

// hasShape reports whether the output has the shape want asks for.
func hasShape(want answerShape, t *screenText) bool {
	switch want {
	case shapeNumber:
		for _, w := range t.outWords {
			if isNumberWord(w) {
				return true
			}
		}
		return false
	case shapeTime:
		for _, w := range t.outWords {
			if isNumberWord(w) || isTimeWord(w) {
				return true
			}
		}
		return false
	case shapeChoice, shapeYesNo:
		// An alternative repeats the question's words; so does a short statement about its
		// subject. A yes/no answer may instead just say yes or no.
		if want == shapeYesNo {
			for _, w := range t.outWords {
				switch w {
				case "yes", "no", "not", "never", "both", "neither", "either", "only", "maybe", "possibly", "probably", "true",
					"false", "correct", "incorrect", "yeah", "nope", "sometimes", "depends", "unknown", "none", "all":
					return true
				}
			}
		}
		shared, n := contentOverlap(t)
		return shared > 0 || n == 0
	case shapePerson:
		// A name is capitalized; "nobody" and "my mother" answer who too.
		for i, w := range strings.Fields(t.out) {
			r := []rune(strings.TrimLeft(w, "\"'(*["))
			if len(r) > 0 && unicode.IsUpper(r[0]) && (i > 0 || len(t.outWords) == 1 || !isStopword(strings.ToLower(w))) {
				return true
			}
		}
		for _, w := range t.outWords {
			if isPersonWord(w) {
				return true
			}
		}
		return false
	}
	return true
}

func isNumberWord(w string) bool {
	if w == "" {
		return false
	}
	if w[0] >= '0' && w[0] <= '9' {
		return true
	}
	switch w {
	case "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen",
		"fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty", "forty", "fifty", "sixty",
		"seventy", "eighty", "ninety", "hundred", "hundreds", "thousand", "thousands", "million", "millions", "billion", "billions",
		"trillion", "dozen", "dozens", "half", "quarter", "once", "twice", "thrice", "single", "double", "triple", "none", "nothing",
		"no", "all", "few", "several", "many", "much", "lot", "lots", "little", "most", "some", "every", "more", "less", "fewer",
		"any", "both", "neither", "free", "couple", "enough", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "last", "infinite", "countless", "numerous", "percent", "unknown", "depends", "varies", "either", "nobody":
		return true
	}
	return false
}

func isTimeWord(w string) bool {
	switch w {
	case "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
		"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "century", "centuries", "year", "years",
		"decade", "decades", "ago", "before", "after", "during", "since", "until", "never", "always", "today", "tomorrow",
		"yesterday", "now", "morning", "evening", "night", "noon", "midnight", "spring", "summer", "autumn", "fall", "winter",
		"era", "age", "war", "period", "reign", "bc", "ad", "bce", "ce", "early", "late", "mid", "first", "last", "next",
		"previous", "season", "week", "weeks", "month", "months", "day", "days", "hour", "hours", "minute", "minutes", "time",
		"when", "soon", "later", "earlier", "once", "tonight", "weekend", "annually", "daily", "weekly", "monthly", "birth", "death":
		return true
	}
	return false
}

func isPersonWord(w string) bool {
	switch w {
	case "nobody", "no", "everyone", "everybody", "people", "person", "man", "woman", "men", "women", "he", "she", "they",
		"i", "you", "we", "family", "team", "king", "queen", "mother", "father", "parents", "author", "president", "god",
		"scientists", "government", "children", "humans", "someone", "anyone", "unknown":
		return true
	}
	return false
}

// isEcho reports whether the output only repeats the input: the same words, or the question
// asked back.
func isEcho(t *screenText) bool {
	if sameLetters(t.inLow, t.outLow) {
		return true
	}
	if !strings.HasSuffix(t.out, "?") || strings.Count(t.out, "?") > 1 {
		return false
	}
	in := stemSet(t.inLow, "")
	novel, n := 0, 0
	for _, w := range t.outWords {
		if !isContent(w) {
			continue
		}
		n++
		if _, ok := in[crudeStem(w)]; !ok {
			novel++
		}
	}
	return n >= 3 && novel <= 2 && novel*4 <= n
}

// sameLetters reports whether a and b have the same letters and digits in the same order.
func sameLetters(a, b string) bool {
	i, j := 0, 0
	for {
		for i < len(a) && !isLowerAlnum(a[i]) {
			i++
		}
		for j < len(b) && !isLowerAlnum(b[j]) {
			j++
		}
		if i == len(a) || j == len(b) {
			return i == len(a) && j == len(b)
		}
		if a[i] != b[j] {
			return false
		}
		i++
		j++
	}
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80 }

// stemSet returns the content stems of the given lower-case texts.
func stemSet(texts ...string) map[string]struct{} {
	m := map[string]struct{}{}
	for _, s := range texts {
		for _, w := range splitWords(s) {
			if isContent(w) {
				m[crudeStem(w)] = struct{}{}
			}
		}
	}
	return m
}

// contentOverlap counts the output's content words, and how many of them have a stem that
// occurs in the input or the agent's purpose (at least one when any does: the count stops
// early). It indexes the output, which is usually the
// shorter text, and streams the input past it.
func contentOverlap(t *screenText) (shared, n int) {
	if t.wordsShared {
		return 1, 0
	}
	// A short output's stems are few: a linear scan of an array beats a map, above all as
	// wasm, where every map operation is several calls. take(st) returns how often the
	// output has st and forgets it, as reading and deleting a map entry would.
	var take func(string) int
	if len(t.outWords) <= len(smallStems{}) {
		var small smallStems
		m := 0
		for _, w := range t.outWords {
			if !isContent(w) {
				continue
			}
			n++
			st := crudeStem(w)
			i := 0
			for i < m && small[i].stem != st {
				i++
			}
			if i == m {
				small[i].stem = st
				m++
			}
			small[i].n++
		}
		take = func(st string) int {
			for i := range m {
				if k := small[i].n; k > 0 && small[i].stem == st {
					small[i].n = 0
					return k
				}
			}
			return 0
		}
	} else {
		out := make(map[string]int, len(t.outWords))
		for _, w := range t.outWords {
			if isContent(w) {
				n++
				out[crudeStem(w)]++
			}
		}
		take = func(st string) int {
			k := out[st]
			delete(out, st)
			return k
		}
	}
	inContent := 0
	// Callers only ask whether anything is shared, so the scan stops at the first match once
	// the input has shown enough content words to count.
	visit := func(w string) bool {
		if !isContent(w) {
			return true
		}
		inContent++
		shared += take(crudeStem(w))
		return shared == 0 || inContent < 2
	}
	eachWord(t.inLow, visit)
	if shared == 0 || inContent < 2 {
		eachWord(t.purposeLow, visit)
	}
	if inContent < 2 {
		// Too little to compare ("Go on", "Summarize"): no evidence either way.
		return 1, 0
	}
	return shared, n
}

// smallStems counts the stems of an output of a few words.
type smallStems [8]struct {
	stem string
	n    int
}

// isTask reports whether the input asks for an action rather than an answer: it opens with
// an imperative ("List my agents", "Please cancel ...", "Can you schedule ...").
func isTask(in string) bool {
	verb := firstVerb(in)
	switch strings.TrimRight(verb, ".:!,") {
	case "list", "show", "get", "find", "fetch", "search", "look", "create", "make", "add", "delete", "remove", "run", "start",
		"stop", "restart", "deploy", "give", "send", "schedule", "book", "cancel", "update", "set", "check", "summarize",
		"summarise", "draft", "write", "translate", "classify", "extract", "convert", "generate", "compare", "rank", "sort",
		"count", "calculate", "compute", "plan", "triage", "categorize", "label", "tag", "assign", "move", "export", "import",
		"open", "close", "archive", "rename", "describe", "explain", "outline", "reply", "respond", "forward", "notify", "remind":
		return true
	}
	return false
}

// firstVerb returns the first word of a request, past the polite openings ("please",
// "can you", ...) that come before its verb, with any punctuation it carries.
func firstVerb(in string) string {
	for _, p := range []string{"please ", "can you ", "could you ", "would you ", "kindly "} {
		in = strings.TrimPrefix(in, p)
	}
	verb, _, _ := strings.Cut(in, " ")
	return verb
}

// isCreation reports whether the input asks for something new (a poem, a draft, a
// translation, names) rather than an answer about a topic ("explain", "compare").
func isCreation(in string) bool {
	verb := firstVerb(in)
	switch verb {
	case "write", "draft", "compose", "generate", "create", "make", "invent", "imagine", "brainstorm", "translate",
		"rewrite", "paraphrase", "tell", "suggest", "name", "come", "design", "plan":
		return true
	}
	return false
}

// isStructured reports whether out is structured output: a JSON value, a table, or at least
// two lines of list items or "key: value" pairs.
func isStructured(out string) bool {
	if strings.HasPrefix(out, "{") || strings.HasPrefix(out, "[") {
		return true
	}
	items := 0
	forEachLine(out, func(l string) bool {
		switch {
		case strings.HasPrefix(l, "- "), strings.HasPrefix(l, "* "), strings.HasPrefix(l, "•"), strings.HasPrefix(l, "|"):
			items++
		case len(l) > 1 && l[0] >= '0' && l[0] <= '9' && strings.IndexAny(l[:min(len(l), 4)], ".)") > 0:
			items++
		case strings.Contains(l, ": ") && strings.Index(l, ": ") < 30:
			items++
		}
		return items < 2
	})
	return items >= 2
}

// isChoice reports whether a question offers alternatives: "Which is older, A or B?". The
// "or" must sit near the end, after "which" or a comma, so "a group who suffer or have
// suffered" in a long what-question is not read as a choice.
func isChoice(q string) bool {
	if !strings.HasSuffix(q, "?") {
		return false
	}
	i := lastIndexAnchored(q, " or ", 2)
	if i < 0 || len(q)-i > 60 || strings.Contains(q[i:], " or not") {
		return false
	}
	return strings.HasPrefix(q, "which ") || strings.Contains(q[:i], ", ")
}

// isEmail reports whether the input is a raw email: header lines, or a greeting and a
// sign-off.
func isEmail(in string) bool {
	if len(in) < 80 {
		return false
	}
	found := emailHeaders.mask(in)
	headers := 0
	for k, h := range emailHeaders.list {
		if found&(1<<k) != 0 || strings.HasPrefix(in, h[1:]) {
			headers++
		}
	}
	if headers >= 2 {
		return true
	}
	return hasPrefix(greetings, in) && signoffs.has(in)
}

// isTriage reports whether the words of an output read as a triage: a decision, a priority,
// labels or action items.
func isTriage(ws []string) bool {
	for _, w := range ws {
		switch w {
		case "triage", "respond", "reply", "notify", "ignore", "escalate", "priority", "urgent", "p0", "p1", "p2", "p3",
			"summary", "label", "labels", "action", "actions", "todo", "owner", "assignee", "category", "spam":
			return true
		}
	}
	return false
}

// emailHeaders are the header lines of a raw email, each after a line break.
var emailHeaders = newPhraseSet("\nfrom:", "\nto:", "\nsubject:", "\ndate:", "\ncc:")

// signoffs open the closing line of an email.
var signoffs = newPhraseSet("\nthanks", "\nthank you", "\nbest", "\nregards", "\nkind regards", "\ncheers", "\nsincerely")

// numberAsks open a question that asks for a number.
var numberAsks = newPhraseSet("how many", "how much", "what percentage", "what percent", "what number", "what is the number of", "what's the number of")

// timeAsks open a question that asks for a date or time.
var timeAsks = newPhraseSet("when did ", "when was ", "when were ", "when will ", "when is the ", "when does the ", "what year", "in what year", "in which year", "what date", "what time", "what century", "in what century", "what decade", "in which century")

// personAsks open a question that asks for a person.
var personAsks = newPhraseSet("who ", "who's ", "whom ", "whose ", "which person")

// yesNoAsks open a question that asks yes or no.
var yesNoAsks = newPhraseSet("is ", "are ", "was ", "were ", "do ", "does ", "did ", "can ", "could ", "will ", "would ", "should ",
	"has ", "have ", "had ", "may ", "might ", "must ", "isn't ", "aren't ", "wasn't ", "don't ", "doesn't ", "didn't ", "can't ")

// greetings open an email.
var greetings = newPhraseSet("hi ", "hi,", "hello", "dear ", "hey ", "good morning", "good afternoon")
