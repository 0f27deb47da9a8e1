package heuristic

import (
	"unicode/utf8"
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
