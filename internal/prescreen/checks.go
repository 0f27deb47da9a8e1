package prescreen

import (
	"math/bits"
	"strconv"
	"strings"
	"unicode"
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

// findPlaceholder finds outputs that are, or contain, an unfilled template slot, a
// serialized null or stand-in text, in the template syntaxes agents are built with.
func findPlaceholder(t *screenText) (string, bool) {
	bare := strings.Trim(t.outLow, " \t\r\n.\"'`")
	switch bare {
	// An empty list ("[]") can be a true answer; "{}" as a whole reply is not.
	case "undefined", "null", "nil", "<nil>", "nan", "[object object]", "todo", "tbd", "fixme", "{}", "placeholder", "lorem ipsum", "%s", "%d":
		return "the whole output is " + strconv.Quote(bare), true
	case "none":
		// "None" answers "How many ...?", "Who ...?" or "Which ...?"; as the whole answer to
		// anything else it is a serialized null.
		if shape := askedShape(t.inLow); (shape == shapeAny || shape == shapeTime) && !strings.Contains(t.inLow, "none") {
			return "the whole output is \"None\"", true
		}
	}
	prose, low := stripCode(t.out), stripCode(t.outLow)
	for _, m := range []string{"[object object]", "lorem ipsum"} {
		if strings.Contains(low, m) && !strings.Contains(t.inLow, m) {
			return strconv.Quote(m), true
		}
	}
	// Code holds format strings and template syntax of its own.
	// A template, a draft letter or an email the user asked for is meant to be filled in: its
	// slots ("Dear {{first_name}}", "[COMPANY NAME]") are the answer, not a leak. Nulls and
	// stand-ins below still count.
	proseCode := t.isCode()
	if len(prose) != len(t.out) {
		proseCode = looksLikeCode(prose)
	}
	// Whether the input asks for a template is read only once a slot is found.
	template := -1
	asked := func() bool {
		if template < 0 {
			template = 0
			if requestedTemplate(t.inLow) || draftedLetter(t) {
				template = 1
			}
		}
		return template == 1
	}
	if !proseCode {
		if m, ok := templateSlot(prose); ok && !strings.Contains(t.in, m) && !asked() {
			return "unfilled template slot " + m, true
		}
		if m, ok := standInSlot(prose, isCreation(t.inLow)); ok && !strings.Contains(t.in, m) && !asked() {
			return "unfilled slot " + m, true
		}
	}
	// Stand-ins a writer leaves for later, in capitals as they are written.
	// "TODO:" but not "TODO app": the capitals and the colon are how stand-ins are written.
	for found := standIns.mask(prose); found != 0; found &= found - 1 {
		m := standIns.list[bits.TrailingZeros64(found)]
		if (m[0] == '[' || m[0] == '<') && asked() {
			continue // a slot of the template the user asked for
		}
		if proseCode && m[0] != '[' && m[0] != '<' {
			continue // "// TODO: ..." is a comment of the code, not a part left out of the answer
		}
		if !strings.Contains(t.in, m) {
			return strconv.Quote(strings.TrimSpace(m)), true
		}
	}
	// A null where a value should be: "Total: undefined", "The answer is None.", "Hello None,".
	// Code assigns and compares nulls ("lastrow = None").
	if proseCode || !nullTokens.has(prose) {
		return "", false
	}
	var hit string
	forEachLine(prose, func(l string) bool {
		if !nullTokens.has(l) {
			return true
		}
		if v, ok := nullSlot(l); ok && !strings.Contains(t.in, v) {
			hit = l
			return false
		}
		if v, ok := nullInSentence(l); ok && !strings.Contains(t.in, v) {
			hit = l
			return false
		}
		return true
	})
	if hit != "" {
		return "a value left empty: " + strconv.Quote(clipText(hit, 60)), true
	}
	return "", false
}

// requestedTemplate reports whether a lower-case input asks for something to fill in: it
// names a template ("template", "fill in", "placeholders", "mail merge"), or asks to write,
// draft or prepare a document that carries the sender's and the recipient's details (a
// letter, an email, a memo, an invitation, a contract).
func requestedTemplate(in string) bool {
	if templateWords.has(in) {
		return true
	}
	head := in
	if len(head) > 120 {
		head = head[:120]
	}
	return creationVerbs.has(head) && documentNouns.has(in)
}

// draftedLetter reports whether the output is a letter or an email the user asked to have
// written: it opens with a salutation or a subject line and closes with a sign-off, and the
// input asks for something to be written ("Write a thank-you note after my interview",
// "Help me reply to the recruiter"). Its bracketed slots ("[Recruiter]", "[Employer]",
// "[Your Name]") are left for the user to fill in, however the request names the letter.
func draftedLetter(t *screenText) bool {
	first, _, _ := strings.Cut(t.outLow, "\n")
	first = strings.TrimSpace(strings.Trim(first, "*#"))
	if _, ok := letterOpenings.prefix(first); !ok {
		return false
	}
	tail := t.outLow[max(0, len(t.outLow)-200):]
	if !letterClosings.has(tail) {
		return false
	}
	return creationVerbs.has(t.inLow) || isCreation(t.inLow) || draftRequests.has(t.inLow)
}

// draftRequests ask, in other words, for a message to be written for the user.
var draftRequests = newPhraseSet("reply", "respond", "help me", "email", "e-mail", "letter", "note", "message", "thank")

// letterOpenings open a letter or an email; letterClosings sign one off.
var (
	letterOpenings = newPhraseSet("dear ", "hi ", "hi,", "hello ", "hello,", "subject:", "subject line:", "to:", "greetings")
	letterClosings = newPhraseSet("regards", "sincerely", "best,", "best wishes", "thanks,", "thank you,", "cheers", "yours truly",
		"respectfully", "warmly", "with gratitude", "all the best")
)

// templateWords name a document meant to be filled in.
var templateWords = newPhraseSet("template", "placeholder", "fill in", "fill-in", "fillable", "boilerplate", "mail merge",
	"mail-merge", "form letter", "reusable", "blank for", "blanks for")

// creationVerbs ask for a document to be written.
var creationVerbs = newPhraseSet("write", "draft", "compose", "create", "generate", "prepare", "make me", "give me", "put together",
	"help me with a", "need a", "want a")

// documentNouns are documents that carry the sender's and the recipient's own details.
var documentNouns = newPhraseSet("letter", "email", "e-mail", "mail to", "message to", "memo", "invitation", "announcement",
	"contract", "agreement", "proposal", "press release", "newsletter", "cover note", "resume", "résumé", " cv", "notice to",
	"reference for", "recommendation for", "toast", "wedding speech", "thank-you note", "thank you note", "note to")

// nullInSentence finds a serialized null standing where a name or a number belongs inside
// a sentence, in any language: "undefined has signed on.", "None ولج.", "„NaN“ ist bereit",
// "Your order of null items". A null that prose speaks of is a word of the sentence's
// grammar instead: a predicate or an object of a technical verb ("the slope is undefined",
// "returns None", "set to null"), the head of a technical noun ("undefined behavior", "null
// hypothesis", "null and void"), English "None of ..." and "None has ...", "nil-nil"; and a
// sentence about code ("In JavaScript, ...") may name them freely.
func nullInSentence(l string) (string, bool) {
	var found string
	eachNull(l, func(null string, i, off int) bool {
		before, _ := utf8.DecodeLastRuneInString(l[:i])
		after, _ := utf8.DecodeRuneInString(l[off:])
		if isWordRune(before) || isWordRune(after) {
			return false // part of a longer word or name: "nullable", "Nil's", "Nonesuch"
		}
		if strings.ContainsRune("._$`/-", before) || strings.ContainsRune("_(`-/=", after) {
			return false // code or a path: "obj.null", "nil-nil", "NaN()"
		}
		if lead := strings.TrimRight(l[:i], " "); lead != "" && strings.ContainsRune("=<>!+*/([", rune(lead[len(lead)-1])) {
			return false // an operand: "x == NaN", "f(null)"
		}
		if codeTalk.has(foldLower(l)) {
			return true // a sentence about code names nulls on purpose: stop looking
		}
		if hasNonASCIILetter(l) {
			// The sentence is in another language: English grammar does not apply, and
			// the null stands where the program put a value.
			found = null
			return true
		}
		prev, next := wordBefore(l[:i]), wordAfter(strings.TrimLeft(l[off:], "\"'”’»"))
		if nullGrammar.has(prev) || nullHeads.has(next) || null == "None" && (next == "" || noneEnglish.has(next)) {
			return false
		}
		if prev != "" && prev[0] >= '0' && prev[0] <= '9' {
			return false // "2 nil", "3 NaN"
		}
		found = null
		return true
	})
	return found, found != ""
}

// eachNull calls f with every serialized null in l and where it starts and ends, until f
// returns true.
func eachNull(l string, f func(null string, i, end int) bool) {
	for _, null := range nullTokens.list {
		for off := 0; ; {
			k := strings.Index(l[off:], null)
			if k < 0 {
				break
			}
			i := off + k
			off = i + len(null)
			if f(null, i, off) {
				return
			}
		}
	}
}

// nullTokens are the serialized nulls nullSlot and nullInSentence look for, as written.
var nullTokens = newPhraseSet("None", "null", "undefined", "NaN", "[object Object]", "nil")

// isWordRune reports whether r continues a word: a letter, a digit or an underscore.
func isWordRune(r rune) bool {
	return r == '_' || r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// hasNonASCIILetter reports whether s holds a letter outside ASCII.
func hasNonASCIILetter(s string) bool {
	for _, r := range s {
		if r >= utf8.RuneSelf && unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// isWordByte reports whether c continues an ASCII word: a letter, a digit, an underscore or
// an apostrophe.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '\''
}

// wordBefore returns the lower-case word that ends s, skipping spaces; "" when s ends in
// punctuation other than a space (the start of a sentence, a quote, a colon).
func wordBefore(s string) string {
	s = strings.TrimRight(s, " ")
	end := len(s)
	i := end
	for i > 0 && isWordByte(s[i-1]) {
		i--
	}
	return strings.ToLower(s[i:end])
}

// wordAfter returns the lower-case word that opens s, skipping spaces.
func wordAfter(s string) string {
	s = strings.TrimLeft(s, " ")
	i := 0
	for i < len(s) && isWordByte(s[i]) {
		i++
	}
	return strings.ToLower(s[:i])
}

// nullGrammar are the words after which prose names a null as a value: a copula, a verb that
// returns, sets or compares, an article or a preposition of technical talk.
var nullGrammar = newWordSet("is", "are", "was", "were", "be", "been", "being", "remains", "remain", "stays", "stay", "left",
	"becomes", "become", "returns", "return", "returned", "returning", "yields", "gives", "equals", "equal", "to", "as", "or",
	"than", "into", "of", "the", "a", "an", "not", "set", "sets", "with", "without", "any", "no", "contains", "contain", "handle",
	"handles", "check", "checks", "against", "like", "get", "gets", "got", "produce", "produces", "assign", "assigns", "pass",
	"passes", "and", "either", "neither", "nor", "in", "from", "if", "for", "when", "are", "also", "even", "still", "both")

// nullHeads are the words a null modifies or opens in technical and legal prose.
var nullHeads = newWordSet("behavior", "behaviour", "reference", "references", "value", "values", "pointer", "pointers", "check",
	"checks", "safety", "hypothesis", "and", "set", "sets", "terminator", "character", "byte", "bytes", "coalescing", "object",
	"objects", "type", "types", "result", "results", "model", "space", "string", "strings", "field", "fields", "entry", "entries",
	"or", "is", "are", "was", "were", "means", "indicates", "represents", "stands", "literal", "literals", "propagation",
	"handling", "pattern", "cell", "cells", "modem", "element", "elements", "constraint", "constraints", "vector", "matrix",
	"operator", "operation", "operations", "input", "inputs", "case", "cases", "when", "if", "in", "to", "for", "as", "by")

// noneEnglish are the words after which "None" is the English pronoun: "None of them",
// "None has been found"; so is a "None" that ends its clause ("None.", "None, really").
var noneEnglish = newWordSet("of", "other", "whatsoever", "at", "was", "were", "is", "are", "have", "has", "had", "can",
	"could", "would", "will", "shall", "should", "may", "might", "must", "seemed", "seem", "seems", "but", "else", "too", "so",
	"the", "that", "who", "which", "really", "yet", "knew", "know", "came", "survived", "remain", "remains", "left")

// codeTalk are words of a sentence about code, where nulls are named on purpose.
var codeTalk = newPhraseSet("javascript", "typescript", "python", "java", "sql", "json", "variable", "function", "property",
	"typeof", "pointer", "database", "column", "api", "ruby", "swift", "kotlin", "golang", " go ", "lisp", "object", "array",
	"nullable", "optional", "ieee", "float", "division", "divide", "zero", "undefined behavior", "compiler", "programming", "code")

// nullSlot finds a serialized null standing for a value in a line of prose: at the end of
// a "key: value" line ("Total: undefined"), after a greeting ("Hello None,"), or closing a
// short sentence ("The answer is None."). Technical prose says "the default is None" in
// longer sentences, which do not count.
func nullSlot(l string) (string, bool) {
	var found string
	eachNull(l, func(null string, i, end int) bool {
		if i > 0 && l[i-1] != ' ' && l[i-1] != ':' && l[i-1] != '=' {
			return false
		}
		before := strings.TrimRight(l[:i], " ")
		after := strings.TrimLeft(l[end:], ".!\"'")
		switch {
		case after == "" && (strings.HasSuffix(before, ":") || strings.HasSuffix(before, "=") && !hasAnySuffix(before, "==", "!=", "<=", ">=")),
			after == "" && len(strings.Fields(l)) <= 8 && hasAnySuffix(before, " is", " are", " was", " were", " be"),
			(after == "" || after[0] == ',' || after[0] == ' ') && hasAnySuffix(before, "Hello", "Hi", "Dear", "hello", "hi", "dear"):
			found = null
			return true
		}
		return false
	})
	return found, found != ""
}

func hasAnySuffix(s string, suffixes ...string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

// templateSlot finds an unfilled slot in template syntax: "{{ name }}", "{{{name}}}",
// "${name}", "#{name}", "<%= name %>", "{% tag %}", "{name}", "{0}", "%(name)s", "%s".
func templateSlot(s string) (string, bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{':
			if m, ok := braceSlot(s, i); ok {
				return m, true
			}
		case '<':
			if strings.HasPrefix(s[i:], "<%=") {
				if j := strings.Index(s[i:], "%>"); j > 0 && j < 60 {
					return s[i : i+j+2], true
				}
			}
		case '%':
			if m, ok := printfSlot(s, i); ok {
				return m, true
			}
		}
	}
	return "", false
}

// braceSlot reads a slot that opens with the '{' at s[i].
func braceSlot(s string, i int) (string, bool) {
	var prev byte = ' '
	if i > 0 {
		prev = s[i-1]
	}
	if prev == '{' {
		return "", false // the inner brace of "{{"; the outer one was read
	}
	open, closing := "{", "}"
	switch {
	case strings.HasPrefix(s[i:], "{{{"):
		open, closing = "{{{", "}}}"
	case strings.HasPrefix(s[i:], "{{"):
		open, closing = "{{", "}}"
	case strings.HasPrefix(s[i:], "{%"):
		open, closing = "{%", "%}"
	case prev == '$' || prev == '#':
		// ${name}, #{name}
	default:
		// A lone brace: only "{name}" or "{0}" after a space or an opening punctuation, so
		// LaTeX (\frac{a}{b}, x^{2}) and code are not read as slots.
		if !(prev == ' ' || prev == '\n' || prev == '(' || prev == '"' || prev == '\'' || prev == ':' || i == 0) {
			return "", false
		}
	}
	rest := s[i+len(open):]
	j := strings.Index(rest, closing)
	if j <= 0 || j > 40 {
		return "", false
	}
	name := strings.TrimSpace(rest[:j])
	if open == "{%" {
		return s[i : i+len(open)+j+len(closing)], name != ""
	}
	if name == "" || !isTemplateIdent(name) {
		return "", false
	}
	if open == "{" && prev != '$' && prev != '#' {
		// "{x}" in prose is math more often than a slot; a digit is a .NET format item.
		if len(name) < 2 && (name[0] < '0' || name[0] > '9') {
			return "", false
		}
	}
	start := i
	if prev == '$' || prev == '#' {
		start--
	}
	return s[start : i+len(open)+j+len(closing)], true
}

// printfSlot reads a printf verb left in prose at s[i] == '%': "%s", "%d", "%(name)s".
func printfSlot(s string, i int) (string, bool) {
	if i > 0 && s[i-1] != ' ' && s[i-1] != '"' && s[i-1] != '\'' && s[i-1] != '(' && s[i-1] != ':' {
		return "", false // "50%s" or a URL escape
	}
	j := i + 1
	if j < len(s) && s[j] == '(' {
		k := strings.IndexByte(s[j:], ')')
		if k <= 1 || k > 30 || !isTemplateIdent(s[j+1:j+k]) {
			return "", false
		}
		j += k + 1
	}
	if j >= len(s) || (s[j] != 's' && s[j] != 'd') {
		return "", false
	}
	if j+1 < len(s) && isLowerAlnum(s[j+1]|0x20) && s[j+1] < 0x80 {
		return "", false // "%service"
	}
	return s[i : j+1], true
}

// standInSlot finds a bracketed or tag-style stand-in: "[INSERT NAME]", "[Your Name]",
// "<ANSWER>", "[COMPANY NAME]". A request to draft something (a letter, an email) may leave
// the sender's own details to fill in, so "[Your Name]" counts only outside one.
func standInSlot(s string, creation bool) (string, bool) {
	for i := 0; i < len(s); i++ {
		var closing byte
		switch s[i] {
		case '[':
			closing = ']'
		case '<':
			closing = '>'
		default:
			continue
		}
		j := strings.IndexByte(s[i+1:], closing)
		if j < 2 || j > 40 {
			continue
		}
		inner := s[i+1 : i+1+j]
		if closing == ']' && i+j+2 < len(s) && s[i+j+2] == '(' {
			continue // a markdown link
		}
		if !slotText(inner, closing == '>') {
			continue
		}
		low := strings.ToLower(inner)
		userSlot := strings.HasPrefix(low, "your ") || strings.HasPrefix(low, "recipient")
		if creation && userSlot {
			continue
		}
		return s[i : i+j+2], true
	}
	return "", false
}

// slotText reports whether the text inside brackets names a slot: capitals and spaces or
// underscores with a slot word ("ANSWER", "COMPANY NAME", "YOUR_NAME"), the same in Title
// Case within square brackets ("Company Name", "Customer's Email"), or an instruction to fill
// it in ("Insert name here", "Your answer here", "Enter date").
func slotText(inner string, tag bool) bool {
	low := strings.ToLower(inner)
	for _, p := range [...]string{"insert ", "enter ", "add ", "your ", "fill in"} {
		if strings.HasPrefix(low, p) {
			return !tag || strings.ToUpper(inner) == inner
		}
	}
	upper := true
	for k := 0; k < len(inner); k++ {
		c := inner[k]
		if !(c >= 'A' && c <= 'Z' || c == ' ' || c == '_' || c == '\'') {
			upper = false
			break
		}
	}
	words := strings.FieldsFunc(low, func(r rune) bool { return r == ' ' || r == '_' })
	if !upper && (tag || !titleCase(inner) || len(words) > 4) {
		return false
	}
	for i, w := range words {
		switch w {
		case "name", "date", "company", "address", "email", "phone", "number", "amount", "recipient", "city", "country",
			"url", "position", "location", "organization", "price":
			return true
		case "answer", "topic", "product", "title", "link", "value", "result", "output", "insert", "placeholder", "your",
			"details", "description", "time":
			// Words that also title a section or a link ("[Result]", "[Link]") name a slot
			// in capitals only, or after another word ("[Product Title]").
			if upper || i > 0 {
				return true
			}
		}
	}
	return false
}

// titleCase reports whether every word of s opens with a capital letter, as "Company Name"
// and "Manager's Name" do; a Title Case slot names a field like a capitalized one.
func titleCase(s string) bool {
	for _, w := range strings.Fields(s) {
		if w[0] < 'A' || w[0] > 'Z' {
			return false
		}
	}
	return strings.TrimSpace(s) != ""
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func isTemplateIdent(s string) bool {
	for _, r := range s {
		if !(r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// findRefusal finds a refusal in the opening of the output, where a model that declines
// says so: a phrase that declines on its own in any of the languages of refusalPhrases, or
// an apology or an assistant's self-reference together with a statement of inability
// ("Lo siento ... no puedo", "抱歉 ... 无法") in the same opening.
func findRefusal(t *screenText) (string, bool) {
	// A product notice that refuses for want of permission, in any of noticePermissions'
	// languages: "Operation not permitted", "Sie haben keine Berechtigung ...".
	if m, ok := findNotice(t, noticePermissions); ok {
		return "refuses for want of permission (" + m + ")", true
	}
	head := t.head
	m, ok := refusalPhrases.find(head)
	generic := false
	if !ok {
		if o, opens := openingInability(head); opens {
			m, ok = o, true
		}
	}
	if !ok {
		a, apologized := refusalApologies.find(head)
		if !apologized {
			a, apologized = refusalOpeners.prefix(head)
		}
		if !apologized {
			return "", false
		}
		n, unable := refusalInabilities.find(head)
		if !unable {
			return "", false
		}
		m, generic = strings.TrimSpace(a)+" ... "+strings.TrimSpace(n), true
		if i := strings.Index(head, a); i > 12 && isCreation(t.inLow) {
			// "Unfortunately I can't attend" in a note the user asked to draft is its content.
			return "", false
		}
	} else if _, generic = genericInabilities[m]; generic && !declinesRequest(head, m, isCreation(t.inLow)) {
		// "I can't attend on Thursday" in a drafted note, "I cannot stress enough": the
		// words of inability, not a refusal of the request.
		return "", false
	}
	m = strings.TrimSpace(m)
	if strings.Contains(t.inLow, m) {
		// A quote of the input ("Who said 'I cannot tell a lie'?") is not a refusal.
		return "", false
	}
	// A disclaimer followed by the answer ("I'm just an AI, I don't have opinions, but I can
	// tell you ...") complies.
	if answerAfterDisclaimer.has(head) {
		return "", false
	}
	// Correcting a false premise ("I can't give one: Goofy is fictional") answers the
	// question, as XSTest counts it; so does praise ("I can't stress enough").
	if premiseCorrections.has(head) || praisePhrases.has(head) {
		return "", false
	}
	if helpsWithTheRest(t, m) {
		return "", false
	}
	return "refuses (" + m + ")", true
}

// helpsWithTheRest reports whether an output that declines one part of the request goes on
// to help with the rest: its first sentence declines, the next turns ("However, ...", "That
// said, ...", "Instead, ...") and gives an answer of its own, sixty words or more, that
// declines nothing more ("I cannot recommend a specific brand. However, here is what to look
// for: ..."). The part declined is a recommendation, an opinion, a prediction, a diagnosis or
// live data (declinedParts): a refusal of the whole request that lectures or points elsewhere
// ("However, you can consult a doctor.") is still a refusal.
func helpsWithTheRest(t *screenText, m string) bool {
	// The declining sentence is the first one, and the turn opens the next.
	end := strings.IndexAny(t.outLow, ".!\n")
	if end < 0 || !strings.Contains(t.outLow[:end], strings.TrimSpace(m)) {
		return false
	}
	if !declinedParts.has(t.outLow[:end]) {
		return false
	}
	rest := strings.TrimLeft(t.outLow[end+1:], " \n*")
	if _, ok := partialTurns.prefix(rest); !ok {
		return false
	}
	if len(strings.Fields(rest)) < 60 {
		return false
	}
	_, again := refusalPhrases.find(rest)
	return !again
}

// declinedParts are what an answer declines while it helps with the rest: a recommendation,
// an endorsement or an opinion of its own, a prediction or a guarantee, a diagnosis, a
// specific name, live data.
var declinedParts = newPhraseSet("recommend", "endorse", "specific", "personal opinion", "personal preference", "opinion",
	"predict", "guarantee", "diagnos", "prescribe", "legal advice", "medical advice", "financial advice", "real-time",
	"browse", "access to")

// partialTurns open the part of an answer that helps after declining another part.
var partialTurns = newPhraseSet("however,", "that said,", "that being said,", "instead,", "but here", "here is what", "here's what",
	"what i can do", "what i can tell", "i can, however,", "i can tell you", "i can explain", "i can offer", "i can suggest", "i can provide")

// openingInability finds a first-person statement of inability that opens the output, the
// way a model declines in any language: "Je ne peux pas rédiger ...", "No puedo escribir
// ...", "Nie mogę ...", "我不能撰写 ...", "私は...できません。". It is the English rule ("I
// can't" opening the output declines the request, even for a note the user asked to draft)
// applied alike in every language.
func openingInability(head string) (string, bool) {
	if p, ok := openingInabilities.prefix(head); ok {
		return p, true
	}
	// German and Dutch split the negation from the modal: "Ich kann Ihnen leider nicht dabei
	// helfen", "Ik kan u daar helaas niet mee helpen".
	for _, modal := range [...]string{"ich kann ", "ik kan "} {
		if strings.HasPrefix(head, modal) {
			clause, _, _ := strings.Cut(head, ",")
			clause, _, _ = strings.Cut(clause, ".")
			for _, w := range strings.Fields(clause) {
				if w == "nicht" || w == "keine" || w == "keinen" || w == "niet" || w == "geen" {
					return strings.TrimSpace(modal) + " ... " + w, true
				}
			}
		}
	}
	// Japanese and Korean put the verb last: a first-person opening whose first sentence
	// ends in inability.
	if _, ok := firstPersonOpenings.prefix(head); ok {
		first, _, _ := strings.Cut(head, "。")
		first, _, _ = strings.Cut(first, ". ")
		if n, unable := sentenceFinalInabilities.find(first); unable {
			return n, true
		}
	}
	return "", false
}

// declinesRequest reports whether a generic English inability ("i can't ") found in head
// declines the request: it opens the output, or (outside a note the user asked to draft)
// follows an apology or is followed by a verb of helping or by what was asked ("that").
func declinesRequest(head, m string, creation bool) bool {
	i := strings.Index(head, m)
	if i < 0 {
		return false
	}
	if i < 12 {
		return true
	}
	if creation {
		// Past the opening of a drafted note or message, "I can't" is its content.
		return false
	}
	if refusalApologies.has(head[:i]) {
		return true
	}
	next, _, _ := strings.Cut(strings.TrimLeft(head[i+len(m):], " "), " ")
	next = strings.Trim(next, ".,;:!")
	_, ok := helpingVerbs[next]
	return ok
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

// premiseCorrections are phrases that correct a false premise.
var premiseCorrections = newPhraseSet("fictional", "nonsensical", "does not make sense", "doesn't make sense", "not make sense",
	"factually coherent", "assumption behind", "assumption in the question", "false assumption", "flawed premise", "false premise", "inanimate", "don't understand the question",
	"do not understand the question", "clarify", "does not exist", "doesn't exist", "not a real")

// praisePhrases are "I can't ... enough" phrases that praise rather than refuse.
var praisePhrases = newPhraseSet("stress enough", "recommend it enough", "emphasize enough", "overstate")

// answerAfterDisclaimer are phrases that follow a disclaimer with the answer.
var answerAfterDisclaimer = newPhraseSet("but i can provide", "but i can tell", "but i can give", "but i can explain", "but i can share", "but here")

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

// standIns are stand-ins a writer leaves for later, in capitals as they are written.
var standIns = newPhraseSet("TODO:", "TODO(", "FIXME", "TBD:", "[INSERT ", "[YOUR NAME]", "<INSERT ")
