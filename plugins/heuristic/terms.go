package heuristic

import (
	"strings"
	"unsafe"
)

// terms returns the distinct terms of s in order of first appearance: words made of a-z and
// 0-9 after folding accents and case, with verbs in their base form and verb phrases
// rewritten as the reference's tagger rewrites them: modals dropped ("should consider" ->
// "consider"), negations spelt out ("can't go" -> "does not go"), auxiliaries folded into
// the verb ("was studying" -> "study").
func terms(s string) []string {
	out, _ := termSet(s)
	return out
}

// termSet returns terms(s) and the same terms as a set.
func termSet(s string) ([]string, map[string]struct{}) {
	words := wordTokens(s)
	seen := make(map[string]struct{}, min(len(words), 64))
	out := make([]string, 0, len(words))
	add := func(ws ...string) {
		for _, w := range ws {
			if _, ok := seen[w]; ok || w == "" {
				continue
			}
			seen[w] = struct{}{}
			out = append(out, w)
		}
	}
	// Each word is looked up in the lexicon once, as the next word, then kept as the
	// current and the previous one: a WebAssembly guest hashes a string key with Go's
	// portable hash, and the lists' own maps asked up to seven times a word.
	var prevE, curE, nextE lexEntry
	if len(words) > 0 {
		nextE = lexicon[words[0]]
	}
	for i, w := range words {
		prev, next := "", ""
		if i > 0 {
			prev = words[i-1]
		}
		prevE, curE, nextE = curE, nextE, lexEntry{}
		if i+1 < len(words) {
			next = words[i+1]
			nextE = lexicon[next]
		}
		base, rest, apos := strings.Cut(w, "'")
		switch {
		case apos && rest == "t" && strings.HasSuffix(base, "n"): // don't, isn't, can't, won't ...
			aux := base[:len(base)-1]
			if aux == "do" {
				add("do")
			} else {
				add(doForm(prev))
			}
			if isBe(aux) {
				add("be")
			}
			add("not")
		case apos:
			// The tagger keeps the pieces ("i'm" -> "i", "m") and adds the expansion; a
			// contracted "is" ("what's") loses its "s".
			isIs := rest == "s" && contractsIs[base]
			if isIs {
				add(splitWord(base)...)
			} else {
				add(splitWord(w)...)
			}
			switch {
			case next == "not" && (isIs || rest == "re" || rest == "m"):
				add(doForm(base), "be")
			case isIs, rest == "re", rest == "m":
				add("be")
			case rest == "ve":
				add("have")
			}
		case w == "cannot":
			add(doForm(prev), "not")
		case curE.modal && next != "" && prev != "" && !nextE.pronoun && !prevE.wh:
			// A modal before its verb folds into it; in a question ("how can you") it stays.
			if next == "not" {
				add(doForm(prev))
			}
		case next == "not" && (curE.isBe(w) || w == "do" || w == "does" || w == "did"):
			if w == "do" {
				add("do")
			} else {
				add(doForm(prev))
			}
			if curE.isBe(w) {
				add("be")
			}
		case w == "does" && prev != "":
			add("does") // the tagger keeps a question's "does" ("what state does it ...")
		case w == "did" && prev != "":
			add("do")
		case curE.aux != "" && nextE.looksInflected(next):
			// "was studying" -> "study": the tagger folds the auxiliary into the verb
		default:
			add(baseFormOf(w, curE, prev, prevE))
		}
	}
	return out, seen
}

// doForm is the form of "do" the reference's tagger writes for a negated verb after prev.
func doForm(prev string) string {
	switch prev {
	case "i", "we", "they":
		return "do"
	}
	return "does"
}

func isBe(w string) bool { return lexicon[w].isBe(w) }

// lexEntry is what completeness's word lists (auxiliary, irregular, thirdPerson,
// pronoun, gerundBefore, modal, whWord) say of one word, so that a word is looked up once.
type lexEntry struct {
	aux, irregular, third            string
	modal, pronoun, wh, gerundBefore bool
}

// lexicon holds an entry for every word of the lists.
var lexicon = func() map[string]lexEntry {
	m := map[string]lexEntry{}
	mark(m, auxiliary, func(e *lexEntry, v string) { e.aux = v })
	mark(m, irregular, func(e *lexEntry, v string) { e.irregular = v })
	mark(m, thirdPerson, func(e *lexEntry, v string) { e.third = v })
	mark(m, pronoun, func(e *lexEntry, v bool) { e.pronoun = v })
	mark(m, gerundBefore, func(e *lexEntry, v bool) { e.gerundBefore = v })
	mark(m, modal, func(e *lexEntry, v bool) { e.modal = v })
	mark(m, whWord, func(e *lexEntry, v bool) { e.wh = v })
	return m
}()

// mark records what the word list words says of each of its words in the word's entry in m,
// through set.
func mark[V any](m map[string]lexEntry, words map[string]V, set func(*lexEntry, V)) {
	for w, v := range words {
		e := m[w]
		set(&e, v)
		m[w] = e
	}
}

// isBe reports whether w, whose entry e is, is a form of "be" the tagger folds.
func (e lexEntry) isBe(w string) bool { return e.aux == "be" && w != "been" && w != "being" }

// contractsIs lists the words whose "'s" is "is", not a possessive.
var contractsIs = map[string]bool{
	"he": true, "she": true, "that": true, "what": true, "there": true, "here": true,
	"who": true, "where": true, "how": true, "this": true, "when": true, "why": true,
}

var whWord = map[string]bool{
	"how": true, "where": true, "what": true, "why": true, "when": true, "who": true, "which": true,
}

var modal = map[string]bool{
	"can": true, "could": true, "should": true, "would": true, "will": true, "may": true,
	"might": true, "must": true, "shall": true,
}

// wordTokens lower-cases s, folds accents and splits it on every character outside a-z,
// 0-9 and the apostrophe (curly apostrophes count); apostrophes at either end are dropped.
// The folded text is built once and the words are slices of it.
func wordTokens(s string) []string {
	buf := make([]byte, 0, len(s))
	for _, r := range s {
		r = foldAccent(r)
		switch {
		case r >= 'A' && r <= 'Z':
			buf = append(buf, byte(r+'a'-'A'))
		case (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '\'':
			buf = append(buf, byte(r))
		case r == '\u2019':
			buf = append(buf, '\'')
		default:
			buf = append(buf, ' ')
		}
	}
	// The words are slices of buf, which is not written again; buf holds only a-z, 0-9,
	// apostrophes and single spaces, so splitting on a space is strings.Fields.
	folded := unsafe.String(unsafe.SliceData(buf), len(buf))
	words := make([]string, 0, len(folded)/6+1)
	for len(folded) > 0 {
		w, rest, _ := strings.Cut(folded, " ")
		if w = strings.Trim(w, "'"); w != "" {
			words = append(words, w)
		}
		folded = rest
	}
	return words
}

// splitWord splits a token on apostrophes into its a-z/0-9 pieces.
func splitWord(w string) []string {
	return strings.FieldsFunc(w, func(r rune) bool { return r == '\'' })
}

// auxiliary maps forms of be, have and do to their base form.
var auxiliary = map[string]string{
	"is": "be", "are": "be", "was": "be", "were": "be", "am": "be", "been": "be", "being": "be",
	"has": "have", "had": "have", "having": "have",
	"does": "do", "did": "do",
}

// irregular maps common irregular past forms to the base form. Past participles the
// reference keeps as adjectives ("known", "given") are left out.
var irregular = map[string]string{
	"went": "go", "said": "say", "made": "make", "took": "take", "came": "come", "saw": "see",
	"knew": "know", "got": "get", "gave": "give", "found": "find", "thought": "think",
	"told": "tell", "became": "become", "left": "leave", "felt": "feel", "brought": "bring",
	"began": "begin", "kept": "keep", "held": "hold", "wrote": "write", "stood": "stand",
	"heard": "hear", "meant": "mean", "met": "meet", "ran": "run", "paid": "pay", "sat": "sit",
	"spoke": "speak", "led": "lead", "grew": "grow", "lost": "lose", "fell": "fall",
	"sent": "send", "built": "build", "understood": "understand", "drew": "draw",
	"broke": "break", "spent": "spend", "won": "win", "taught": "teach", "bought": "buy",
	"caught": "catch", "fought": "fight", "chose": "choose", "wore": "wear", "drove": "drive",
	"ate": "eat", "flew": "fly", "sold": "sell", "sang": "sing", "swam": "swim",
	"threw": "throw", "rose": "rise", "shot": "shoot", "struck": "strike", "sought": "seek",
	"slept": "sleep", "forgot": "forget", "hid": "hide", "shown": "show", "given": "give",
	"taken": "take", "written": "write", "proven": "prove", "driven": "drive", "eaten": "eat",
	"chosen": "choose", "broken": "break", "forgotten": "forget", "hidden": "hide",
	"spoken": "speak", "stolen": "steal", "fallen": "fall", "grown": "grow", "thrown": "throw",
	"drawn": "draw", "worn": "wear", "gone": "go", "done": "do", "seen": "see", "begun": "begin",
	"born": "born", "dying": "die", "lying": "lie", "tying": "tie", "lightning": "lightning",
	"created": "create", "creating": "create", "united": "united",
}

var pronoun = map[string]bool{
	"he": true, "she": true, "it": true, "who": true, "that": true, "i": true, "you": true,
	"we": true, "they": true, "nobody": true, "everyone": true, "someone": true,
}

// thirdPerson maps frequent verbs' -s forms to the base form; they are verbs wherever no
// determiner or preposition precedes them.
var thirdPerson = map[string]string{
	"happens": "happen", "means": "mean", "goes": "go", "seems": "seem", "depends": "depend",
	"works": "work", "exists": "exist", "provides": "provide", "allows": "allow",
	"requires": "require", "includes": "include", "contains": "contain", "refers": "refer",
	"occurs": "occur", "causes": "cause", "makes": "make", "takes": "take", "gives": "give",
	"uses": "use", "helps": "help", "needs": "need", "wants": "want", "says": "say",
	"comes": "come", "becomes": "become", "remains": "remain", "involves": "involve",
	"varies": "vary", "tends": "tend", "appears": "appear", "lives": "live", "knows": "know",
	"looks": "look", "believes": "believe", "concerns": "concern", "follows": "follow",
	"deserves": "deserve", "guarantees": "guarantee", "consists": "consist", "leads": "lead",
}

// gerundBefore lists words after which an -ing form is a noun the tagger leaves alone.
var gerundBefore = map[string]bool{
	"for": true, "of": true, "in": true, "on": true, "by": true, "with": true, "about": true,
	"the": true, "a": true, "an": true, "from": true, "without": true, "before": true,
	"after": true, "this": true, "his": true, "her": true, "their": true, "its": true,
}

// notGerund reports whether w ends in -ing without being a verb form ("during", "nothing").
func notGerund(w string) bool {
	if strings.HasSuffix(w, "thing") {
		return true
	}
	switch w {
	case "during", "morning", "evening", "ceiling", "string", "spring", "bring", "sibling", "wedding", "pudding":
		return true
	}
	stem := w[:len(w)-3]
	return !strings.ContainsAny(stem, "aeiouy")
}

// looksInflected reports whether w looks like an -ed or -ing verb form or an irregular
// past form.
func looksInflected(w string) bool { return lexicon[w].looksInflected(w) }

// looksInflected is looksInflected for w, whose entry e is.
func (e lexEntry) looksInflected(w string) bool {
	if e.irregular != "" {
		return true
	}
	return len(w) > 4 && (strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "ing"))
}

// baseForm returns the base form of w when w is recognisably a verb form, else w.
func baseForm(w, prev string) string { return baseFormOf(w, lexicon[w], prev, lexicon[prev]) }

// baseFormOf is baseForm with the entries of w and prev looked up already.
func baseFormOf(w string, e lexEntry, prev string, pe lexEntry) string {
	if e.aux != "" {
		return e.aux
	}
	if e.irregular != "" {
		return e.irregular
	}
	switch {
	case len(w) > 3 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		return stripSuffix(w, "ed")
	case len(w) > 5 && strings.HasSuffix(w, "ing") && !pe.gerundBefore && !notGerund(w):
		return stripSuffix(w, "ing")
	case e.third != "" && !pe.gerundBefore:
		return e.third
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is") && pe.pronoun && prev != "i" && prev != "you" && prev != "we" && prev != "they":
		if strings.HasSuffix(w, "ies") {
			return w[:len(w)-3] + "y"
		}
		if strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "sses") {
			return w[:len(w)-2]
		}
		return w[:len(w)-1]
	}
	return w
}

// stripSuffix removes an -ed or -ing suffix with the usual spelling rules: "stopped" ->
// "stop", "studied" -> "study", "used" -> "use", "making" -> "make", "provided" ->
// "provide", "experienced" -> "experience".
func stripSuffix(w, suffix string) string {
	stem := w[:len(w)-len(suffix)]
	if suffix == "ed" && strings.HasSuffix(stem, "i") {
		return stem[:len(stem)-1] + "y"
	}
	n := len(stem)
	if n >= 2 && stem[n-1] == stem[n-2] && !strings.ContainsRune("aeiouls", rune(stem[n-1])) {
		return stem[:n-1] // doubled final consonant: "stopped" -> "stop"
	}
	if needsE(stem) {
		return stem + "e"
	}
	return stem
}

// needsE reports whether a stem left by removing -ed or -ing lost a silent e.
func needsE(stem string) bool {
	n := len(stem)
	if n < 2 {
		return false
	}
	last, prev := stem[n-1], stem[n-2]
	switch {
	case last == 'c' || last == 'v' || (last == 'z' && prev != 'z'):
		return true // experienc, involv, realiz
	case last == 'l' && isConsonant(prev) && prev != 'l' && prev != 'r':
		return true // struggl, handl
	case last == 'g' && (prev == 'a' || prev == 'r' || prev == 'd' || (prev == 'n' && n >= 3 && stem[n-3] == 'a')):
		return true // manag, emerg, judg, chang
	case last == 's' && (isConsonant(prev) && prev != 's' || prev == 'a' || prev == 'o' || (prev == 'u' && n >= 3 && stem[n-3] == 'a')):
		return true // respons, releas, clos, caus
	case last == 't' && prev == 'a' && n >= 3 && !strings.ContainsRune("eoa", rune(stem[n-3])):
		return true // relat, operat, associat
	case last == 't' && prev == 'o' && n >= 3 && (stem[n-3] == 'm' || stem[n-3] == 'v' || stem[n-3] == 'n'):
		return true // promot, vot, not
	case last == 't' && prev == 'u' && n >= 5 && isConsonant(stem[n-3]):
		return true // execut, contribut
	case last == 'd' && (prev == 'u' || prev == 'o' || (prev == 'i' && n >= 3 && stem[n-3] != 'o' && stem[n-3] != 'a')):
		return true // includ, explod, provid
	case (last == 'r' && (prev == 'i' || prev == 'u')) || (last == 'r' && prev == 'a' && n >= 3 && isConsonant(stem[n-3])):
		return true // requir, ensur, compar
	case last == 'n' && prev == 'i' && n >= 3 && isConsonant(stem[n-3]):
		return true // combin, determin
	case last == 'm' && prev == 'u':
		return true // assum
	}
	// A one-syllable stem ending consonant-vowel-consonant: "us", "mak", "hop".
	groups, inVowel := 0, false
	for i := 0; i < n; i++ {
		v := isVowel(stem[i])
		if v && !inVowel {
			groups++
		}
		inVowel = v
	}
	return groups == 1 && isConsonant(last) && !strings.ContainsRune("wxy", rune(last)) && isVowel(prev) && (n < 3 || !isVowel(stem[n-3]))
}

func isVowel(c byte) bool     { return strings.IndexByte("aeiou", c) >= 0 }
func isConsonant(c byte) bool { return c >= 'a' && c <= 'z' && !isVowel(c) }
