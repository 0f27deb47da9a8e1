package heuristic

import (
	"math/rand/v2"
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

func TestHasPunct(t *testing.T) {
	for _, w := range append(scanTexts, "it\u2018s", "\u201Cquoted\u201D", "\u2019", "\xe2\x80", "\xe2\x80\x97", "plain", "a:b", "end.") {
		if got, want := hasPunct(w), strings.ContainsAny(w, ".,;!?():\"'\u201C\u201D\u2018\u2019"); got != want {
			t.Errorf("hasPunct(%q) = %v, want %v", w, got, want)
		}
	}
}

// sentimentTokensRef is the tokenizer written step by step, as the sentiment package does it.
func sentimentTokensRef(s string) []string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch r {
		case '\n', '.', ',', '/', '#', '!', '?', '$', '%', '^', '&', '*', ';', ':', '{', '}', '=', '_', '`', '"', '~', '(', ')':
			r = ' '
		}
		b.WriteRune(r)
	}
	rs := []rune(b.String())
	var c strings.Builder
	for i := 0; i < len(rs); i++ {
		if isJSSpace(rs[i]) && i+1 < len(rs) && isJSSpace(rs[i+1]) {
			for i+1 < len(rs) && isJSSpace(rs[i+1]) {
				i++
			}
			c.WriteByte(' ')
			continue
		}
		c.WriteRune(rs[i])
	}
	return strings.Split(strings.TrimFunc(c.String(), isJSSpace), " ")
}

func TestSentimentTokensOnePass(t *testing.T) {
	for _, s := range append(scanTexts, "  ", "\t", "a\tb", "a \t b", "Good.  Bad!\n\nUgly?", "x\u00a0y\u00a0\u00a0z", "\ufeffStart", "end \ufeff",
		"don't STOP", "a\xffb c", "(wow) ~great~") {
		got, want := sentimentTokens(s), sentimentTokensRef(s)
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("sentimentTokens(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestGreedyMatchesLongTexts(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	vocab := []string{"a", "b", "c", "d", "e", "f", "the", "cat"}
	for i := range 50 {
		wa, wb := make([]string, 20+r.IntN(60)), make([]string, 20+r.IntN(60))
		for j := range wa {
			wa[j] = vocab[r.IntN(len(vocab))]
		}
		for j := range wb {
			wb[j] = vocab[r.IntN(len(vocab))]
		}
		want := 0
		used := make([]bool, len(wb))
		for _, x := range wa {
			for j, y := range wb {
				if !used[j] && x == y {
					used[j] = true
					want++
					break
				}
			}
		}
		if got := greedyMatches(wa, wb); got != want {
			t.Fatalf("case %d: greedyMatches = %d, want %d", i, got, want)
		}
	}
}
