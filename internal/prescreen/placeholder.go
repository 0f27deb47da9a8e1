package prescreen

import (
	"math/bits"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/scorekit/scorekit/internal/textkit"
)

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
		return "a value left empty: " + strconv.Quote(textkit.Clip(hit, 60)), true
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

func isTemplateIdent(s string) bool {
	for _, r := range s {
		if !(r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// standIns are stand-ins a writer leaves for later, in capitals as they are written.
var standIns = newPhraseSet("TODO:", "TODO(", "FIXME", "TBD:", "[INSERT ", "[YOUR NAME]", "<INSERT ")
