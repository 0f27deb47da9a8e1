package prescreen

import (
	"encoding/binary"
	"runtime"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// foldLower lower-cases s and makes typographic apostrophes plain in one pass. It returns s
// itself when nothing changes. ASCII, most of any text, is read and lowered eight bytes at a
// time; only from the first non-ASCII byte on is the rest decoded rune by rune.
func foldLower(s string) string {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := load64(s, i)
		if w&highBits != 0 || upperBits(w) != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		c := s[i]
		if c-'A' < 26 || c >= utf8.RuneSelf {
			break
		}
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, len(s), len(s)+8)
	copy(b, s)
	for ; i+8 <= len(b); i += 8 {
		w := load64(unsafe.String(unsafe.SliceData(b), len(b)), i)
		if w&highBits != 0 {
			break
		}
		if up := upperBits(w); up != 0 {
			store64(b, i, w|up>>2)
		}
	}
	for ; i < len(b); i++ {
		c := b[i]
		if c >= utf8.RuneSelf {
			break
		}
		if c-'A' < 26 {
			b[i] = c + 'a' - 'A'
		}
	}
	if i < len(s) {
		b = foldLowerRunes(b[:i], s[i:])
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// highBits has the top bit of each byte of a word set: a word of ASCII has none of them.
const highBits = 0x8080808080808080

// upperBits returns the top bit of each byte of w, a word of ASCII, that is an upper-case
// letter: adding 0x3f sets it for bytes >= 'A', adding 0x25 for bytes > 'Z', and no byte
// below 0x80 carries into the next.
func upperBits(w uint64) uint64 {
	return (w + 0x3f3f3f3f3f3f3f3f) &^ (w + 0x2525252525252525) & highBits
}

// load64 reads s[i:i+8] as a little-endian word. Where unaligned loads are cheap it is one
// load: Go's wasm backend does not merge binary.LittleEndian's eight byte loads.
func load64(s string, i int) uint64 {
	_ = s[i+7]
	p := unsafe.Add(unsafe.Pointer(unsafe.StringData(s)), i)
	if unalignedLoads {
		return *(*uint64)(p)
	}
	return binary.LittleEndian.Uint64(unsafe.Slice((*byte)(p), 8))
}

// store64 writes w to b[i:i+8], little-endian.
func store64(b []byte, i int, w uint64) {
	_ = b[i+7]
	p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i)
	if unalignedLoads {
		*(*uint64)(p) = w
		return
	}
	binary.LittleEndian.PutUint64(unsafe.Slice((*byte)(p), 8), w)
}

// unalignedLoads holds on the little-endian architectures where an unaligned 8-byte load is
// one instruction.
const unalignedLoads = runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" || runtime.GOARCH == "wasm" || runtime.GOARCH == "386"

// foldLowerRunes appends the fold of s, which may hold any UTF-8, to b.
func foldLowerRunes(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c-'A' < 26 {
				c += 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\u2019' || r == '\u2018':
			b = append(b, '\'')
		case r == utf8.RuneError && size == 1:
			b = append(b, s[i])
		default:
			if l := unicode.ToLower(r); l != r {
				b = utf8.AppendRune(b, l)
			} else {
				b = append(b, s[i:i+size]...)
			}
		}
		i += size
	}
	return b
}

// lastIndexByte is strings.LastIndexByte eight bytes at a time: as wasm, strings.LastIndexByte
// is a plain loop over every byte.
func lastIndexByte(s string, c byte) int {
	rep := uint64(c) * 0x0101010101010101
	i := len(s)
	for ; i >= 8; i -= 8 {
		if v := load64(s, i-8) ^ rep; (v-0x0101010101010101)&^v&highBits != 0 {
			break
		}
	}
	for i--; i >= 0; i-- {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// lastIndexAnchored is strings.LastIndex(s, sub), found by jumping back from one
// occurrence of the byte sub[k] to the next with lastIndexByte: as wasm, strings.LastIndex
// hashes every byte of s. Pick k so that sub[k] is rare in text.
func lastIndexAnchored(s, sub string, k int) int {
	for j := len(s); ; {
		i := lastIndexByte(s[:j], sub[k])
		if i < 0 {
			return -1
		}
		if start := i - k; start >= 0 && strings.HasPrefix(s[start:], sub) {
			return start
		}
		j = i
	}
}

// lastSentenceEnd is strings.LastIndexAny(s, ".!?\n"), eight bytes at a time.
func lastSentenceEnd(s string) int {
	const ones = 0x0101010101010101
	hasZero := func(v uint64) bool { return (v-ones)&^v&highBits != 0 }
	i := len(s)
	for ; i >= 8; i -= 8 {
		w := load64(s, i-8)
		if hasZero(w^('.'*ones)) || hasZero(w^('!'*ones)) || hasZero(w^('?'*ones)) || hasZero(w^('\n'*ones)) {
			break
		}
	}
	for i--; i >= 0; i-- {
		switch s[i] {
		case '.', '!', '?', '\n':
			return i
		}
	}
	return -1
}
