// Command noticemodel trains the notice model (internal/noticemodel) on the labelled public
// data in internal/corpus and writes its weights; with -loso it prints, for every source,
// the model trained without that source measured on it, next to prescreen's rules alone
// (QUALITY.md, "The notice model"):
//
//	go run ./internal/cmd/noticemodel -loso
//	go run ./internal/cmd/noticemodel -out /tmp/notice.bin
//
// Training is deterministic: the examples are read in corpus order, the optimizer takes them
// in that order, and every floating-point product is rounded before it is summed (no fused
// multiply-add), so the weights are the same bytes on every machine.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/scorekit/scorekit/internal/corpus"
	notice "github.com/scorekit/scorekit/internal/noticemodel"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// example is one training or test text.
type example struct {
	text  string
	pos   bool
	group string // the source left out together in -loso
	caseI int    // index of the corpus case, or -1 for a line of a longer answer
}

// positive groups: failure notices and permission refusals, by the program that shows them.
func groupOf(c corpus.Case) (string, bool) {
	switch {
	case c.Label == corpus.LabelProductFailure:
		parts := strings.Split(c.Run.ID, "/")
		return "product_failures:" + parts[2], true
	case c.Label == corpus.LabelError:
		return c.Source, true
	case c.Label == corpus.LabelPermission:
		parts := strings.Split(c.Run.ID, "/")
		return "product_permission:" + parts[2], true
	}
	return "", false
}

func examples(cases []corpus.Case) []example {
	var out []example
	for i, c := range cases {
		if g, ok := groupOf(c); ok {
			if notice.Eligible(c.Run.Output) {
				out = append(out, example{text: c.Run.Output, pos: true, group: g, caseI: i})
			}
			continue
		}
		if !c.WantPass || c.Derived != "" && c.Source != "null_templates" {
			continue
		}
		group := c.Source
		if c.Source == "catalog_neutral" {
			group += ":" + strings.Split(c.Run.ID, "/")[2]
		}
		if notice.Eligible(c.Run.Output) {
			out = append(out, example{text: c.Run.Output, group: group, caseI: i})
			continue
		}
		// A longer answer's lines are short texts of its language and register.
		if c.Source == "gnome_help" || c.Source == "mt_bench" || c.Source == "dolly" {
			for _, l := range strings.Split(c.Run.Output, "\n") {
				l = strings.TrimSpace(strings.TrimPrefix(l, "- "))
				if len(l) > 12 && notice.Eligible(l) {
					out = append(out, example{text: l, group: c.Source, caseI: -1})
				}
			}
		}
	}
	return out
}

// train fits a logistic regression on the mean of the examples' n-gram indicators with
// AdaGrad and L2, then quantizes it.
func train(ex []example, skip string) *notice.Model {
	w := make([]float64, notice.Buckets)
	g2 := make([]float64, notice.Buckets)
	var b, gb float64
	var npos, nneg float64
	for _, e := range ex {
		if e.group == skip {
			continue
		}
		if e.pos {
			npos++
		} else {
			nneg++
		}
	}
	const rate, l2, epochs = 0.5, 1e-5, 12
	var grams []uint32
	for epoch := 0; epoch < epochs; epoch++ {
		for _, e := range ex {
			if e.group == skip {
				continue
			}
			grams = grams[:0]
			notice.Grams(e.text, func(h uint32) { grams = append(grams, h) })
			if len(grams) == 0 {
				continue
			}
			inv := 1 / float64(len(grams))
			z := b
			for _, h := range grams {
				z += float64(w[h] * inv)
			}
			y, weight := 0.0, 0.5*(npos+nneg)/nneg
			if e.pos {
				y, weight = 1, 0.5*(npos+nneg)/npos
			}
			grad := float64((1/(1+math.Exp(-z)) - y) * weight)
			for _, h := range grams {
				gh := float64(grad*inv) + float64(l2*w[h])
				g2[h] += float64(gh * gh)
				w[h] -= float64(rate * gh / math.Sqrt(g2[h]+1e-8))
			}
			gb += float64(grad * grad)
			b -= float64(rate * grad / math.Sqrt(gb+1e-8))
		}
	}
	maxW := 1e-9
	for _, x := range w {
		maxW = math.Max(maxW, math.Abs(x))
	}
	scale := maxW / 127
	m := &notice.Model{Bias: int32(math.Round(b / scale))}
	for i, x := range w {
		m.Weights[i] = int8(math.Round(x / scale))
	}
	m.Threshold = threshold(m, ex, skip)
	return m
}

// threshold returns the lowest threshold at which no held-in group of correct texts loses
// more than 0.5% and all of them together at most 0.2%, so a notice is read only on strong
// evidence.
func threshold(m *notice.Model, ex []example, skip string) int32 {
	type neg struct {
		margin float64 // mean weight plus bias
		group  string
	}
	var negs []neg
	total := map[string]int{}
	for _, e := range ex {
		if e.pos || e.group == skip {
			continue
		}
		sum, n := m.Score(e.text)
		if n == 0 {
			continue
		}
		negs = append(negs, neg{float64(sum)/float64(n) + float64(m.Bias), e.group})
		total[e.group]++
	}
	sort.Slice(negs, func(i, j int) bool { return negs[i].margin > negs[j].margin })
	fa := map[string]int{}
	// Walk down from the highest-scoring correct text: the threshold sits just above the
	// first one that would break a limit.
	for i, x := range negs {
		fa[x.group]++
		if float64(fa[x.group]) > 0.005*float64(total[x.group]) || float64(i+1) > 0.002*float64(len(negs)) {
			return int32(math.Floor(x.margin)) + 1
		}
	}
	return 0
}

func main() {
	out := flag.String("out", "notice.bin", "where to write the weights")
	loso := flag.Bool("loso", false, "print the leave-one-source-out table (markdown) instead of writing weights")
	show = flag.Bool("show", false, "with -loso, print every held-out false alarm to stderr")
	flag.Parse()
	cases, err := corpus.LoadFound()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	neutral, err := corpus.CatalogNeutral()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	cases = append(cases, neutral...)
	ex := examples(cases)
	if *loso {
		if err := writeLOSO(cases, ex); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	m := train(ex, "")
	if err := os.WriteFile(*out, m.Encode(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// show prints held-out false alarms.
var show *bool

func writeLOSO(cases []corpus.Case, ex []example) error {
	ctx := context.Background()
	ps := heuristic.NewPrescreen()
	rulesFail := make([]bool, len(cases))
	for i, c := range cases {
		res, err := ps.Score(ctx, sdk.Call{Run: c.Run})
		if err != nil {
			return err
		}
		rulesFail[i] = res.Score != nil && *res.Score < 0.6
	}
	groups := map[string]bool{}
	var order []string
	for _, e := range ex {
		if !groups[e.group] {
			groups[e.group] = true
			order = append(order, e.group)
		}
	}
	sort.Strings(order)
	fmt.Println("| held-out source | kind | N | rules alone | rules + model trained without it | model alone |")
	fmt.Println("|---|---|---:|---:|---:|---:|")
	for _, g := range order {
		m := train(ex, g)
		var n, rules, both, model int
		pos := false
		for _, e := range ex {
			if e.group != g {
				continue
			}
			pos = e.pos
			n++
			r := e.caseI >= 0 && rulesFail[e.caseI]
			f := m.Fires(e.text)
			if r {
				rules++
			}
			if r || f {
				both++
			}
			if f {
				model++
				if *show && !e.pos {
					fmt.Fprintf(os.Stderr, "false alarm, %s: %q\n", g, e.text)
				}
			}
		}
		kind := "caught"
		if !pos {
			kind = "false alarms"
		}
		pct := func(k int) string { return fmt.Sprintf("%.1f%% (%d/%d)", 100*float64(k)/float64(n), k, n) }
		fmt.Printf("| %s | %s | %d | %s | %s | %s |\n", g, kind, n, pct(rules), pct(both), pct(model))
	}
	return nil
}
