package heuristic

import (
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// The tone scorer's tokenizer and sentence split written as separate passes: the
// references that Tone.scan, which does both in one pass, is held to.

// sentimentTokens is the sentiment package's tokenizer: lower-case; newlines and the
// characters . , / # ! ? $ % ^ & * ; : { } = _ ` " ~ ( ) become spaces; runs of two or more
// white-space characters become one space; trim; split on single spaces.
func sentimentTokens(s string) []string {
	b := sentimentText(s, nil)
	return strings.Split(unsafe.String(unsafe.SliceData(b), len(b)), " ")
}

// sentimentText appends to b the text sentimentTokens splits: lower-cased, the punctuation
// mapped to spaces and runs of white space collapsed as they stream by, trimmed. A lone
// white-space character other than a space is kept, as the package's /\s{2,}/ leaves it.
func sentimentText(s string, b []byte) []byte {
	var pending rune // the white space seen since the last other character
	spaces := 0
	for i := 0; i < len(s); {
		var r rune
		if c := sentimentASCII[s[i]&0x7F]; s[i] < utf8.RuneSelf {
			i++
			if c&0x80 == 0 { // the common case: a character kept, lower-cased
				if spaces > 0 && len(b) > 0 {
					b = appendSpaceRun(b, pending, spaces)
				}
				spaces = 0
				b = append(b, c)
				continue
			}
			r = rune(c &^ 0x80) // white space, or punctuation that became a space
		} else {
			var size int
			r, size = utf8.DecodeRuneInString(s[i:])
			i += size
			r = unicode.ToLower(r)
			if !isJSSpace(r) {
				if spaces > 0 && len(b) > 0 {
					b = appendSpaceRun(b, pending, spaces)
				}
				spaces = 0
				b = utf8.AppendRune(b, r)
				continue
			}
		}
		if spaces == 0 {
			pending = r
		}
		spaces++
	}
	// Trailing white space is trimmed; so is leading (never appended above), so a lone
	// white-space character kept inside never ends up at either end.
	return b
}

// appendSpaceRun appends a run of n white-space characters starting with first, collapsed
// the way sentimentTokens collapses it.
func appendSpaceRun(b []byte, first rune, n int) []byte {
	switch {
	case n == 1:
		return utf8.AppendRune(b, first)
	case n > 1:
		return append(b, ' ')
	}
	return b
}

// nextSentence cuts the next match of /[^.!?]+[.!?]+/ from *rest; more is false when none
// is left.
func nextSentence(rest *string) (sentence string, more bool) {
	s := *rest
	term := func(c byte) bool { return c == '.' || c == '!' || c == '?' }
	i := 0
	for i < len(s) && term(s[i]) {
		i++
	}
	j := i
	for j < len(s) && !term(s[j]) {
		j++
	}
	if j == len(s) {
		*rest = ""
		return "", false
	}
	k := j
	for k < len(s) && term(s[k]) {
		k++
	}
	*rest = s[k:]
	return s[i:k], true
}

// splitSentences returns the matches of /[^.!?]+[.!?]+/g in s (text after the last
// terminator is dropped, as there), or s itself when there is none.
func splitSentences(s string) []string {
	var out []string
	for rest := s; ; {
		sentence, more := nextSentence(&rest)
		if !more {
			break
		}
		out = append(out, sentence)
	}
	if len(out) == 0 {
		return []string{s}
	}
	return out
}
