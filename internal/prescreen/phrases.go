package prescreen

import (
	"strings"
)

// phraseSet finds which of a fixed list of phrases a text contains in one pass over the
// text: each byte is looked up in a table of the phrases that start with it, and only those
// are compared. A list of n phrases then costs one scan instead of n strings.Contains, which
// matters as WebAssembly, where strings.Index is a plain byte loop.
type phraseSet struct {
	list    []string
	byFirst [256][]uint16 // indices into list, ascending, of the phrases starting with a byte
	// only is the first byte every phrase starts with, or -1: then strings.IndexByte jumps
	// from one candidate position to the next.
	only int
	// pairs has a bit for the hash of every phrase's first two bytes (pairHash), so most
	// positions are passed over without looking at a phrase; unset when a phrase has one byte.
	pairs    [16]uint64
	usePairs bool
}

// pairHash hashes two bytes into the 1,024 bits of phraseSet.pairs; letters differ in their
// low five bits, which the shift keeps.
func pairHash(a, b byte) uint { return (uint(a)<<5 ^ uint(b)) & 1023 }

func newPhraseSet(list ...string) *phraseSet {
	p := &phraseSet{list: list, only: -1, usePairs: true}
	for k, x := range list {
		if x == "" {
			panic("heuristic: empty phrase")
		}
		if len(x) == 1 {
			p.usePairs = false
		} else {
			h := pairHash(x[0], x[1])
			p.pairs[h>>6] |= 1 << (h & 63)
		}
		p.byFirst[x[0]] = append(p.byFirst[x[0]], uint16(k))
		if k == 0 {
			p.only = int(x[0])
		} else if p.only != int(x[0]) {
			p.only = -2
		}
	}
	if p.only < 0 {
		p.only = -1
	}
	return p
}

// next returns the first position at or after i where a phrase may start, or len(s).
func (p *phraseSet) next(s string, i int) int {
	if p.only >= 0 {
		j := strings.IndexByte(s[i:], byte(p.only))
		if j < 0 {
			return len(s)
		}
		return i + j
	}
	if p.usePairs {
		// A phrase has two bytes or more, so it cannot start at the last byte.
		for ; i+1 < len(s); i++ {
			if h := pairHash(s[i], s[i+1]); p.pairs[h>>6]&(1<<(h&63)) != 0 {
				return i
			}
		}
		return len(s)
	}
	for i < len(s) && p.byFirst[s[i]] == nil {
		i++
	}
	return i
}

// at reports whether phrase k of the set starts at s[i].
func (p *phraseSet) at(s string, i int, k uint16) bool {
	x := p.list[k]
	n := len(x)
	return len(s)-i >= n && (n == 1 || s[i+1] == x[1] && s[i+n-1] == x[n-1]) && s[i:i+n] == x
}

// find returns the first phrase of the list (in list order, as containsAnyOf does) that s
// contains.
func (p *phraseSet) find(s string) (string, bool) {
	best := len(p.list)
	if p.only < 0 && p.usePairs {
		// next's pair filter in this loop rather than a call per candidate position: a
		// WebAssembly guest pays for every call.
		for i := 0; i+1 < len(s) && best > 0; i++ {
			if h := pairHash(s[i], s[i+1]); p.pairs[h>>6]&(1<<(h&63)) == 0 {
				continue
			}
			best = p.firstAt(s, i, best)
		}
	} else {
		for i := p.next(s, 0); i < len(s) && best > 0; i = p.next(s, i+1) {
			best = p.firstAt(s, i, best)
		}
	}
	if best == len(p.list) {
		return "", false
	}
	return p.list[best], true
}

// firstAt returns the index of the first phrase before best in list order that starts at
// s[i], else best.
func (p *phraseSet) firstAt(s string, i, best int) int {
	for _, k := range p.byFirst[s[i]] {
		if int(k) >= best {
			break
		}
		if p.at(s, i, k) {
			return int(k)
		}
	}
	return best
}

// prefix returns the first phrase of the list (in list order, as prefixAnyOf does) that s
// starts with; only the phrases starting with s's first byte are compared.
func (p *phraseSet) prefix(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	for _, k := range p.byFirst[s[0]] {
		if p.at(s, 0, k) {
			return p.list[k], true
		}
	}
	return "", false
}

// has reports whether s contains any phrase of the set.
func (p *phraseSet) has(s string) bool {
	for i := p.next(s, 0); i < len(s); i = p.next(s, i+1) {
		for _, k := range p.byFirst[s[i]] {
			if p.at(s, i, k) {
				return true
			}
		}
	}
	return false
}

// mask returns a bit for each of the first 64 phrases s contains.
func (p *phraseSet) mask(s string) uint64 {
	var m uint64
	for i := p.next(s, 0); i < len(s); i = p.next(s, i+1) {
		for _, k := range p.byFirst[s[i]] {
			if k < 64 && p.at(s, i, k) {
				m |= 1 << k
			}
		}
	}
	return m
}

// wordSet is a set of words in an open-addressing hash table. A Go switch over hundreds of
// strings is a binary search of string comparisons, each a runtime call, and a map lookup
// is several calls too; as wasm every call pays wazero's termination check.
type wordSet struct {
	slots []string
	mask  uint64
}

func newWordSet(words ...string) *wordSet {
	size := 16
	for size < 4*len(words) {
		size *= 2
	}
	ws := &wordSet{slots: make([]string, size), mask: uint64(size - 1)}
	for _, w := range words {
		if w == "" {
			panic("heuristic: empty word")
		}
		i := fnv64(w) & ws.mask
		for ws.slots[i] != "" && ws.slots[i] != w {
			i = (i + 1) & ws.mask
		}
		ws.slots[i] = w
	}
	return ws
}

// has reports whether w is in the set.
func (ws *wordSet) has(w string) bool {
	if w == "" {
		return false
	}
	for i := fnv64(w) & ws.mask; ; i = (i + 1) & ws.mask {
		switch ws.slots[i] {
		case w:
			return true
		case "":
			return false
		}
	}
}

// fnv64 is the 64-bit FNV-1a hash of s.
func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
