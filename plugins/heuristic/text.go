package heuristic

import (
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// foldAccent maps a Latin letter with a diacritic to its base letter, as Unicode NFD
// decomposition followed by dropping combining marks (U+0300-U+036F) does. The standard
// library has no normalizer, and this package must stay stdlib-only to build for wasip1, so
// the table covers Latin-1 Supplement and Latin Extended-A; other letters pass unchanged.
func foldAccent(r rune) rune {
	if r < 0xC0 || r > 0x17F {
		return r
	}
	if r <= 0xFF {
		if b := latin1Fold[r-0xC0]; b != '_' {
			return rune(b)
		}
		return r
	}
	if b := latinExtAFold[r-0x100]; b != '_' {
		return rune(b)
	}
	return r
}

// latin1Fold covers U+00C0..U+00FF; '_' means "no decomposition" (Æ, Ð, ×, Ø, Þ, ß, æ, ð, ÷, ø, þ).
const latin1Fold = "AAAAAA_CEEEEIIII_NOOOOO__UUUUY__aaaaaa_ceeeeiiii_nooooo__uuuuy_y"

// latinExtAFold covers U+0100..U+017F.
const latinExtAFold = "AaAaAaCcCcCcCcDd__EeEeEeEeEeGgGgGgGgHh__IiIiIiIiI___JjKk_LlLlLl____NnNnNn___OoOoOo__RrRrRrSsSsSsSsTtTt__UuUuUuUuUuUuWwYyYZzZzZz_"

// collapseSpace replaces every run of white space with one space and trims the ends, like
// JavaScript's s.replace(/\s+/g, " ").trim(). ASCII is copied byte by byte; an invalid
// UTF-8 byte becomes U+FFFD, as ranging over the string yields it.
func collapseSpace(s string) string {
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

// runeCount is utf8.RuneCountInString; named for readability at call sites.
func runeCount(s string) int { return utf8.RuneCountInString(s) }

// toRunes returns s as runes, reusing buf.
func toRunes(s string, buf []rune) []rune {
	buf = buf[:0]
	for _, r := range s {
		buf = append(buf, r)
	}
	return buf
}
