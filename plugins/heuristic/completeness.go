package heuristic

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// completenessScorer is the scorer NewCompleteness returns.
type completenessScorer struct{}

var _ sdk.Scorer = (*completenessScorer)(nil)

// NewCompleteness returns the completeness scorer.
// A turn whose only output is its tool calls is skipped: there is no text to compare.
//
// It measures how many of the input's terms the output covers, as Mastra's
// completeness scorer does: both texts are reduced to sets of lower-cased, accent-folded
// words with verbs in their base form; an input term of up to 3 characters is covered only by
// the same term, a longer one by an output term that contains it or is contained in it with
// more than 60% of its length. The score is covered / input terms; 1 when both texts have no
// terms, 0 when only the input has none. The overlaps are found through hash sets of
// substrings, not by comparing every pair of terms; an input with so many long terms that
// this exceeds its cost limit is approximated (see overlapBudget) and flagged.
//
// Mastra finds verbs with a part-of-speech tagger (compromise). This scorer rewrites verb
// phrases with a small rule set instead (irregular verbs, -ed/-ing/-s forms, modals,
// negations, contractions), which stays within the standard library for the WASM build;
// BENCHMARKS.md reports how often the two agree (86% of runs within 0.01).
func NewCompleteness() sdk.Scorer { return &completenessScorer{} }

// Info describes the scorer.
func (*completenessScorer) Info() sdk.Info {
	return describe("completeness",
		"Share of the input's terms (nouns, verbs in base form, other words) that the output covers; "+
			"short terms must match exactly, longer ones by substantial overlap. Mastra's completeness scorer.",
		0.5, "", "")
}

// Score grades call.Run: coverage of the input's terms in the output.
func (*completenessScorer) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	if r, ok := skipToolOnly("completeness", &call.Run); ok {
		return r, nil
	}
	in := terms(call.Run.Input)
	if err := ctx.Err(); err != nil { // each pass is linear; look between them
		return sdk.Result{}, err
	}
	out, outSet := termSet(call.Run.Output)
	score, missing, exact, err := coverage(ctx, in, out, outSet)
	if err != nil {
		return sdk.Result{}, err
	}
	if missing == nil {
		missing = []string{} // a JSON list, never null
	}
	reason := completenessReason(len(in), missing)
	if !exact {
		reason += " (approximated: too many long terms to test every overlap within the cost limit; some counted as missing may be covered)"
	}
	res := sdk.Scored(score, reason)
	if !exact {
		res.Flags = []string{FlagApproximated}
	}
	res.Steps = []sdk.Step{step("preprocess", map[string]any{
		"input_elements":   len(in),
		"output_elements":  len(out),
		"missing_elements": missing,
	})}
	return res, nil
}

func completenessReason(total int, missing []string) string {
	if total == 0 {
		return "the input has no terms to cover"
	}
	if len(missing) == 0 {
		return fmt.Sprintf("the output covers all %d input terms", total)
	}
	shown := missing
	if len(shown) > 10 {
		shown = shown[:10]
	}
	more := ""
	if len(missing) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(missing)-len(shown))
	}
	return fmt.Sprintf("the output covers %d of %d input terms; missing: %s%s",
		total-len(missing), total, strings.Join(shown, ", "), more)
}

// overlapBudget caps the work of the substring tests (bytes hashed, plus 16 a lookup; about
// 50-100 ms natively). Real text of 1 MiB stays far within it; beyond it, the input terms
// not yet tested count as missing (a lower bound of the score) and the result is flagged
// approximated.
const overlapBudget = 1 << 25

// coverage returns the share of in covered by out and the terms of in not covered, in
// order. A term is covered by the same term in out or, when longer than 3 characters, by an
// out term it contains or that contains it with more than 60% of the longer one's length.
// The reference compares every pair of terms; here the substrings of the right lengths are
// looked up in hash sets instead, both ways, so the cost grows with the texts' length, not
// with the product of their vocabularies. exact is false when overlapBudget ran out.
func coverage(ctx context.Context, in, out []string, outSet map[string]struct{}) (score float64, missing []string, exact bool, err error) {
	if len(in) == 0 {
		if len(out) == 0 {
			return 1, nil, true, nil
		}
		return 0, nil, true, nil
	}
	covered := make([]bool, len(in))
	var cand []int // terms of in that need the substring tests
	for i, e := range in {
		if _, ok := outSet[e]; ok {
			covered[i] = true
		} else if len(e) > 3 {
			cand = append(cand, i)
		}
	}
	exact = true
	if len(cand) > 0 && len(out) > 0 {
		exact, err = overlapAll(ctx, in, out, outSet, cand, covered)
		if err != nil {
			return 0, nil, false, err
		}
	}
	n := 0
	for i, e := range in {
		if covered[i] {
			n++
		} else {
			missing = append(missing, e)
		}
	}
	return float64(n) / float64(len(in)), missing, exact, nil
}

// overlapAll marks the terms of in listed in cand that overlap a term of out (see coverage).
// Terms are ASCII, so byte lengths are character counts. It reports false when the budget
// ran out before every candidate was tested.
func overlapAll(ctx context.Context, in, out []string, outSet map[string]struct{}, cand []int, covered []bool) (bool, error) {
	work := 0
	spend := func(l int) (bool, error) {
		work += l + 16
		if work&0xFFFF < (l+16) && ctx.Err() != nil { // about every 64 KiB of work
			return false, ctx.Err()
		}
		return work <= overlapBudget, nil
	}
	// An out term inside e: look up e's substrings of the lengths out terms have.
	outLens := distinctLens(out)
	var rest []int
	for _, i := range cand {
		e := in[i]
		for sub := range windows(e, outLens) {
			ok, err := spend(len(sub))
			if err != nil || !ok {
				return false, err
			}
			if _, hit := outSet[sub]; hit {
				covered[i] = true
				break
			}
		}
		if !covered[i] {
			rest = append(rest, i)
		}
	}
	if len(rest) == 0 {
		return true, nil
	}
	// e inside an out term: look up each out term's substrings of the lengths left.
	left := make(map[string]int, len(rest))
	restTerms := make([]string, len(rest))
	for k, i := range rest {
		left[in[i]] = i
		restTerms[k] = in[i]
	}
	restLens := distinctLens(restTerms)
	for _, o := range out {
		for sub := range windows(o, restLens) {
			ok, err := spend(len(sub))
			if err != nil || !ok {
				return false, err
			}
			if i, hit := left[sub]; hit {
				covered[i] = true
				delete(left, sub)
				if len(left) == 0 {
					return true, nil
				}
			}
		}
	}
	return true, nil
}

// windows yields the substrings of s that a term of one of the lengths in lens (distinct,
// ascending) must equal to overlap s (see coverage): of each length shorter than s and more
// than 60% of its length (ratioOK), shortest first, left to right.
func windows(s string, lens []int) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, l := range lens {
			if l >= len(s) {
				return
			}
			if !ratioOK(l, len(s)) {
				continue
			}
			for p := 0; p+l <= len(s); p++ {
				if !yield(s[p : p+l]) {
					return
				}
			}
		}
	}
}

// ratioOK is the reference's test, in the reference's arithmetic.
func ratioOK(shorter, longer int) bool { return float64(shorter)/float64(longer) > 0.6 }

// distinctLens returns the distinct lengths of terms, ascending.
func distinctLens(terms []string) []int {
	var seen []bool
	var out []int
	for _, t := range terms {
		l := len(t)
		if l >= len(seen) {
			seen = append(seen, make([]bool, l+1-len(seen))...)
		}
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}
