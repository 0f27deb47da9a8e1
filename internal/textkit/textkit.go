// Package textkit holds the text primitives several built-in scorers share (the
// pre-screen and textual_difference among them), so that none imports another scorer's
// package for one.
package textkit

import (
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// CollapseSpace replaces every run of white space with one space and trims the ends, like
// JavaScript's s.replace(/\s+/g, " ").trim(). ASCII is copied byte by byte; an invalid
// UTF-8 byte becomes U+FFFD, as ranging over the string yields it.
func CollapseSpace(s string) string {
	b := make([]byte, 0, len(s))
	space := false
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			if c == ' ' || c-'\t' <= '\r'-'\t' {
				space = true
				continue
			}
			if space && len(b) > 0 {
				b = append(b, ' ')
			}
			space = false
			b = append(b, c)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && len(b) > 0 {
			b = append(b, ' ')
		}
		space = false
		b = utf8.AppendRune(b, r)
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}
