package citation

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/scorekit/scorekit/sdk"
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

// postings index the passages by term: for each stem, number and word, the passages that
// hold it, ascending. The support tests then look at the passages a term is in instead of
// asking every passage for every term of every segment, which cost segments x passages.
type postings struct {
	n                  int // passages
	stems, nums, words map[string][]int32
	count              []int32 // scratch for cover counts, one per passage
	touched            []int32
}

// newPostings indexes the passages' terms as passageBag finds them, without a bag per
// passage.
func newPostings(passages []sdk.Passage) *postings {
	p := &postings{n: len(passages), stems: map[string][]int32{}, nums: map[string][]int32{}, words: map[string][]int32{}, count: make([]int32, len(passages))}
	post := func(m map[string][]int32, k string, i int32) {
		if l := m[k]; len(l) == 0 || l[len(l)-1] != i {
			m[k] = append(l, i)
		}
	}
	for i, pa := range passages {
		i := int32(i)
		for _, n := range numbers(pa.Text) {
			post(p.nums, normalizeNumber(n), i)
		}
		for _, w := range words(pa.Text) {
			low := strings.ToLower(w)
			if d, ok := numberWords[low]; ok {
				post(p.nums, d, i)
			}
			post(p.words, plain(low), i)
			post(p.stems, stem(low), i)
		}
	}
	return p
}

// unionLen is the number of passages in the union of two ascending lists.
func unionLen(a, b []int32) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case b[j] < a[i]:
			j++
		default:
			i, j = i+1, j+1
		}
		n++
	}
	return n + len(a) - i + len(b) - j
}

// holds reports whether one of the passages in idx is in the ascending list ps.
func holds(ps []int32, idx []int) bool {
	for _, i := range idx {
		if _, ok := slices.BinarySearch(ps, int32(i)); ok {
			return true
		}
	}
	return false
}

// unsupported runs the support tests on one cited segment and returns a reason naming the
// better passage, or "". cited are passage indexes; p indexes all passages' terms.
func unsupported(seg terms, cited []int, p *postings, ids []string) string {
	isCited := map[int]bool{}
	for _, i := range cited {
		isCited[i] = true
	}
	// first is the first passage not cited in ps, or -1.
	first := func(ps []int32) int {
		for _, i := range ps {
			if !isCited[int(i)] {
				return int(i)
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
		a, b    []int32 // the passages that hold it: in either list
	}
	var facts []fact
	for _, n := range seg.nums {
		facts = append(facts, fact{"number", n, p.nums[n], nil})
	}
	for _, e := range seg.names {
		facts = append(facts, fact{"name", e, p.words[e], p.stems[stem(e)]})
	}
	specific := facts[:0]
	for _, f := range facts {
		if unionLen(f.a, f.b) != p.n { // not in every passage
			specific = append(specific, f)
		}
	}
	held := false
	for _, f := range specific {
		held = held || holds(f.a, cited) || holds(f.b, cited)
	}
	if !held {
		for _, f := range specific {
			j, k := first(f.a), first(f.b)
			if j < 0 || (k >= 0 && k < j) {
				j = k
			}
			if j >= 0 {
				return fmt.Sprintf("%s %s is not in the cited passage but is in passage %s", f.what, f.v, ids[j])
			}
		}
	}
	if len(seg.stems) < minTermsForOverlap {
		return ""
	}
	// 3. The cited passages cover few of the content words; another covers most.
	got := 0
	for _, s := range seg.stems {
		if holds(p.stems[s], cited) {
			got++
		}
	}
	if float64(got) > lowCoverage*float64(len(seg.stems)) {
		return ""
	}
	// Count, for every passage that holds one of the stems, how many it holds; the first
	// passage not cited that holds enough is the better one.
	for _, s := range seg.stems {
		for _, i := range p.stems[s] {
			if p.count[i] == 0 {
				p.touched = append(p.touched, i)
			}
			p.count[i]++
		}
	}
	found, foundBest := -1, 0 // the lowest passage that qualifies, as a scan in order finds
	for _, j := range p.touched {
		best := int(p.count[j])
		if (found < 0 || int(j) < found) && !isCited[int(j)] && float64(best) >= highCoverage*float64(len(seg.stems)) && best-got >= 2 {
			found, foundBest = int(j), best
		}
		p.count[j] = 0
	}
	p.touched = p.touched[:0]
	if found >= 0 {
		return fmt.Sprintf("the cited passage has %d of the sentence's %d content words, passage %s has %d",
			got, len(seg.stems), ids[found], foundBest)
	}
	return ""
}

// disjoint reports whether passage i shares no content word or number with seg: a citation
// to it supports nothing in the sentence, whatever the other passages say.
func disjoint(seg terms, p *postings, i int) bool {
	if len(seg.stems)+len(seg.nums) < minTermsForOverlap {
		return false
	}
	at := []int{i}
	for _, s := range seg.stems {
		if holds(p.stems[s], at) {
			return false
		}
	}
	for _, n := range seg.nums {
		if holds(p.nums[n], at) {
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
