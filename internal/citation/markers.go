package citation

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// sentinel stands for one citation marker in cleaned text. It is a private-use rune, so it
// never occurs in real output (scan drops it if it does) and it is neither a letter, a digit
// nor a space: the sentence splitter and the term extractor pass over it.
const sentinel = '\uE000'

// ref is one cited id as written: "1", "doc-3", or a footnote label.
type ref struct {
	raw  string
	foot bool // a footnote reference ([^label]); resolved through its definition
}

// marker is one citation marker: [1, 3] is one marker with two refs.
type marker struct {
	refs []ref
}

// idPrefixes are the words that may precede an id inside a marker ("Source 2", "doc-3").
// Longest first, so "sources" is tried before "source".
var idPrefixes = []string{
	"references", "reference", "documents", "document", "citations", "citation", "passages",
	"passage", "sources", "source", "context", "chunks", "chunk", "cite", "refs", "docs",
	"ref", "doc", "src", "ctx", "see",
}

var (
	supTag       = regexp.MustCompile(`(?i)<sup>\s*\[?\s*([0-9][0-9,\s\-–]*)\]?\s*</sup>`)
	numericRange = regexp.MustCompile(`^(?i:(?:sources?|refs?|passages?|docs?|documents?)\s*)?(\d{1,3})\s*[-–—]\s*(\d{1,3})$`)
	idToken      = regexp.MustCompile(`^[\p{L}\p{N}][\p{L}\p{N}_.:#/-]*$`)
	decimal      = regexp.MustCompile(`^\d+\.\d+$`)
	allDigits    = regexp.MustCompile(`^\d+$`)
)

// maxRange caps how many ids one range marker ([2-4]) expands to; wider "ranges" are
// intervals or years, not citations.
const maxRange = 50

// scanner turns one unit of text into cleaned text (markers replaced by sentinels, inline
// code and link targets removed) plus the markers, in order.
type scanner struct {
	known map[string]bool // lower-cased passage ids and their normalized forms
}

// scan cleans text and returns the markers it found, in the order of their sentinels.
func (sc *scanner) scan(text string) (string, []marker) {
	text = strings.ReplaceAll(text, string(sentinel), " ")
	text = supTag.ReplaceAllString(text, "[$1]")
	var b strings.Builder
	var ms []marker
	// cite records a marker of refs and writes its sentinel in its place.
	cite := func(refs []ref) {
		ms = append(ms, marker{refs: refs})
		b.WriteRune(sentinel)
	}
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '`':
			if j := indexRune(rs, i+1, '`', 400); j > 0 {
				b.WriteString("code")
				i = j
				continue
			}
		case r == '[':
			content, j := bracketed(rs, i, ']')
			if j < 0 {
				break
			}
			end := j
			link := -1
			if j+1 < len(rs) && rs[j+1] == '(' {
				link = indexRune(rs, j+2, ')', 400)
			}
			if strings.HasPrefix(content, "^") && len(content) > 1 && !strings.ContainsAny(content, " \t") {
				cite([]ref{{raw: content[1:], foot: true}})
				i = end
				continue
			}
			if refs, ok := sc.parseList(content); ok {
				cite(refs)
				if link > 0 {
					end = link
				}
				i = end
				continue
			}
			if link > 0 { // a markdown link: keep its text, drop its target
				b.WriteString(content)
				i = link
				continue
			}
		case r == '【':
			content, j := bracketed(rs, i, '】')
			if j < 0 {
				break
			}
			if k := strings.IndexRune(content, '†'); k >= 0 {
				content = content[:k]
			}
			if refs, ok := sc.parseList(content); ok {
				cite(refs)
				i = j
				continue
			}
		case isSuperDigit(r):
			if !superscriptCites(b.String()) {
				break
			}
			j := i
			var ids []string
			var cur strings.Builder
			for j < len(rs) && (isSuperDigit(rs[j]) || rs[j] == ',' || rs[j] == '˒') {
				if isSuperDigit(rs[j]) {
					cur.WriteRune(superDigit(rs[j]))
				} else if cur.Len() > 0 {
					ids = append(ids, cur.String())
					cur.Reset()
				}
				j++
			}
			if cur.Len() > 0 {
				ids = append(ids, cur.String())
			}
			// A superscript is a footnote: its "¹ ..." line, if any, says what it cites.
			refs := make([]ref, 0, len(ids))
			for _, id := range ids {
				refs = append(refs, ref{raw: id, foot: true})
			}
			cite(refs)
			i = j - 1
			// A comma consumed after the last digit belongs to the sentence.
			if j > 0 && (rs[j-1] == ',' || rs[j-1] == '˒') {
				b.WriteRune(',')
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String(), ms
}

// bracketed returns what stands between the bracket at rs[i] and its closing bracket
// close, and close's index; the index is -1 when close is not within 120 runes.
func bracketed(rs []rune, i int, close rune) (string, int) {
	j := indexRune(rs, i+1, close, 120)
	if j < 0 {
		return "", -1
	}
	return string(rs[i+1 : j]), j
}

// parseList parses the inside of a bracket ("1, 3", "2-4", "doc-3", "Source 2") into refs.
// It returns ok=false when any item does not look like a citation id, so "[sic]", "[x]",
// "[0, 1]" (an interval) and "[see chapter 3]" are left as text.
func (sc *scanner) parseList(content string) ([]ref, bool) {
	content = strings.TrimSpace(content)
	if content == "" {
		return nil, false
	}
	items := strings.FieldsFunc(content, func(r rune) bool { return r == ',' || r == ';' || r == '|' })
	var refs []ref
	for _, it := range items {
		it = strings.TrimSpace(it)
		if it == "" {
			return nil, false
		}
		if m := numericRange.FindStringSubmatch(it); m != nil && !sc.known[strings.ToLower(it)] {
			lo, _ := strconv.Atoi(m[1])
			hi, _ := strconv.Atoi(m[2])
			if lo < 1 || hi <= lo || hi-lo >= maxRange {
				return nil, false
			}
			for n := lo; n <= hi; n++ {
				refs = append(refs, ref{raw: strconv.Itoa(n)})
			}
			continue
		}
		if !sc.idLike(it) {
			return nil, false
		}
		refs = append(refs, ref{raw: it})
	}
	return refs, len(refs) > 0
}

// idLike reports whether one bracket item reads as a citation id: a known passage id, or a
// token with a digit ("3", "doc-3", "chunk_ab12"), or a prefixed token ("doc-a"), or
// "<prefix> <token>" ("Source 2"). Zero, decimals and numbers over four digits are not ids.
func (sc *scanner) idLike(it string) bool {
	if utf8.RuneCountInString(it) > 40 || strings.Contains(it, "://") {
		return false
	}
	low := strings.ToLower(it)
	if sc.known[low] || sc.known[normalizeID(low)] {
		return true
	}
	fields := strings.Fields(low)
	switch len(fields) {
	case 1:
	case 2:
		if !isPrefix(fields[0]) {
			return false
		}
		low = fields[1]
	default:
		return false
	}
	if !idToken.MatchString(low) || decimal.MatchString(low) {
		return false
	}
	if allDigits.MatchString(low) {
		n, err := strconv.Atoi(low)
		return err == nil && n >= 1 && len(low) <= 4
	}
	if strings.ContainsFunc(low, unicode.IsDigit) {
		return true
	}
	return normalizeID(low) != low // "doc-a", "chunk_xyz"
}

func isPrefix(w string) bool {
	for _, p := range idPrefixes {
		if w == p {
			return true
		}
	}
	return false
}

// normalizeID lower-cases an id and strips a leading prefix word and its separator, so
// "Source 2", "doc-2" and "2" compare equal. An id that is only a prefix stays as it is.
func normalizeID(id string) string {
	id = strings.ToLower(strings.TrimSpace(id))
	for _, p := range idPrefixes {
		if !strings.HasPrefix(id, p) {
			continue
		}
		rest := id[len(p):]
		trimmed := strings.TrimLeft(rest, " \t_:#.-")
		if trimmed == "" {
			return id
		}
		if trimmed == rest && !unicode.IsDigit(rune(rest[0])) {
			continue // "docker" is not "doc" + "ker"
		}
		return trimmed
	}
	return id
}

// superscriptCites decides whether superscript digits after the text so far are a
// footnote citation: they must follow a word of at least three letters or closing
// punctuation. After a digit, a single letter or a two-letter unit they are exponents
// (10², x³, km²).
func superscriptCites(before string) bool {
	r, size := utf8.DecodeLastRuneInString(before)
	if size == 0 {
		return false
	}
	if strings.ContainsRune(".,;:)\"'”’]»", r) || r == sentinel {
		return true
	}
	if !unicode.IsLetter(r) {
		return false
	}
	n := 0
	for s := before; s != ""; {
		r, size := utf8.DecodeLastRuneInString(s)
		if !unicode.IsLetter(r) {
			break
		}
		n++
		s = s[:len(s)-size]
	}
	return n >= 3
}

// superLabel turns superscript digits into the plain digits of a footnote label.
func superLabel(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(superDigit(r))
	}
	return b.String()
}

func isSuperDigit(r rune) bool {
	return r == '¹' || r == '²' || r == '³' || (r >= '⁰' && r <= '⁹' && r != '\u2071' && r != '\u2072' && r != '\u2073')
}

func superDigit(r rune) rune {
	switch r {
	case '¹':
		return '1'
	case '²':
		return '2'
	case '³':
		return '3'
	}
	return '0' + (r - '⁰')
}

// indexRune returns the index of want in rs[from:], looking at most limit runes ahead and
// never across a newline or an opening bracket of the same kind, or -1.
func indexRune(rs []rune, from int, want rune, limit int) int {
	for j := from; j < len(rs) && j-from <= limit; j++ {
		switch rs[j] {
		case want:
			return j
		case '\n':
			return -1
		case '[', '【':
			if want != '`' {
				return -1
			}
		}
	}
	return -1
}
