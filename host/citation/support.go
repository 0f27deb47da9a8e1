package citation

import (
	"fmt"
	"strings"
	"unicode"
)

// terms are what the support tests compare: content-word stems, numbers, and names
// (capitalized words that do not open the sentence, and acronyms).
type terms struct {
	stems []string // in order of appearance, unique
	nums  []string
	names []string // lower-cased
}

// bag is a passage's terms as sets.
type bag struct {
	stems map[string]bool
	nums  map[string]bool
	words map[string]bool // lower-cased words with plural/possessive stripped, for names
}

// numbers returns the runs of ASCII digits in text, with the '.' and ',' between digits
// ("1,083", "3.14", "1.2.3").
func numbers(text string) []string {
	var out []string
	for i := 0; i < len(text); {
		if !isDigit(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && (isDigit(text[j]) || (text[j] == '.' || text[j] == ',') && j+1 < len(text) && isDigit(text[j+1])) {
			j++
		}
		out = append(out, text[i:j])
		i = j
	}
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// hasContent reports whether text has a content word or a digit.
func hasContent(text string) bool {
	for i := 0; i < len(text); i++ {
		if isDigit(text[i]) {
			return true
		}
	}
	for _, w := range words(text) {
		if low := strings.ToLower(w); !stopwords[low] && len(low) >= 2 {
			return true
		}
	}
	return false
}

// numberWords lets a passage that spells a number support a sentence that writes it in
// digits. "one" is left out: it is a pronoun far more often than a count.
var numberWords = map[string]string{
	"two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
	"eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
}

// stopwords are function words and discourse words; they say nothing a passage supports.
var stopwords = set(`a about above after again against all also am an and any are as at be
because been before being below between both but by can could did do does doing down during
each either else etc ever every few for from further had has have having he her here hers
herself him himself his how however i if in into is it its itself just least less let like
may me might more most much must my myself neither no nor not now of off often on once only
or other otherwise our ours ourselves out over own per rather same she should since so some
such than that the their theirs them themselves then there therefore these they this those
though through thus to too under until up upon us very via was we were what whatever when
where whether which while who whom whose why will with within without would yet you your
yours yourself yourselves according based mentioned states stated says said shows shown
noted notes note described describes per cent also whereas hence moreover furthermore
additionally overall generally typically usually approximately around about roughly nearly
one ones another any anything something everything nothing`)

// extract returns the terms of text (sentinels removed). first says whether text opens a
// sentence, so its first word is not taken for a name.
func extract(text string, first bool) terms {
	var t terms
	seen := map[string]bool{}
	add := func(list *[]string, key, v string) {
		if !seen[key+v] {
			seen[key+v] = true
			*list = append(*list, v)
		}
	}
	for _, n := range numbers(text) {
		add(&t.nums, "n", normalizeNumber(n))
	}
	opening := first
	for _, w := range words(text) {
		low := strings.ToLower(w)
		if strings.ContainsFunc(w, unicode.IsDigit) {
			opening = false
			continue
		}
		if !stopwords[low] && len([]rune(low)) >= 2 {
			add(&t.stems, "s", stem(low))
			rs := []rune(w)
			acronym := len(rs) >= 2 && strings.ToUpper(w) == w
			if acronym || (!opening && unicode.IsUpper(rs[0])) {
				add(&t.names, "e", plain(low))
			}
		}
		opening = false
	}
	return t
}

// passageBag indexes a passage's text.
func passageBag(text string) bag {
	b := bag{stems: map[string]bool{}, nums: map[string]bool{}, words: map[string]bool{}}
	for _, n := range numbers(text) {
		b.nums[normalizeNumber(n)] = true
	}
	for _, w := range words(text) {
		low := strings.ToLower(w)
		if d, ok := numberWords[low]; ok {
			b.nums[d] = true
		}
		b.words[plain(low)] = true
		b.stems[stem(low)] = true
	}
	return b
}

// words splits text into letter/digit runs; an apostrophe inside a word is kept.
func words(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’'
	})
}

// plain strips a possessive and a plural s: "Tower's" and "Towers" are "tower".
func plain(w string) string {
	w = strings.Trim(w, "'’")
	w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		w = w[:len(w)-1]
	}
	return w
}

// stem truncates a plain word to six letters. Truncation stemming is crude but
// deterministic and language-agnostic, and conflates "completed" with "completion".
func stem(w string) string {
	w = plain(w)
	n := 0
	for i := range w {
		if n == 6 {
			return w[:i]
		}
		n++
	}
	return w
}

// normalizeNumber drops thousands separators and leading zeros: "1,083" is "1083".
func normalizeNumber(n string) string {
	if strings.Contains(n, ",") {
		parts := strings.Split(n, ",")
		thousands := len(parts[0]) <= 3
		for _, p := range parts[1:] {
			head, _, _ := strings.Cut(p, ".")
			thousands = thousands && len(head) == 3
		}
		if thousands {
			n = strings.ReplaceAll(n, ",", "")
		} else {
			n = parts[0]
		}
	}
	if !strings.Contains(n, ".") {
		n = strings.TrimLeft(n, "0")
		if n == "" {
			n = "0"
		}
	}
	return n
}

// Thresholds of the coverage test: the cited passages cover at most a third of the
// segment's content words while another passage covers at least two thirds, and at least
// two more of them.
const (
	minTermsForOverlap = 3
	lowCoverage        = 1.0 / 3
	highCoverage       = 2.0 / 3
)

// unsupported runs the support tests on one cited segment and returns a reason naming the
// better passage, or "". cited are passage indexes; bags are all passages' terms.
func unsupported(seg terms, cited []int, bags []bag, ids []string) string {
	in := func(pred func(bag) bool, idx []int) bool {
		for _, i := range idx {
			if pred(bags[i]) {
				return true
			}
		}
		return false
	}
	isCited := map[int]bool{}
	for _, i := range cited {
		isCited[i] = true
	}
	other := func(pred func(bag) bool) int {
		for i := range bags {
			if !isCited[i] && pred(bags[i]) {
				return i
			}
		}
		return -1
	}
	// 1-2. Specific facts: the segment's numbers and names, less those every passage has
	// (the topic: "Eiffel Tower" in every passage tells no passage apart). The cited
	// passages hold none of them while another passage holds one. "None" rather than "one
	// missing" keeps a sentence that adds an incidental name ("in Paris") to a supported
	// fact from being flagged.
	type fact struct {
		what, v string
		has     func(bag) bool
	}
	var facts []fact
	for _, n := range seg.nums {
		facts = append(facts, fact{"number", n, func(b bag) bool { return b.nums[n] }})
	}
	for _, e := range seg.names {
		facts = append(facts, fact{"name", e, func(b bag) bool { return b.words[e] || b.stems[stem(e)] }})
	}
	all := make([]int, len(bags))
	for i := range all {
		all[i] = i
	}
	specific := facts[:0]
	for _, f := range facts {
		everywhere := true
		for i := range bags {
			everywhere = everywhere && f.has(bags[i])
		}
		if !everywhere {
			specific = append(specific, f)
		}
	}
	held := false
	for _, f := range specific {
		held = held || in(f.has, cited)
	}
	if !held {
		for _, f := range specific {
			if j := other(f.has); j >= 0 {
				return fmt.Sprintf("%s %s is not in the cited passage but is in passage %s", f.what, f.v, ids[j])
			}
		}
	}
	if len(seg.stems) < minTermsForOverlap {
		return ""
	}
	// 3. The cited passages cover few of the content words; another covers most.
	cover := func(idx []int) int {
		n := 0
		for _, s := range seg.stems {
			if in(func(b bag) bool { return b.stems[s] }, idx) {
				n++
			}
		}
		return n
	}
	got := cover(cited)
	if float64(got) <= lowCoverage*float64(len(seg.stems)) {
		for j := range bags {
			if isCited[j] {
				continue
			}
			if best := cover([]int{j}); float64(best) >= highCoverage*float64(len(seg.stems)) && best-got >= 2 {
				return fmt.Sprintf("the cited passage has %d of the sentence's %d content words, passage %s has %d",
					got, len(seg.stems), ids[j], best)
			}
		}
	}
	return ""
}

// disjoint reports whether passage b shares no content word or number with seg: a citation
// to it supports nothing in the sentence, whatever the other passages say.
func disjoint(seg terms, b bag) bool {
	if len(seg.stems)+len(seg.nums) < minTermsForOverlap {
		return false
	}
	for _, s := range seg.stems {
		if b.stems[s] {
			return false
		}
	}
	for _, n := range seg.nums {
		if b.nums[n] {
			return false
		}
	}
	return true
}

// contentWords returns the words of text that are not stopwords or numbers.
func contentWords(text string) []string {
	var out []string
	for _, w := range words(text) {
		low := strings.ToLower(w)
		if stopwords[low] || len([]rune(low)) < 2 || strings.ContainsFunc(low, unicode.IsDigit) {
			continue
		}
		out = append(out, low)
	}
	return out
}
