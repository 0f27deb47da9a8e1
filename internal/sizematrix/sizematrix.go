// Package sizematrix builds the runs of the size matrix: outputs from 100 bytes to 1 MiB,
// with inputs and expected answers as long, lists, JSON, text with thousands of distinct
// characters, long context lists and deep metadata. Tests and benchmarks drive every
// built-in scorer through them in every runtime to show that cost stays bounded.
//
// The texts are generated from a fixed seed, so every call returns the same runs.
package sizematrix

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/scorekit/scorekit/internal/textkit"
	"github.com/scorekit/scorekit/sdk"
)

// Sizes are the output sizes of the matrix, in bytes.
var Sizes = []int{100, 1 << 10, 10 << 10, 100 << 10, 1 << 20}

// Kinds names the kinds of run Runs builds, in order.
var Kinds = []string{"similar", "different", "question", "unicode", "list", "json", "deep", "context"}

// Case is one run of the matrix.
type Case struct {
	// Kind is one of Kinds; Size the output's size in bytes (approximately).
	Kind string
	Size int
	Run  sdk.Run
}

// Name is "kind/size", e.g. "similar/100KiB".
func (c Case) Name() string { return c.Kind + "/" + SizeName(c.Size) }

// SizeName writes a size as 100B, 1KiB, 1MiB.
func SizeName(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "KiB"
	}
	return strconv.Itoa(n) + "B"
}

// Runs returns one run of each kind with an output of about size bytes:
//
//   - similar: input, output and expected are edits of one text (3-6% of the words);
//   - different: three unrelated texts of made-up words (a vocabulary of millions, so
//     texts have as many distinct words as they can);
//   - question: a one-line question, a long answer, a short expected answer;
//   - unicode: accented Latin, thousands of distinct CJK characters and emoji;
//   - list: the output and the expected answer are bullet lists of short items;
//   - json: the output and the expected answer are JSON arrays of strings;
//   - deep: the output is JSON nested size/2 levels deep, the metadata 500 levels deep;
//   - context: a question, a long answer citing passages, and size/64 context passages.
func Runs(size int) []Case {
	g := newGen(uint64(size))
	base := g.prose(size)
	var out []Case
	add := func(kind string, r sdk.Run) {
		r.ID = kind + "/" + SizeName(size)
		out = append(out, Case{Kind: kind, Size: size, Run: r})
	}
	add("similar", sdk.Run{Input: base, Output: g.mutate(base, 0.03), Expected: g.mutate(base, 0.06)})
	add("different", sdk.Run{Input: g.wild(size), Output: g.wild(size), Expected: g.wild(size)})
	add("question", sdk.Run{
		Input:    "Could you please summarize what happened in the meeting, and what should we do next?",
		Output:   g.prose(size),
		Expected: "The meeting agreed on the plan; next we ship the release.",
	})
	uni := g.unicode(size)
	add("unicode", sdk.Run{Input: g.unicode(size), Output: uni, Expected: g.mutateRunes(uni, 0.05)})
	items := g.items(size)
	add("list", sdk.Run{
		Input:    "List every item we discussed, one a line.",
		Output:   bullets(items),
		Expected: bullets(g.mutateItems(items)),
	})
	add("json", sdk.Run{Input: "Return the items as a JSON array.", Output: jsonArray(items), Expected: jsonArray(g.mutateItems(items))})
	add("deep", sdk.Run{
		Input:    "Return the tree as nested JSON.",
		Output:   strings.Repeat("[", size/2) + strings.Repeat("]", size/2),
		Expected: strings.Repeat("[", size/2) + strings.Repeat("]", size/2),
		Metadata: map[string]any{"purpose": g.prose(min(size, 4<<10)), "tree": deep(500)},
	})
	add("context", g.context(size))
	return out
}

// words is the vocabulary: common words, sentiment words the tone lexicon rates, negators,
// stop words, numbers and a URL, so every scorer finds something to do.
var words = strings.Fields(`the a an of to in and or but is are was were be been have has had do does did
not don't can't won't never no very quite really also just only still even
meeting plan release customer invoice payment order account team project report agent email ticket
server database query result error warning request response service update change issue feature
quickly slowly carefully clearly happily sadly badly well
good great excellent happy glad wonderful love like thank thanks helpful perfect amazing nice
bad terrible awful sad angry hate poor wrong broken fail failed problem worse worst annoying
ship shipped shipping review reviewed write wrote written run ran running build built building
said told asked answered agreed decided discussed planned moved fixed tested deployed
monday tuesday friday today tomorrow yesterday week month year
one two three four five ten hundred 2024 42 3.14 1,000
https://example.com/docs <b>bold</b> "quoted" (aside) it's we're they've`)

type gen struct{ r *rand.Rand }

func newGen(seed uint64) *gen { return &gen{r: rand.New(rand.NewPCG(seed, 0x5ca1ab1e))} }

func (g *gen) word() string { return words[g.r.IntN(len(words))] }

// prose writes sentences of 4-18 words, paragraphs of 2-6 sentences, until size bytes.
func (g *gen) prose(size int) string {
	var b strings.Builder
	b.Grow(size + 64)
	sentences := 0
	for b.Len() < size {
		n := 4 + g.r.IntN(15)
		for i := 0; i < n; i++ {
			w := g.word()
			if i == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			} else {
				b.WriteByte(' ')
			}
			b.WriteString(w)
			if i < n-1 && g.r.IntN(9) == 0 {
				b.WriteByte(',')
			}
		}
		b.WriteByte(".!?."[g.r.IntN(4)])
		sentences++
		if g.r.IntN(4) == 0 {
			b.WriteString("\n\n")
		} else {
			b.WriteByte(' ')
		}
	}
	return textkit.Prefix(b.String(), size)
}

// syllables make up the words of wild.
var syllables = strings.Fields(`ka lo mi ne ra to su pe vi do ha ri mo ta ze li fu be no sa
ki ro me da ju pa te wo ga ne ly qui stra ble tion ment ous ing er ed ex pro con ver`)

// wild writes sentences of made-up words of 1-5 syllables, until size bytes.
func (g *gen) wild(size int) string {
	var b strings.Builder
	b.Grow(size + 64)
	for b.Len() < size {
		for range 1 + g.r.IntN(5) {
			b.WriteString(syllables[g.r.IntN(len(syllables))])
		}
		if g.r.IntN(12) == 0 {
			b.WriteString(". ")
		} else {
			b.WriteByte(' ')
		}
	}
	return textkit.Prefix(b.String(), size)
}

// mutate replaces, drops or inserts a share p of the words of s.
func (g *gen) mutate(s string, p float64) string {
	f := strings.SplitAfter(s, " ")
	var b strings.Builder
	b.Grow(len(s) + 64)
	for _, w := range f {
		switch x := g.r.Float64(); {
		case x < p/3:
			b.WriteString(g.word() + " ")
		case x < 2*p/3:
			// dropped
		case x < p:
			b.WriteString(w)
			b.WriteString(g.word() + " ")
		default:
			b.WriteString(w)
		}
	}
	return b.String()
}

// unicode writes text mixing accented Latin words, CJK characters drawn from 3,000
// code points, emoji and punctuation.
func (g *gen) unicode(size int) string {
	latin := []string{"café", "naïve", "über", "señor", "façade", "coöperate", "résumé", "Ålesund", "Łódź"}
	var b strings.Builder
	b.Grow(size + 64)
	for b.Len() < size {
		switch x := g.r.IntN(10); {
		case x < 5:
			for range 1 + g.r.IntN(8) {
				b.WriteRune(rune(0x4E00 + g.r.IntN(3000)))
			}
			b.WriteRune('。')
		case x < 8:
			b.WriteString(latin[g.r.IntN(len(latin))])
			b.WriteByte(' ')
		case x < 9:
			b.WriteRune(rune(0x1F600 + g.r.IntN(64)))
			b.WriteByte(' ')
		default:
			b.WriteString(g.word())
			b.WriteString(". ")
		}
	}
	return textkit.Prefix(b.String(), size)
}

// mutateRunes replaces a share p of the characters of s.
func (g *gen) mutateRunes(s string, p float64) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if g.r.Float64() < p {
			r = rune(0x4E00 + g.r.IntN(3000))
		}
		b.WriteRune(r)
	}
	return b.String()
}

// items returns list items of 1-4 words, about size bytes in all once bulleted.
func (g *gen) items(size int) []string {
	var out []string
	n := 0
	for n < size {
		k := 1 + g.r.IntN(4)
		parts := make([]string, k)
		for i := range parts {
			parts[i] = strings.Trim(g.word(), `",()<>/:b`)
		}
		it := strings.TrimSpace(strings.Join(parts, " ")) + " " + strconv.Itoa(g.r.IntN(1000))
		out = append(out, it)
		n += len(it) + 3
	}
	return out
}

// mutateItems shuffles items and edits a few of them.
func (g *gen) mutateItems(items []string) []string {
	out := make([]string, len(items))
	copy(out, items)
	g.r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	for i := range out {
		if g.r.IntN(5) == 0 {
			out[i] = out[i] + " " + g.word()
		}
	}
	return out
}

// context is a question, an answer of size bytes citing passages, and size/64 passages.
func (g *gen) context(size int) sdk.Run {
	n := max(1, size/64)
	passages := make([]sdk.Passage, n)
	for i := range passages {
		passages[i] = sdk.Passage{ID: strconv.Itoa(i + 1), Text: g.prose(48)}
	}
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(g.prose(80))
		fmt.Fprintf(&b, " [%d] ", 1+g.r.IntN(n+3)) // a few cite passages that do not exist
	}
	return sdk.Run{
		Input:    "What do the documents say about the release?",
		Output:   textkit.Prefix(b.String(), size),
		Context:  passages,
		Metadata: map[string]any{"purpose": "answer from the documents, citing them"},
	}
}

func bullets(items []string) string {
	var b strings.Builder
	for _, it := range items {
		b.WriteString("- ")
		b.WriteString(it)
		b.WriteByte('\n')
	}
	return b.String()
}

func jsonArray(items []string) string {
	b, err := json.Marshal(items)
	if err != nil {
		panic(err) // strings always encode
	}
	return string(b)
}

// deep returns a value nested n maps deep.
func deep(n int) any {
	var v any = "leaf"
	for i := 0; i < n; i++ {
		v = map[string]any{"child": v, "level": float64(n - i)}
	}
	return v
}
