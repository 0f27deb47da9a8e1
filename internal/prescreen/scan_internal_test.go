package prescreen

import (
	"strings"
	"testing"
)

// scanTexts exercise the word-at-a-time paths: lengths around 8, upper case and non-ASCII
// at every offset, invalid UTF-8 and typographic apostrophes.
var scanTexts = []string{
	"", "a", "A", "abcdefg", "abcdefgh", "ABCDEFGH", "abcdefghI", "Iabcdefgh", "@[`{AZaz", "hello World, it\u2019s Über",
	"What is the capital of France?", "ÀÉÎ straße \xff\xfe INVALID", "ab?cdefghijklmnopq?rs", "abcdefghijklmnopq", "?abcdefghijklmnop",
	"\xff?\xff\xffabcdefgh", "twelve bytes????????", strings.Repeat("Mixed Case Text ", 9) + "ENDÉ",
}

func TestFoldLowerWordAtATime(t *testing.T) {
	ref := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); {
			if strings.HasPrefix(s[i:], "\u2019") || strings.HasPrefix(s[i:], "\u2018") {
				b.WriteByte('\'')
				i += len("\u2019")
				continue
			}
			j := i + 1
			for j < len(s) && s[j]&0xC0 == 0x80 && j-i < 4 {
				j++
			}
			if l := strings.ToLower(s[i:j]); strings.ToValidUTF8(s[i:j], "") == s[i:j] {
				b.WriteString(l)
				i = j
				continue
			}
			b.WriteByte(s[i]) // an invalid byte passes through
			i++
		}
		return b.String()
	}
	for _, s := range scanTexts {
		for cut := 0; cut <= len(s) && cut < 12; cut++ {
			in := s[cut:]
			if got, want := foldLower(in), ref(in); got != want {
				t.Errorf("foldLower(%q) = %q, want %q", in, got, want)
			}
		}
	}
}

func TestLastIndexByte(t *testing.T) {
	for _, s := range scanTexts {
		for _, c := range []byte{'?', 'a', 0xff, 'q', 'A'} {
			if got, want := lastIndexByte(s, c), strings.LastIndexByte(s, c); got != want {
				t.Errorf("lastIndexByte(%q, %q) = %d, want %d", s, c, got, want)
			}
		}
	}
}

func TestPhraseSet(t *testing.T) {
	list := []string{"can't help", "i", "cannot", "not", "help", "\u2019s", "?"}
	set := newPhraseSet(list...)
	nl := newPhraseSet("\nfrom:", "\nto:")
	pairs := newPhraseSet("can't help", "cannot", "not", "help", "\u2019s", "t h", "lp")
	for _, s := range append(scanTexts, "i cannot help", "we can't help it", "can't help", "cannot", "help me", "?", "x\nto: y\nfrom: z", "cannot", "can") {
		want, wantOK := containsAnyOf(s, list)
		if got, ok := set.find(s); got != want || ok != wantOK {
			t.Errorf("find(%q) = %q %v, want %q %v", s, got, ok, want, wantOK)
		}
		if got := set.has(s); got != wantOK {
			t.Errorf("has(%q) = %v, want %v", s, got, wantOK)
		}
		var wantMask uint64
		for k, x := range list {
			if strings.Contains(s, x) {
				wantMask |= 1 << k
			}
		}
		if got := set.mask(s); got != wantMask {
			t.Errorf("mask(%q) = %b, want %b", s, got, wantMask)
		}
		wantPrefix, wantPrefixOK := "", false
		for _, x := range list {
			if strings.HasPrefix(s, x) {
				wantPrefix, wantPrefixOK = x, true
				break
			}
		}
		if got, ok := set.prefix(s); got != wantPrefix || ok != wantPrefixOK {
			t.Errorf("prefix(%q) = %q %v, want %q %v", s, got, ok, wantPrefix, wantPrefixOK)
		}
		_, wantNL := containsAnyOf(s, nl.list)
		if got := nl.has(s); got != wantNL {
			t.Errorf("newline set has(%q) = %v, want %v", s, got, wantNL)
		}
		// Phrases of two bytes or more with several first bytes: find's pair filter.
		want2, wantOK2 := containsAnyOf(s, pairs.list)
		if got, ok := pairs.find(s); got != want2 || ok != wantOK2 {
			t.Errorf("pair set find(%q) = %q %v, want %q %v", s, got, ok, want2, wantOK2)
		}
	}
	if !pairs.usePairs || pairs.only >= 0 {
		t.Fatal("the pair set does not take the pair filter's path")
	}
}

func TestCrudeStem(t *testing.T) {
	ref := func(w string) string {
		for _, suf := range []string{"ing", "ies", "ied", "es", "ed", "ly", "s"} {
			if (len(w) > len(suf)+3 || suf == "s" && len(w) > 3) && strings.HasSuffix(w, suf) {
				w = w[:len(w)-len(suf)]
				break
			}
		}
		if len(w) > 6 {
			w = w[:6]
		}
		return w
	}
	for _, w := range []string{"", "s", "is", "was", "firs", "dies", "flies", "allies", "parties", "tried", "carried", "used", "bed",
		"seed", "agents", "triaged", "running", "sing", "king", "fly", "only", "really", "sly", "boxes", "goes", "lies", "yes",
		"status", "ing", "being", "ies", "tied", "applied", "ed", "fled", "es", "kisses", "ly", "slowly", "early", "capital"} {
		if got, want := crudeStem(w), ref(w); got != want {
			t.Errorf("crudeStem(%q) = %q, want %q", w, got, want)
		}
	}
}

func TestWordSet(t *testing.T) {
	words := []string{"a", "about", "can't", "the", "you've", "yourselves", "i"}
	ws := newWordSet(words...)
	in := map[string]bool{}
	for _, w := range words {
		in[w] = true
	}
	for _, w := range append(words, "", "b", "abou", "aboutt", "The", "cant", "you've ", "yourself", "ii") {
		if got := ws.has(w); got != in[w] {
			t.Errorf("has(%q) = %v, want %v", w, got, in[w])
		}
	}
	for _, w := range []string{"the", "yourselves", "won't", "question"} {
		if !isStopword(w) {
			t.Errorf("isStopword(%q) = false", w)
		}
	}
	for _, w := range []string{"paris", "capital", "agent", "triage"} {
		if isStopword(w) {
			t.Errorf("isStopword(%q) = true", w)
		}
	}
}

func TestLastIndexHelpers(t *testing.T) {
	for _, s := range append(scanTexts, "Which is older: A or B?", "a or b or c", " or ", "or or or", "x: y: z", "end.\nnext! q?", "no marks at all here ok") {
		if got, want := lastSentenceEnd(s), strings.LastIndexAny(s, ".!?\n"); got != want {
			t.Errorf("lastSentenceEnd(%q) = %d, want %d", s, got, want)
		}
		for _, tc := range []struct {
			sub string
			k   int
		}{{": ", 0}, {" or ", 2}, {" or ", 0}, {"?", 0}} {
			if got, want := lastIndexAnchored(s, tc.sub, tc.k), strings.LastIndex(s, tc.sub); got != want {
				t.Errorf("lastIndexAnchored(%q, %q, %d) = %d, want %d", s, tc.sub, tc.k, got, want)
			}
		}
	}
}
