package citation

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/sdk"
)

// TestPostingsMatchEveryPassage holds the support tests over the term index to the same
// tests asking every passage (oldUnsupported, as first written), on random passages and
// segments over a small vocabulary, so that facts, names and coverage tie and collide.
func TestPostingsMatchEveryPassage(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	vocab := strings.Fields("Paris Eiffel tower towers tower's built 1889 1,083 three 3 iron lattice Gustave engineer visitors year height metres France")
	text := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = vocab[r.IntN(len(vocab))]
		}
		return strings.Join(parts, " ")
	}
	for n := range 3000 {
		bags := make([]bag, 1+r.IntN(8))
		passages := make([]sdk.Passage, len(bags))
		ids := make([]string, len(bags))
		for i := range bags {
			passages[i] = sdk.Passage{Text: text(1 + r.IntN(12))}
			bags[i] = passageBag(passages[i].Text)
			ids[i] = fmt.Sprint(i + 1)
		}
		seg := extract(text(1+r.IntN(10)), r.IntN(2) == 0)
		var cited []int
		for range 1 + r.IntN(2) {
			cited = append(cited, r.IntN(len(bags)))
		}
		p := newPostings(passages)
		if got, want := unsupported(seg, cited, p, ids), oldUnsupported(seg, cited, bags, ids); got != want {
			t.Fatalf("case %d: unsupported = %q, want %q", n, got, want)
		}
		for i := range bags {
			if got, want := disjoint(seg, p, i), oldDisjoint(seg, bags[i]); got != want {
				t.Fatalf("case %d: disjoint(passage %d) = %v, want %v", n, i, got, want)
			}
		}
		// The scratch counts are left clean for the next segment.
		for i, c := range p.count {
			if c != 0 {
				t.Fatalf("case %d: count[%d] = %d left behind", n, i, c)
			}
		}
	}
}

// oldUnsupported runs the support tests on one cited segment and returns a reason naming the
// better passage, or "". cited are passage indexes; bags are all passages' terms.
func oldUnsupported(seg terms, cited []int, bags []bag, ids []string) string {
	in := func(pred func(bag) bool, idx []int) bool {
		for _, i := range idx {
			if pred(bags[i]) {
				return true
			}
		}
		return false
	}
	isCited := map[int]bool{}
	for _, i := range cited {
		isCited[i] = true
	}
	other := func(pred func(bag) bool) int {
		for i := range bags {
			if !isCited[i] && pred(bags[i]) {
				return i
			}
		}
		return -1
	}
	// 1-2. Specific facts: the segment's numbers and names, less those every passage has
	// (the topic: "Eiffel Tower" in every passage tells no passage apart). The cited
	// passages hold none of them while another passage holds one. "None" rather than "one
	// missing" keeps a sentence that adds an incidental name ("in Paris") to a supported
	// fact from being flagged.
	type fact struct {
		what, v string
		has     func(bag) bool
	}
	var facts []fact
	for _, n := range seg.nums {
		facts = append(facts, fact{"number", n, func(b bag) bool { return b.nums[n] }})
	}
	for _, e := range seg.names {
		facts = append(facts, fact{"name", e, func(b bag) bool { return b.words[e] || b.stems[stem(e)] }})
	}
	all := make([]int, len(bags))
	for i := range all {
		all[i] = i
	}
	specific := facts[:0]
	for _, f := range facts {
		everywhere := true
		for i := range bags {
			everywhere = everywhere && f.has(bags[i])
		}
		if !everywhere {
			specific = append(specific, f)
		}
	}
	held := false
	for _, f := range specific {
		held = held || in(f.has, cited)
	}
	if !held {
		for _, f := range specific {
			if j := other(f.has); j >= 0 {
				return fmt.Sprintf("%s %s is not in the cited passage but is in passage %s", f.what, f.v, ids[j])
			}
		}
	}
	if len(seg.stems) < minTermsForOverlap {
		return ""
	}
	// 3. The cited passages cover few of the content words; another covers most.
	cover := func(idx []int) int {
		n := 0
		for _, s := range seg.stems {
			if in(func(b bag) bool { return b.stems[s] }, idx) {
				n++
			}
		}
		return n
	}
	got := cover(cited)
	if float64(got) <= lowCoverage*float64(len(seg.stems)) {
		for j := range bags {
			if isCited[j] {
				continue
			}
			if best := cover([]int{j}); float64(best) >= highCoverage*float64(len(seg.stems)) && best-got >= 2 {
				return fmt.Sprintf("the cited passage has %d of the sentence's %d content words, passage %s has %d",
					got, len(seg.stems), ids[j], best)
			}
		}
	}
	return ""
}

// oldDisjoint is disjoint as first written, over a passage's bag.
func oldDisjoint(seg terms, b bag) bool {
	if len(seg.stems)+len(seg.nums) < minTermsForOverlap {
		return false
	}
	for _, s := range seg.stems {
		if b.stems[s] {
			return false
		}
	}
	for _, n := range seg.nums {
		if b.nums[n] {
			return false
		}
	}
	return true
}
