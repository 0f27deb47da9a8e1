package heuristic

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// lcsTable is the textbook O(n x m) dynamic programme the bit-parallel LCS must agree with.
func lcsTable(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				cur[j] = prev[j-1] + 1
			} else {
				cur[j] = max(prev[j], cur[j-1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func randomText(r *rand.Rand, n int, alphabet string) []rune {
	al := []rune(alphabet)
	out := make([]rune, n)
	for i := range out {
		out[i] = al[r.IntN(len(al))]
	}
	return out
}

func TestLCSMatchesTable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name     string
		n, m     int
		alphabet string
	}{
		{"short binary", 7, 9, "ab"},
		{"one word", 63, 64, "abcd"},
		{"word boundary", 64, 65, "abc "},
		{"multi word", 200, 130, "abcdefgh "},
		{"long", 1000, 700, "etaoin shrdlu"},
		{"unicode", 90, 80, "éàü日本 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 {
				a, b := randomText(r, r.IntN(tc.n+1), tc.alphabet), randomText(r, r.IntN(tc.m+1), tc.alphabet)
				got, exact, err := lcsLength(context.Background(), a, b, alignBudget)
				if want := lcsTable(a, b); got != want || !exact || err != nil {
					t.Fatalf("lcs(%q, %q) = %d, want %d", string(a), string(b), got, want)
				}
			}
		})
	}
}

// diceMap is string-similarity's compareTwoStrings as written there, with a map.
func diceMap(a, b string) float64 {
	a, b = strings.Join(strings.Fields(a), ""), strings.Join(strings.Fields(b), "")
	if a == b {
		return 1
	}
	ra, rb := []rune(a), []rune(b)
	if len(ra) < 2 || len(rb) < 2 {
		return 0
	}
	counts := map[string]int{}
	for i := 0; i < len(ra)-1; i++ {
		counts[string(ra[i:i+2])]++
	}
	shared := 0
	for i := 0; i < len(rb)-1; i++ {
		if k := string(rb[i : i+2]); counts[k] > 0 {
			counts[k]--
			shared++
		}
	}
	return 2 * float64(shared) / float64(len(ra)+len(rb)-2)
}

func TestDiceMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 200 {
		// Half the cases mix non-ASCII letters in, so both the table and the sorted merge count.
		alphabet := "abc d"
		if i%2 == 1 {
			alphabet = "abé d€\u00a0"
		}
		a, b := string(randomText(r, r.IntN(40), alphabet)), string(randomText(r, r.IntN(40), alphabet))
		if got, want := diceBigrams(a, b), diceMap(a, b); math.Abs(got-want) > 1e-12 {
			t.Fatalf("case %d: dice(%q, %q) = %v, want %v", i, a, b, got, want)
		}
	}
	if got := diceBigrams("thequickbrownfoxjumpsoverthelazydog", "thequickbrownfoxrunspastthelazydog"); math.Abs(got-0.7164179104477612) > 1e-12 {
		t.Fatalf("Mastra's partial case = %v, want 0.7164179104477612", got)
	}
}

// bestAssignment tries every pairing.
func bestAssignment(w [][]float64) float64 {
	rows, cols := len(w), len(w[0])
	best := 0.0
	used := make([]bool, cols)
	var rec func(i int, sum float64, paired int)
	rec = func(i int, sum float64, paired int) {
		if i == rows {
			if paired == min(rows, cols) {
				best = max(best, sum)
			}
			return
		}
		rec(i+1, sum, paired) // leave row i unpaired
		for j := range cols {
			if !used[j] {
				used[j] = true
				rec(i+1, sum+w[i][j], paired+1)
				used[j] = false
			}
		}
	}
	rec(0, 0, 0)
	return best
}

func TestMaxAssignmentIsOptimal(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, shape := range [][2]int{{1, 1}, {2, 2}, {3, 5}, {5, 3}, {6, 6}, {4, 7}} {
		for range 30 {
			w := make([][]float64, shape[0])
			for i := range w {
				w[i] = make([]float64, shape[1])
				for j := range w[i] {
					w[i][j] = r.Float64()
				}
			}
			asg, err := maxAssignment(context.Background(), w)
			if err != nil {
				t.Fatal(err)
			}
			sum, seen := 0.0, map[int]bool{}
			for i, j := range asg {
				if j < 0 {
					continue
				}
				if seen[j] {
					t.Fatalf("%v: column %d assigned twice", shape, j)
				}
				seen[j] = true
				sum += w[i][j]
			}
			if want := bestAssignment(w); math.Abs(sum-want) > 1e-9 {
				t.Fatalf("%v: assignment sums to %v, best is %v", shape, sum, want)
			}
		}
	}
}

func TestSplitSentences(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"One. Two! Three?", []string{"One.", " Two!", " Three?"}},
		{"Wait... what?! ok", []string{"Wait...", " what?!"}},
		{"no terminator", []string{"no terminator"}},
		{"", []string{""}},
		{"...", []string{"..."}},
	} {
		if got := splitSentences(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("splitSentences(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSentimentTokens(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"I don't like it!", []string{"i", "don't", "like", "it"}},
		{"Great,   really\ngreat.", []string{"great", "really", "great"}},
		{"", []string{""}},
		{"a\tb", []string{"a\tb"}}, // one tab is not a run of white space: it stays inside the token
	} {
		if got := sentimentTokens(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("sentimentTokens(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	tone := NewTone().(*toneScorer)
	if got := tone.comparative("this is not good"); got != -2.0/4 {
		t.Errorf("negated comparative = %v, want %v", got, -2.0/4)
	}
}

func TestKeywords(t *testing.T) {
	k := NewKeywordCoverage().(*keywordCoverageScorer)
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"The quick brown fox", []string{"quick", "brown", "fox"}},
		{"<b>Bold</b> claims (really) 2024", []string{"bold", "claims"}},
		{"'quoted' words, “curly” ones", []string{"quoted", "words", "curly"}},
		{"See https://Example.com/A, now", []string{"https://Example.com/A,"}},
		{"x_y & # @", []string{"x_y"}},
	} {
		var buf []byte
		if got := k.keywords(tc.in, &buf); !slices.Equal(got, tc.want) {
			t.Errorf("keywords(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTerms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"What is the capital of France?", []string{"what", "be", "the", "capital", "of", "france"}},
		{"Crème brûlée, São Paulo", []string{"creme", "brulee", "sao", "paulo"}},
		{"He studied and was studying hard", []string{"he", "study", "and", "hard"}},
		{"It jumps", []string{"it", "jump"}},
	} {
		if got := terms(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("terms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCountChanges(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"The quick brown fox", "The quick brown fox", 0},
		{"The quick brown fox", "The quick brown cat", 1},
		{"The   quick\nbrown    fox", "The quick brown fox", 1},
		{"", "two words", 2},
	} {
		if got := countChanges(tc.a, tc.b); got != tc.want {
			t.Errorf("countChanges(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
