// Package textkit holds the text primitives several built-in scorers share (the
// pre-screen and textual_difference among them), so that none imports another scorer's
// package for one, and those the host and the service share (FormatBytes).
package textkit

import (
	"fmt"
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

// FormatBytes renders n for people: "512 bytes", "32 KiB", "3.5 KiB", "1 MiB", "1.5 MiB".
func FormatBytes(n int64) string {
	const ki, mi = 1 << 10, 1 << 20
	switch {
	case n >= mi && n%mi == 0:
		return fmt.Sprintf("%d MiB", n/mi)
	case n >= mi:
		return fmt.Sprintf("%.1f MiB", float64(n)/mi)
	case n >= ki && n%ki == 0:
		return fmt.Sprintf("%d KiB", n/ki)
	case n >= ki:
		return fmt.Sprintf("%.1f KiB", float64(n)/ki)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Prefix is s cut to at most n bytes at the start of a character, so that a cut never
// leaves half of one (which JSON would turn into U+FFFD and strconv.Quote into \x
// escapes).
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Clip is s within n bytes for a message: its [Prefix] and "..." when it is cut.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Prefix(s, n) + "..."
}

// OneLine is s for a table cell or a page: its white space collapsed ([CollapseSpace]) and
// at most n characters, the last an ellipsis when it is cut.
func OneLine(s string, n int) string {
	s = CollapseSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
