package heuristic

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/scorekit/scorekit/internal/textkit"
)

// dpEdit is the textbook edit-distance table, the reference for editDistance.
func dpEdit(a, b []rune) int {
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		diag := row[0]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			up := row[j]
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			row[j] = min(row[j]+1, row[j-1]+1, diag+cost)
			diag = up
		}
	}
	return row[len(b)]
}

// randomRunes draws n characters from an alphabet of k (ASCII letters, then CJK), so small
// alphabets give long common subsequences and large ones exercise the sparse masks.
func randomRunes(r *rand.Rand, n, k int) []rune {
	out := make([]rune, n)
	for i := range out {
		c := r.IntN(k)
		if c < 26 {
			out[i] = rune('a' + c)
		} else {
			out[i] = rune(0x4E00 + c)
		}
	}
	return out
}

// edit applies about n random edits to s.
func edit(r *rand.Rand, s []rune, n, k int) []rune {
	out := append([]rune(nil), s...)
	for range n {
		if len(out) == 0 {
			out = append(out, 'a')
			continue
		}
		i := r.IntN(len(out))
		switch r.IntN(3) {
		case 0:
			out[i] = randomRunes(r, 1, k)[0]
		case 1:
			out = append(out[:i], out[i+1:]...)
		default:
			out = append(out[:i], append(randomRunes(r, 1, k), out[i:]...)...)
		}
	}
	return out
}

// TestAlignMatchesTheTable holds editDistance and lcsLength to the textbook tables: exact
// whenever they say so (always within the budget), and otherwise never better than the
// truth (the distance an upper bound, the LCS a lower bound). Small budgets force the
// banded path on texts the test can still check against the full table.
func TestAlignMatchesTheTable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	approx, banded := 0, 0
	var tab table // reused, as list_contains reuses it
	for n := range 600 {
		la := r.IntN(700)
		k := []int{2, 4, 26, 300, 5000}[r.IntN(5)]
		a := randomRunes(r, la, k)
		var b []rune
		switch r.IntN(3) {
		case 0:
			b = randomRunes(r, r.IntN(700), k)
		case 1:
			b = edit(r, a, r.IntN(40), k)
		default:
			b = edit(r, a, r.IntN(400), k)
		}
		budget := []int{alignBudget, 1 << 10, 200, 40}[r.IntN(4)]
		// Half the cases keep every mask table sparse.
		dense := []int{denseWords, 0}[n%2]
		wantD, wantL := dpEdit(a, b), lcsTable(a, b)
		d, exactD, err := tab.align(ctx, a, b, budget, dense, false)
		if err != nil {
			t.Fatal(err)
		}
		l, exactL, err := tab.align(ctx, a, b, budget, dense, true)
		if err != nil {
			t.Fatal(err)
		}
		if budget == alignBudget && (!exactD || !exactL) {
			t.Fatalf("case %d: %d x %d characters not exact within the full budget", n, len(a), len(b))
		}
		switch {
		case exactD && d != wantD:
			t.Fatalf("case %d (%d x %d, alphabet %d, budget %d): distance %d, want %d", n, len(a), len(b), k, budget, d, wantD)
		case !exactD && d < wantD:
			t.Fatalf("case %d: approximate distance %d below the true %d", n, d, wantD)
		case exactL && l != wantL:
			t.Fatalf("case %d (%d x %d, alphabet %d, budget %d): LCS %d, want %d", n, len(a), len(b), k, budget, l, wantL)
		case !exactL && l > wantL:
			t.Fatalf("case %d: approximate LCS %d above the true %d", n, l, wantL)
		}
		if !exactD || !exactL {
			approx++
		} else if budget < len(a)*len(b)/64 {
			banded++
		}
	}
	if approx == 0 || banded == 0 {
		t.Fatalf("%d cases approximate, %d exact within a band; the test must cover both", approx, banded)
	}
}

// TestAlignStopsOnCancel: a canceled context stops a long alignment.
func TestAlignStopsOnCancel(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a, b := randomRunes(r, 200_000, 26), randomRunes(r, 200_000, 26)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := editDistance(ctx, a, b, alignBudget); err != context.Canceled {
		t.Fatalf("editDistance on a canceled context: err %v, want context.Canceled", err)
	}
	if _, _, err := lcsLength(ctx, a, b, alignBudget); err != context.Canceled {
		t.Fatalf("lcsLength on a canceled context: err %v, want context.Canceled", err)
	}
}

// overlapsNaive is the reference's pairwise test: some term of out contains e or is
// contained in it with more than 60% of the longer one's length.
func overlapsNaive(e string, out []string) bool {
	for _, s := range out {
		longer, shorter := s, e
		if len(e) > len(s) {
			longer, shorter = e, s
		}
		if float64(len(shorter))/float64(len(longer)) > 0.6 && strings.Contains(longer, shorter) {
			return true
		}
	}
	return false
}

// TestCoverageMatchesPairwise holds coverage to the reference's every-pair comparison on
// vocabularies built to overlap (terms cut from one another at every length).
func TestCoverageMatchesPairwise(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ctx := context.Background()
	for n := range 300 {
		word := func() string { return string(randomRunes(r, 1+r.IntN(14), 1+r.IntN(6))) }
		var in, out []string
		seen := map[string]bool{}
		add := func(list *[]string, w string) {
			if w != "" && !seen[w+string(rune('0'+len(*list)%2))] {
				*list = append(*list, w)
			}
		}
		for range r.IntN(60) {
			w := word()
			add(&in, w)
			if len(w) > 2 && r.IntN(2) == 0 { // a piece of it, or it inside a longer word
				i := r.IntN(len(w) / 2)
				add(&out, w[i:i+1+r.IntN(len(w)-i)])
			} else {
				add(&out, word()+w+word())
			}
		}
		in, out = slices.Compact(slices.Sorted(slices.Values(in))), slices.Compact(slices.Sorted(slices.Values(out)))
		outSet := map[string]struct{}{}
		for _, o := range out {
			outSet[o] = struct{}{}
		}
		score, missing, exact, err := coverage(ctx, in, out, outSet)
		if err != nil || !exact {
			t.Fatalf("case %d: exact %v, err %v", n, exact, err)
		}
		var want []string
		for _, e := range in {
			if _, exact := outSet[e]; !exact && (len(e) <= 3 || !overlapsNaive(e, out)) {
				want = append(want, e)
			}
		}
		if !slices.Equal(missing, want) {
			t.Fatalf("case %d: in %q out %q: missing %q, want %q", n, in, out, missing, want)
		}
		if len(in) > 0 {
			if w := float64(len(in)-len(want)) / float64(len(in)); score != w {
				t.Fatalf("case %d: score %v, want %v", n, score, w)
			}
		}
	}
}

// TestGreedyPairingIsALowerBound: beyond listPairs the pairing is greedy among neighbours;
// on lists small enough for the exact pairing it never scores above it, and identical
// lists in any order still score every item.
func TestGreedyPairingIsALowerBound(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	ctx := context.Background()
	for n := range 100 {
		item := func() string { return string(randomRunes(r, 1+r.IntN(12), 4+r.IntN(20))) }
		got := make([]string, 1+r.IntN(40))
		for i := range got {
			got[i] = item()
		}
		want := slices.Clone(got)
		r.Shuffle(len(want), func(i, j int) { want[i], want[j] = want[j], want[i] })
		if g, err := assignGreedy(ctx, got, want); err != nil || g != float64(len(got)) {
			t.Fatalf("case %d: identical lists pair to %v (err %v), want %d", n, g, err, len(got))
		}
		for i := range want {
			if r.IntN(2) == 0 {
				want[i] = item()
			}
		}
		want = want[:1+r.IntN(len(want))]
		exact, err := assignExact(ctx, itemRunes(got), itemRunes(want))
		if err != nil {
			t.Fatal(err)
		}
		greedy, err := assignGreedy(ctx, got, want)
		if err != nil {
			t.Fatal(err)
		}
		if greedy > exact+1e-9 {
			t.Fatalf("case %d: greedy pairing %v above the exact %v", n, greedy, exact)
		}
	}
}

// TestNumbersStepMatchesEncodingJSON: the hand-written step encoder writes the bytes
// encoding/json writes for the same map, across the float formats, and falls back to it
// for values JSON cannot hold.
func TestNumbersStepMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	special := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 1e20, 1e21, 123456789e15, 1.0 / 3, 2.0 / 3, 42, math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1)}
	keys := []string{"a_key", "b", "changes", "ratio"}
	for n := range 5000 {
		vals := make([]float64, len(keys))
		m := map[string]float64{}
		for i := range vals {
			switch r.IntN(3) {
			case 0:
				vals[i] = special[r.IntN(len(special))]
			case 1:
				vals[i] = r.Float64()
			default:
				vals[i] = math.Float64frombits(r.Uint64())
			}
			m[keys[i]] = vals[i]
		}
		got, want := numbersStep("s", keys, vals), step("s", m)
		if got.Name != want.Name || string(got.Output) != string(want.Output) || got.Prompt != want.Prompt {
			t.Fatalf("case %d %v: got %+v, want %+v", n, vals, got, want)
		}
	}
}

// refKeywords is keyword coverage as it was written first: every word through the stop
// list into a set, the output's words into a set of their own.
func refKeywords(k *keywordCoverageScorer, s string) (out []string, set map[string]struct{}) {
	set = map[string]struct{}{}
	eachJSWord(stripTags(s), func(w string) bool {
		url := strings.IndexByte(w, ':') >= 0 && (strings.Contains(w, "http://") || strings.Contains(w, "https://"))
		if !url && hasPunct(w) {
			w = string(stripPunctTo(nil, w))
		}
		if len(w) == 1 && strings.ContainsRune("_@&#", rune(w[0])) || w == "" || allDigits(w) {
			return true
		}
		low := strings.ToLower(w)
		if _, stop := k.stop[low]; stop {
			return true
		}
		if !url {
			w = low
		}
		if _, dup := set[w]; !dup {
			set[w] = struct{}{}
			out = append(out, w)
		}
		return true
	})
	return out, set
}

// TestKeywordsMatchTheSetVersion holds the keyword scan without sets to the version with
// them, on texts of tricky words: upper case, URLs, punctuation, curly quotes, digits,
// stop words, non-ASCII upper case, invalid UTF-8, and more than 16 keywords.
func TestKeywordsMatchTheSetVersion(t *testing.T) {
	k := NewKeywordCoverage().(*keywordCoverageScorer)
	r := rand.New(rand.NewPCG(13, 14))
	words := []string{"The", "the", "QUICK", "quick,", "Fox.", "fox", "(fox)", "'fox'", "“Fox”", "don't", "2024", "42x",
		"https://Example.com/A", "https://example.com/a", "http://x.org:80", "a:b", "_", "@", "x_y", "Élan", "élan", "İstanbul",
		"\xff\xfeab", "ab\xff", "résumé!", "<b>bold</b>", "<", ">", "also", "ABOUT", "naïve", "NAÏVE"}
	for i := range 40 {
		words = append(words, fmt.Sprintf("word%d", i), fmt.Sprintf("Word%d.", i))
	}
	text := func() string {
		n := r.IntN(60)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = words[r.IntN(len(words))]
		}
		return strings.Join(parts, []string{" ", "  ", "\n", "\u00a0", "\ufeff"}[r.IntN(5)])
	}
	var buf []byte
	for n := range 3000 {
		in, out := text(), text()
		wantRef, _ := refKeywords(k, in)
		_, outSet := refKeywords(k, out)
		ref := k.keywords(in, &buf)
		if !slices.Equal(ref, wantRef) {
			t.Fatalf("case %d: keywords(%q) = %q, want %q", n, in, ref, wantRef)
		}
		found := k.find(out, ref, &buf)
		for i, w := range ref {
			if _, want := outSet[w]; found[i] != want {
				t.Fatalf("case %d: keyword %q found %v in %q, want %v", n, w, found[i], out, want)
			}
		}
	}
}

// TestToneMatchesTheSplitVersion holds the tokenizer that streams tokens to the one that
// split them into a slice (oldSentimentTokens, as first written), by comparative score.
func TestToneMatchesTheSplitVersion(t *testing.T) {
	tone := NewTone().(*toneScorer)
	r := rand.New(rand.NewPCG(15, 16))
	pieces := []string{"good", "Good", "GREAT", "not", "don't", "bad", "terrible", "love", "hate", "x", " ", "  ", "\t", "\n",
		"\u00a0", "\ufeff", "\u0085", ".", "!", "?", ",", "(", ")", "#", "_", "É", "ÉLAN", "\xff", "İ", "wonderful", "\v", "\r\n",
		"isn't", "Cant", "non", "breathtaking", strings.Repeat("w", 31), strings.Repeat("w", 32), strings.Repeat("é", 17)}
	for n := range 20000 {
		var b strings.Builder
		for range r.IntN(20) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		toks := oldSentimentTokens(s)
		sum := 0.0
		for i, tok := range toks {
			v, ok := tone.lexicon[tok]
			if !ok {
				continue
			}
			if i > 0 && negator(toks[i-1]) {
				v = -v
			}
			sum += v
		}
		want := sum / float64(len(toks))
		if got := tone.comparative(s); got != want {
			t.Fatalf("case %d: comparative(%q) = %v, want %v (tokens %q)", n, s, got, want, toks)
		}
		if got := sentimentTokens(s); !slices.Equal(got, toks) {
			t.Fatalf("case %d: sentimentTokens(%q) = %q, want %q", n, s, got, toks)
		}
	}
}

// oldSentimentTokens is sentimentTokens as first written, the reference for the streaming one.
func oldSentimentTokens(s string) []string {
	// One pass: lower-case, map the punctuation to spaces and collapse runs of white space
	// as they stream by. A lone white-space character other than a space is kept, as the
	// package's /\s{2,}/ leaves it.
	b := make([]byte, 0, len(s))
	var pending rune // the white space seen since the last other character
	spaces := 0
	for _, r := range s {
		if r < utf8.RuneSelf {
			if uint32(r-'A') < 26 {
				r += 'a' - 'A'
			}
		} else {
			r = unicode.ToLower(r)
		}
		switch r {
		case '\n', '.', ',', '/', '#', '!', '?', '$', '%', '^', '&', '*', ';', ':', '{', '}', '=', '_', '`', '"', '~', '(', ')':
			r = ' '
		}
		if isJSSpace(r) {
			if spaces == 0 {
				pending = r
			}
			spaces++
			continue
		}
		b = appendSpaceRun(b, pending, spaces)
		spaces = 0
		b = utf8.AppendRune(b, r)
	}
	b = appendSpaceRun(b, pending, spaces)
	return strings.Split(strings.TrimFunc(unsafe.String(unsafe.SliceData(b), len(b)), isJSSpace), " ")
}

// TestTextualDifferenceFastPaths holds the ASCII one-word LCS and the word count without
// collapsing to the general forms (lcsRatio over runes, oldCountChanges as first written),
// on texts mixing white space, non-ASCII and invalid UTF-8.
func TestTextualDifferenceFastPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	ascii := []string{"a", "b", "ab", "the", "cat", " ", "  ", "\t", "\n", "xyz", "cat ", " dog"}
	pieces := append([]string{"\u00a0", "é", "\xff", "\xfe"}, ascii...)
	fast := 0
	for n := range 20000 {
		from := pieces
		if n%2 == 0 {
			from = ascii // half the cases take the ASCII path
		}
		text := func() string {
			var b strings.Builder
			for range r.IntN(30) {
				b.WriteString(from[r.IntN(len(from))])
			}
			return b.String()
		}
		a, b := text(), text()
		if r.IntN(4) == 0 {
			b = a + pieces[r.IntN(len(pieces))]
		}
		if got, want := countChanges(a, b), oldCountChanges(a, b); got != want {
			t.Fatalf("case %d: countChanges(%q, %q) = %d, want %d", n, a, b, got, want)
		}
		if ratio, exact, ok := lcsRatioASCII(a, b); ok {
			fast++
			want, wexact, err := lcsRatio(context.Background(), []rune(a), []rune(b))
			if err != nil || ratio != want || exact != wexact {
				t.Fatalf("case %d: lcsRatioASCII(%q, %q) = %v, want %v", n, a, b, ratio, want)
			}
		}
	}
	if fast < 5000 {
		t.Fatalf("only %d cases took the ASCII path", fast)
	}
	// Texts past listedBytes, read as a stream rather than split into lists.
	for n := range 200 {
		text := func() string {
			var b strings.Builder
			for b.Len() <= listedBytes {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			return b.String()
		}
		a, b := text(), text()
		if n%4 == 0 {
			b = a + pieces[r.IntN(len(pieces))]
		}
		if got, want := countChanges(a, b), oldCountChanges(a, b); got != want {
			t.Fatalf("long case %d: countChanges = %d, want %d", n, got, want)
		}
	}
}

// TestEachJSWord holds eachJSWord to strings.FieldsFunc with JavaScript's white space, on
// texts mixing ASCII and Unicode white space, non-ASCII letters and invalid UTF-8.
func TestEachJSWord(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	pieces := []string{"a", "bc", " ", "  ", "\t", "\n", "\r\n", "\v\f", "\u00a0", "\u2028", "\ufeff", "\u3000", "é", "\xff", "\xe2\x80", "x\u00a0y"}
	for n := range 20000 {
		var b strings.Builder
		for range r.IntN(20) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		var got []string
		eachJSWord(s, func(w string) bool { got = append(got, w); return true })
		if want := strings.FieldsFunc(s, isJSSpace); !slices.Equal(got, want) {
			t.Fatalf("case %d: eachJSWord(%q) = %q, want %q", n, s, got, want)
		}
	}
}

// oldCountChanges is countChanges as first written, the reference for its fast path.
func oldCountChanges(a, b string) int {
	na, nb := textkit.CollapseSpace(a), textkit.CollapseSpace(b)
	if na == nb {
		if a != b {
			return max(abs(len(strings.Fields(a))-len(strings.Fields(b))), 1)
		}
		return 0
	}
	wa, wb := strings.Fields(na), strings.Fields(nb)
	switch {
	case len(wa) == 0:
		return len(wb)
	case len(wb) == 0:
		return len(wa)
	}
	return max(len(wa), len(wb)) - greedyMatches(wa, wb)
}

// TestTextMatchesFmt: the reason builder writes what fmt writes for the verbs it stands for.
func TestTextMatchesFmt(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	vals := []float64{0, math.Copysign(0, -1), 0.005, 0.015, 0.125, 0.995, 1, 2.5, 99.5, 100, -0.004, 1e21, math.Inf(1), math.NaN()}
	for range 10000 {
		vals = append(vals, r.Float64(), 100*r.Float64(), math.Float64frombits(r.Uint64()))
	}
	for _, v := range vals {
		if got, want := string(text(nil).f2(v)), fmt.Sprintf("%.2f", v); got != want {
			t.Fatalf("f2(%v) = %q, want %q", v, got, want)
		}
		if got, want := string(text(nil).f0(v)), fmt.Sprintf("%.0f", v); got != want {
			t.Fatalf("f0(%v) = %q, want %q", v, got, want)
		}
	}
	for _, n := range []int{0, 7, -3, 1 << 40} {
		if got, want := string(text(nil).d(n)), fmt.Sprintf("%d", n); got != want {
			t.Fatalf("d(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestToneWordsHoldTheLexicon holds the tokenizer's table to the lexicon map and the
// negator list: every word found with its valence and flag, near misses not found.
func TestToneWordsHoldTheLexicon(t *testing.T) {
	tone := NewTone().(*toneScorer)
	find := func(w string) (float64, bool, bool) {
		v, neg, ok := tone.words.find([]byte(w)[:min(len(w), toneMaxWord)], len(w))
		// The same token read in place from the text (lower-cased as it is read), in any
		// case, when it is plain ASCII.
		if w != "" && strings.IndexFunc(w, func(r rune) bool { return r >= utf8.RuneSelf || sentimentKept[r]&0x80 != 0 }) < 0 {
			lower := strings.ToLower(w)
			wv, wneg, wok := tone.words.find([]byte(lower)[:min(len(w), toneMaxWord)], len(w))
			for _, in := range []string{w, strings.ToUpper(w), strings.ToUpper(w[:1]) + w[1:]} {
				var tok [toneMaxWord]byte
				text := "(" + in + ")"
				if v2, neg2, ok2 := tone.words.lookup(text, 1, &tok, len(in)); v2 != wv || neg2 != wneg || ok2 != wok {
					t.Errorf("lookup(%q) = %v, %v, %v; find(%q) = %v, %v, %v", in, v2, neg2, ok2, lower, wv, wneg, wok)
				}
			}
		}
		return v, neg, ok
	}
	words := slices.Concat(slices.Collect(maps.Keys(tone.lexicon)), toneNegators)
	for _, w := range words {
		v, neg, ok := find(w)
		wantV, wantOK := tone.lexicon[w]
		if v != wantV || ok != wantOK || neg != negator(w) {
			t.Errorf("find(%q) = %v, %v, %v; want %v, %v, %v", w, v, neg, ok, wantV, negator(w), wantOK)
		}
		for _, miss := range []string{w + "s", "x" + w, w[:len(w)-1], strings.ToUpper(w), w + strings.Repeat("x", 40)} {
			if _, in := tone.lexicon[miss]; in || negator(miss) {
				continue
			}
			if v, neg, ok := find(miss); ok || neg || v != 0 {
				t.Errorf("find(%q) = %v, %v, %v; want nothing", miss, v, neg, ok)
			}
		}
	}
	if v, neg, ok := find(""); ok || neg || v != 0 {
		t.Errorf("find(\"\") = %v, %v, %v; want nothing", v, neg, ok)
	}
}

// TestToneScanSplitsAsTheRegexp holds the one-pass sentence split of scan to the scores of
// the sentences splitSentences cuts (the matches of /[^.!?]+[.!?]+/g), one by one.
func TestToneScanSplitsAsTheRegexp(t *testing.T) {
	tone := NewTone().(*toneScorer)
	r := rand.New(rand.NewPCG(17, 18))
	pieces := []string{"good", "not", "bad", "love", " ", "  ", "\t", "\n", "\u00a0", ".", "..", "!", "?", "?!", ",", "É", "x"}
	for n := range 20000 {
		var b strings.Builder
		for range r.IntN(24) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		var want []float64
		for _, sentence := range splitSentences(s) {
			want = append(want, tone.comparative(sentence))
		}
		got, err := tone.scan(context.Background(), s, true, nil)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("case %d: scan(%q) = %v, %v; want %v (sentences %q)", n, s, got, err, want, splitSentences(s))
		}
	}
}

// TestKeywordFastPath holds keyword's one-pass path for ASCII words to keywordSlow, the
// general path, on words of letters, digits, punctuation, URLs and non-ASCII bytes.
func TestKeywordFastPath(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	pieces := []string{"a", "Z", "ab", "Cd", "7", "09", ".", ",", ":", "'", "\"", "(", "_", "@", "#", "&", "-", "/", "http://", "https://", "HTTP://", "é", "\u2019", "\xff"}
	for n := range 50000 {
		var b strings.Builder
		for range r.IntN(6) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		w := b.String()
		var fb, sb []byte
		key, ok := keyword(w, &fb)
		key = strings.Clone(key)
		want, wok := keywordSlow(w, &sb)
		if key != want || ok != wok {
			t.Fatalf("case %d: keyword(%q) = %q, %v; want %q, %v", n, w, key, ok, want, wok)
		}
	}
}

// TestLexicon holds the one-lookup lexicon to the word lists it is built from: every entry
// says what each list says of the word, and a word in none has no entry.
func TestLexicon(t *testing.T) {
	words := map[string]bool{"": true, "walked": true, "xyzzy": true}
	for _, m := range []map[string]string{auxiliary, irregular, thirdPerson} {
		for w := range m {
			words[w] = true
		}
	}
	for _, m := range []map[string]bool{pronoun, gerundBefore, modal, whWord} {
		for w := range m {
			words[w] = true
		}
	}
	for w := range words {
		e, ok := lexicon[w]
		want := lexEntry{aux: auxiliary[w], irregular: irregular[w], third: thirdPerson[w], modal: modal[w],
			pronoun: pronoun[w], wh: whWord[w], gerundBefore: gerundBefore[w]}
		if e != want || ok != (want != lexEntry{}) {
			t.Fatalf("lexicon[%q] = %+v (%v), want %+v", w, e, ok, want)
		}
	}
}
