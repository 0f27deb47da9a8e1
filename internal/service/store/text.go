package store

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"unicode/utf8"
)

// One rule for text on both databases. PostgreSQL refuses a NUL in text and in JSONB
// (SQLSTATE 22021, 22P05), invalid UTF-8, and a lone UTF-16 surrogate escaped in JSON;
// SQLite stores all of them. So that a run or a result is stored the same on both, and a
// bad one never takes a batch down with it, the store replaces each of them with U+FFFD
// before either database sees it, and says it did so (Run.Repaired, the importer's
// answer, a result's flag).

// replacement is U+FFFD as JSON text takes it.
const replacement = "\uFFFD"

// jsonText is a query argument holding JSON: CleanJSON is applied to it instead of
// CleanText, and it reaches the database as a string.
type jsonText string

// CleanText returns s with every NUL and every invalid UTF-8 sequence replaced by U+FFFD
// (one per byte that does not start a valid sequence, as encoding/json does), and
// whether it changed anything.
func CleanText(s string) (string, bool) {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s, false
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == 0 || r == utf8.RuneError && n == 1 {
			b.WriteString(replacement)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String(), true
}

// CleanJSON returns the JSON text b with what CleanText replaces replaced, and within
// strings also the escapes \u0000 and lone surrogates (\uD800-\uDFFF not in a
// high-low pair) replaced by \ufffd; and whether it changed anything. It does not
// validate b: text outside strings is only cleaned like CleanText.
func CleanJSON(b []byte) ([]byte, bool) {
	if utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 && !hasBadEscape(b) {
		return b, false
	}
	out := make([]byte, 0, len(b)+8)
	inString := false
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == 0:
			out = append(out, replacement...)
			i++
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				out = append(out, replacement...)
			} else {
				out = append(out, b[i:i+n]...)
			}
			i += n
		case c == '"':
			inString = !inString
			out = append(out, c)
			i++
		case c == '\\' && inString && i+1 < len(b):
			if b[i+1] != 'u' {
				out = append(out, b[i], b[i+1])
				i += 2
				continue
			}
			u, ok := hex4(b, i+2)
			switch {
			case !ok:
				out = append(out, b[i], b[i+1])
				i += 2
			case u == 0:
				out = append(out, `\ufffd`...)
				i += 6
			case u >= 0xD800 && u < 0xDC00: // high: keep it with the low one that follows
				if lowAt(b, i+6) {
					out = append(out, b[i:i+12]...)
					i += 12
				} else {
					out = append(out, `\ufffd`...)
					i += 6
				}
			case u >= 0xDC00 && u < 0xE000: // a low one alone
				out = append(out, `\ufffd`...)
				i += 6
			default:
				out = append(out, b[i:i+6]...)
				i += 6
			}
		default:
			out = append(out, c)
			i++
		}
	}
	return out, !bytes.Equal(out, b)
}

// InvalidUTF8 reports whether a string anywhere in v (a field, an element, a map's key or
// value, behind pointers and interfaces) is not valid UTF-8. encoding/json writes such a
// string with U+FFFD in place of the bad bytes and says nothing, so a caller that
// marshals v and must say what it repaired (a result's text_repaired flag) asks this.
// Byte slices (json.RawMessage) are not looked at: encoding/json writes their bytes as
// they are, and CleanJSON finds what is wrong in them. v must hold no cycle (what
// encoding/json marshals holds none).
func InvalidUTF8(v any) bool { return invalidUTF8(reflect.ValueOf(v)) }

func invalidUTF8(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return !utf8.ValidString(v.String())
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && invalidUTF8(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if invalidUTF8(v.Field(i)) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return false
		}
		for i := range v.Len() {
			if invalidUTF8(v.Index(i)) {
				return true
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if invalidUTF8(it.Key()) || invalidUTF8(it.Value()) {
				return true
			}
		}
	}
	return false
}

// hasBadEscape reports whether b may hold \u0000 or a surrogate escape: a quick test that
// lets clean JSON through untouched; CleanJSON itself decides.
func hasBadEscape(b []byte) bool {
	for {
		i := bytes.Index(b, []byte(`\u`))
		if i < 0 || i+6 > len(b) {
			return false
		}
		u, ok := hex4(b, i+2)
		if ok && (u == 0 || u >= 0xD800 && u < 0xE000) {
			return true
		}
		b = b[i+2:]
	}
}

// lowAt reports whether b holds a low surrogate escape at i.
func lowAt(b []byte, i int) bool {
	if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return false
	}
	u, ok := hex4(b, i+2)
	return ok && u >= 0xDC00 && u < 0xE000
}

// hex4 reads four hex digits at i.
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var u [2]byte
	if _, err := hex.Decode(u[:], b[i:i+4]); err != nil {
		return 0, false
	}
	return rune(u[0])<<8 | rune(u[1]), true
}

// cleanArgs applies the rule to a query's arguments: strings with CleanText, jsonText
// with CleanJSON (and made a string for the driver). It copies args only when it must.
func cleanArgs(args []any) []any {
	out := args
	copied := false
	set := func(i int, v any) {
		if !copied {
			out = append([]any(nil), args...)
			copied = true
		}
		out[i] = v
	}
	for i, a := range args {
		switch v := a.(type) {
		case string:
			if s, changed := CleanText(v); changed {
				set(i, s)
			}
		case jsonText:
			if b, changed := CleanJSON([]byte(v)); changed {
				set(i, string(b))
			} else {
				set(i, string(v))
			}
		}
	}
	return out
}
