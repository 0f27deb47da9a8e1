package citation

import (
	"regexp"
	"strings"
	"unicode"
)

// kind is what a block of the output is.
type kind int

const (
	kindParagraph kind = iota
	kindItem           // a list item or a table data row
	kindHeading        // a heading, a table header, a bold or title-case line
	kindReference      // a line under a "Sources" / "References" heading
)

// unit is one block of text: a paragraph, a list item, a heading or a table row.
type unit struct {
	text  string
	kind  kind
	lines int
}

var (
	fence      = regexp.MustCompile("^(```|~~~)")
	footDef    = regexp.MustCompile(`^\[\^([^\]\s]+)\]:\s*(.*)$`)
	supDef     = regexp.MustCompile(`^([¹²³⁰⁴⁵⁶⁷⁸⁹]+)[.:)]?\s+(\S.*)$`)
	linkDef    = regexp.MustCompile(`^\[[^\]^]+\]:\s*\S+`)
	atxHeading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	rule       = regexp.MustCompile(`^([-*_])(\s*([-*_]))*\s*$`)
	setext     = regexp.MustCompile(`^(=+|-+)\s*$`)
	tableSep   = regexp.MustCompile(`^\|?(\s*:?-+:?\s*\|)+\s*(:?-+:?\s*)?\|?$`)
	listItem   = regexp.MustCompile(`^(?:[-*+•‣◦▪●]|\d{1,3}[.)]|[a-z][.)]|\(\d{1,3}\)|\([a-z]\))\s+(.*)$`)
	quote      = regexp.MustCompile(`^(>\s?)+`)
	boldLine   = regexp.MustCompile(`^(\*\*|__)([^*_].*?)(\*\*|__)\s*:?$`)
	refHeading = regexp.MustCompile(`^(sources?|references?|citations?|bibliography|works cited|footnotes|notes)\s*:?$`)
)

// blocks splits an output into units and collects footnote definitions. Fenced code is
// dropped: code states nothing a passage could support.
func blocks(output string) ([]unit, map[string]string) {
	var units []unit
	defs := map[string]string{}
	var cur *unit
	flush := func() {
		if cur != nil {
			units = append(units, *cur)
			cur = nil
		}
	}
	inFence := false
	for _, line := range strings.Split(strings.ReplaceAll(output, "\r\n", "\n"), "\n") {
		t := strings.TrimSpace(line)
		if fence.MatchString(t) {
			inFence = !inFence
			flush()
			continue
		}
		if inFence {
			continue
		}
		t = strings.TrimSpace(quote.ReplaceAllString(t, ""))
		switch {
		case t == "":
			flush()
		case footDef.MatchString(t):
			m := footDef.FindStringSubmatch(t)
			defs[m[1]] = m[2]
			flush()
		case supDef.MatchString(t):
			m := supDef.FindStringSubmatch(t)
			defs[superLabel(m[1])] = m[2] // "¹ Source: doc-1" defines the superscript ¹
			flush()
		case linkDef.MatchString(t) && !strings.Contains(t, " ") || linkDef.MatchString(t) && strings.Contains(t, "://"):
			flush() // a markdown link reference definition: "[1]: https://..."
		case setext.MatchString(t) && cur != nil && cur.kind == kindParagraph:
			cur.kind = kindHeading
			flush()
		case rule.MatchString(t):
			flush()
		case atxHeading.MatchString(t):
			flush()
			units = append(units, unit{text: atxHeading.FindStringSubmatch(t)[1], kind: kindHeading, lines: 1})
		case strings.HasPrefix(t, "|"):
			if tableSep.MatchString(t) {
				if cur != nil {
					cur.kind = kindHeading
				} else if n := len(units); n > 0 {
					units[n-1].kind = kindHeading
				}
				flush()
				continue
			}
			flush()
			cells := strings.FieldsFunc(t, func(r rune) bool { return r == '|' })
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			cur = &unit{text: strings.Join(cells, "; "), kind: kindItem, lines: 1}
		case listItem.MatchString(t):
			flush()
			cur = &unit{text: listItem.FindStringSubmatch(t)[1], kind: kindItem, lines: 1}
		case strings.HasPrefix(t, "[") || strings.HasPrefix(t, "【"):
			flush() // a line that opens with a marker is an entry of its own ("[1] Title")
			cur = &unit{text: t, kind: kindItem, lines: 1}
		case cur != nil && !strings.HasSuffix(cur.text, ":"):
			cur.text += " " + t
			cur.lines++
		default:
			flush()
			cur = &unit{text: t, kind: kindParagraph, lines: 1}
		}
	}
	flush()
	return units, defs
}

// splitSentences splits cleaned text (markers already sentinels) into sentences. A period
// ends a sentence only when followed by white space and then not by a lower-case letter,
// and not after an abbreviation, an initial or a dotted acronym; "3.14" and "example.com"
// never split. Markers right after the end ("tall. [1]") belong to the sentence before.
func splitSentences(s string) []string {
	rs := []rune(s)
	var out []string
	start := 0
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if !isTerminal(r) {
			continue
		}
		j := i + 1
		for j < len(rs) && (isTerminal(rs[j]) || isCloser(rs[j]) || rs[j] == sentinel) {
			j++
		}
		cjk := r == '。' || r == '！' || r == '？'
		if !cjk && j < len(rs) && !unicode.IsSpace(rs[j]) {
			i = j - 1
			continue
		}
		k := j
		for k < len(rs) && (unicode.IsSpace(rs[k]) || rs[k] == sentinel) {
			k++
		}
		if k < len(rs) && !cjk {
			if unicode.IsLower(rs[k]) || isTerminal(rs[k]) || strings.ContainsRune(",;:", rs[k]) || (r == '.' && !periodEnds(rs, i, rs[k])) {
				i = j - 1
				continue
			}
		}
		out = append(out, string(rs[start:j]))
		start = j
		i = j - 1
	}
	if start < len(rs) {
		out = append(out, string(rs[start:]))
	}
	// Move markers that open a sentence to the sentence before: "tall. [1] It was ...".
	for i := 1; i < len(out); i++ {
		lead := 0
		seen := false
		for _, r := range out[i] {
			if r == sentinel {
				seen = true
			} else if !unicode.IsSpace(r) && r != ',' {
				break
			}
			lead += len(string(r))
		}
		if seen {
			out[i-1] += strings.TrimRight(out[i][:lead], " \t,")
			out[i] = out[i][lead:]
		}
	}
	kept := out[:0]
	for _, s := range out {
		if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			kept = append(kept, s)
		} else if len(kept) > 0 {
			kept[len(kept)-1] += s
		} else {
			kept = append(kept, s)
		}
	}
	return kept
}

func isTerminal(r rune) bool {
	return r == '.' || r == '!' || r == '?' || r == '。' || r == '！' || r == '？'
}

func isCloser(r rune) bool { return strings.ContainsRune(`"')]}”’»）」』`, r) }

// Abbreviations that never end a sentence (a name or a word always follows), and ones that
// do not end it before a number ("No. 5", "Jan. 12").
var (
	neverEnd = set("mr mrs ms dr prof sr jr st mt gen col lt sgt rev hon gov sen rep capt " +
		"e.g i.e vs cf approx ca al fig figs vol vols pp ch sec eq dept est u.s u.k u.n e.u " +
		"ph.d viz resp incl")
	endUnlessNumber = set("no nos p art para op jan feb mar apr jun jul aug sep sept oct nov dec")
)

// periodEnds decides whether the period at rs[i] ends a sentence, given the first
// non-space rune after it.
func periodEnds(rs []rune, i int, next rune) bool {
	k := i
	for k > 0 && i-k < 12 && (unicode.IsLetter(rs[k-1]) || rs[k-1] == '.') {
		k--
	}
	word := strings.ToLower(strings.Trim(string(rs[k:i]), "."))
	if word == "" {
		return true
	}
	if neverEnd[word] {
		return false
	}
	if endUnlessNumber[word] && unicode.IsDigit(next) {
		return false
	}
	// An initial ("J. K. Rowling"): one upper-case letter standing alone.
	if len([]rune(word)) == 1 && unicode.IsUpper(rs[i-1]) && (k == 0 || !unicode.IsLetter(rs[k-1])) {
		return false
	}
	return true
}

var (
	greeting   = regexp.MustCompile(`^(hi|hello|hey|greetings|dear|good (morning|afternoon|evening))\b`)
	thanks     = regexp.MustCompile(`^(thanks|thank you|you're welcome|you are welcome|cheers)\b`)
	closing    = regexp.MustCompile(`^(i hope (this|that|it) helps|hope (this|that|it) helps|let me know|please let me know|feel free|please feel free|happy to help|glad to help|i('d| would) be happy|if you have any|do you (want|need)|would you like|is there anything else|anything else)\b`)
	filler     = regexp.MustCompile(`^(sure|certainly|of course|absolutely|great question|good question|okay|ok|alright|got it|no problem|yes|no|indeed)\b`)
	transition = regexp.MustCompile(`^(here('s| is| are)|below (is|are)|the following|let me|let's|i('ll| will| can)|in summary|to summarize|in short|in conclusion|summary|overview)\b`)
	noKnow     = regexp.MustCompile(`\bi (do not|don't|cannot|can't|could not|couldn't) (know|find|determine|answer|say|tell)\b|\bi('m| am) not (sure|certain|able)\b|^there (is|are) no (information|mention|data|details)\b`)
	noSource   = regexp.MustCompile(`\b(context|documents?|sources?|passages?|information|evidence|excerpts?)\b`)
	noVerb     = regexp.MustCompile(`\b(does not|doesn't|do not|don't|did not|didn't)\s+(\w+\s+)?(contain|mention|say|include|provide|specify|state|cover|address)`)
	refLabel   = regexp.MustCompile(`^(sources?|references?|citations?|refs?|see( also)?|cf)\s*:?`)
)

// openers are the first words of the greeting, courtesy, filler, transition and source-label
// patterns: a sentence that opens with another word skips those regular expressions.
var openers = set(`hi hello hey greetings dear good thanks thank you're you cheers i hope let
please feel happy glad if do would is anything sure certainly of absolutely great okay ok
alright got no yes indeed here here's below the let's i'll in to summary overview sources
source references reference citations citation refs ref see cf i'd`)

// isClaim decides whether a sentence (sentinels removed) states something that needs a
// citation: not a question, a heading-like line ending in ':', a greeting, a courtesy, a
// transition ("Here is a summary"), an "I don't know", or a bare list of sources; and it
// carries content: two content words, or one with a number or a citation ("Paris [1].").
func isClaim(text string, cited bool) bool {
	t := strings.TrimSpace(strings.Trim(strings.TrimSpace(text), "*_"))
	if t == "" {
		return false
	}
	last, _ := lastRune(t)
	if last == '?' || last == '？' || last == ':' || last == '：' {
		return false
	}
	low := strings.ToLower(t)
	fields := strings.Fields(low)
	words := len(fields)
	if !openers[strings.Trim(fields[0], ",.!:;")] {
		if noInformation(low) {
			return false
		}
		content := len(contentWords(low))
		return content >= 2 || content == 1 && (cited || strings.ContainsFunc(low, unicode.IsDigit))
	}
	switch {
	case greeting.MatchString(low) && words <= 8,
		thanks.MatchString(low) && words <= 12,
		closing.MatchString(low),
		filler.MatchString(low) && words <= 3,
		transition.MatchString(low) && words <= 10 && !cited,
		noInformation(low):
		return false
	}
	if loc := refLabel.FindStringIndex(low); loc != nil && len(contentWords(low[loc[1]:])) == 0 {
		return false
	}
	content := len(contentWords(low))
	return content >= 2 || content == 1 && (cited || strings.ContainsFunc(low, unicode.IsDigit))
}

// noInformation reports whether a sentence says the agent does not know or the sources do
// not say. The cheap substring tests spare the regular expressions on most sentences.
func noInformation(low string) bool {
	if (strings.Contains(low, "i ") || strings.Contains(low, "i'm") || strings.HasPrefix(low, "there")) && noKnow.MatchString(low) {
		return true
	}
	return (strings.Contains(low, "not ") || strings.Contains(low, "n't ")) && noVerb.MatchString(low) && noSource.MatchString(low)
}

// looksLikeHeading reports whether a one-line paragraph is a heading: a bold line, or a
// short line without end punctuation whose longer words are all capitalized ("Key Facts").
func looksLikeHeading(clean string) bool {
	if strings.ContainsRune(clean, sentinel) {
		return false
	}
	t := strings.TrimSpace(clean)
	if boldLine.MatchString(t) {
		return true
	}
	words := strings.Fields(t)
	if len(words) == 0 || len(words) > 8 {
		return false
	}
	if last, _ := lastRune(t); isTerminal(last) || last == ':' {
		return last == ':'
	}
	long := 0
	for _, w := range words {
		w = strings.Trim(w, `*_"'()`)
		if len([]rune(w)) < 4 {
			continue
		}
		long++
		if r := []rune(w)[0]; !unicode.IsUpper(r) {
			return false
		}
	}
	return long > 0
}

func lastRune(s string) (rune, bool) {
	rs := []rune(s)
	if len(rs) == 0 {
		return 0, false
	}
	return rs[len(rs)-1], true
}

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
