package heuristic

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// listContainsScorer is the scorer NewListContains returns.
type listContainsScorer struct {
	cfg listConfig
}

type listConfig struct {
	AllowExtraEntities bool   `json:"allow_extra_entities"`
	Format             string `json:"format"`
	refConfig
}

// check validates the format and expected_from.
func (c listConfig) check(name string) error {
	switch c.Format {
	case "auto", "json", "lines":
	default:
		return fmt.Errorf("configure %s: format %q: want auto, json or lines", name, c.Format)
	}
	return c.refConfig.check(name)
}

var (
	_ sdk.Scorer     = (*listContainsScorer)(nil)
	_ sdk.Configurer = (*listContainsScorer)(nil)
)

// NewListContains returns the list overlap scorer with its default config.
// A turn whose only output is its tool calls is skipped: there is no text to compare.
//
// It measures the overlap of two lists of strings, as autoevals' ListContains
// does: every output item is compared with every expected item by Levenshtein similarity,
// the best one-to-one pairing is found (linear sum assignment), and the score is the sum of
// the paired similarities over the length of the longer list (over the expected list's
// length with allow_extra_entities). Two empty lists score 1, one empty list 0.
//
// Comparing every pair costs the product of the lists' lengths, so beyond 65,536 pairs
// (e.g. two lists of 256 items), or when comparing every pair exactly would exceed
// alignBudget word steps (long items), the pairing is approximated and the result flagged
// approximated: identical items are paired first, then each remaining output item is compared
// with its 8 nearest expected items on either side in sorted order and the 17 nearest in
// position (closest lengths first, until the budget is spent; long pairs as levenshtein
// compares long texts), and the most similar pairs are taken greedily; the score is then a
// lower bound of the exact one.
//
// The output and the reference are texts; format says how they become lists: json (an
// array; non-string items are compared as their JSON), lines (one item a line, list bullets
// and numbering removed) or auto (json when the text is a JSON array, else lines, and a
// single line is split on commas).
func NewListContains() sdk.Scorer {
	return &listContainsScorer{cfg: listConfig{Format: "auto", refConfig: fromExpected}}
}

const listSchema = `{"type": "object", "additionalProperties": false, "properties": {
	"allow_extra_entities": {"type": "boolean", "description": "Do not penalize output items beyond the expected ones. Optional. Default is false."},
	"format": {"type": "string", "enum": ["auto", "json", "lines"], "description": "How texts become lists. Optional. Default is auto."},
	` + expectedFromSchema + `}}`

// Info describes the scorer.
func (*listContainsScorer) Info() sdk.Info {
	return describe("list_contains",
		"Overlap of the output list with the expected list: best one-to-one pairing by Levenshtein similarity. autoevals' ListContains.",
		0.5, listSchema, `{"allow_extra_entities": false, "format": "auto", "expected_from": "expected"}`)
}

// Configure applies the config.
func (l *listContainsScorer) Configure(raw json.RawMessage) error {
	return configure("list_contains", l.Info().Defaults, raw, &l.cfg)
}

// Score grades call.Run: list overlap of output and reference.
func (l *listContainsScorer) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	ref, skip := reference("list_contains", l.cfg.ExpectedFrom, &call.Run)
	if skip != nil {
		return *skip, nil
	}
	want, err := parseList(ref, l.cfg.Format)
	if err != nil {
		return sdk.Skipped("list_contains: the expected answer is not a list: " + err.Error()), nil
	}
	got, err := parseList(call.Run.Output, l.cfg.Format)
	if err != nil {
		return sdk.Scored(0, "the output is not a list: "+err.Error()), nil
	}
	score, exact, err := listOverlap(ctx, got, want, l.cfg.AllowExtraEntities)
	if err != nil {
		return sdk.Result{}, err
	}
	if !exact {
		res := sdk.Scored(score, fmt.Sprintf("%d output items against %d expected items: overlap at least %.2f (approximated: too many or too long items to compare every pair within the cost limit)", len(got), len(want), score))
		res.Flags = []string{FlagApproximated}
		return res, nil
	}
	return sdk.Scored(score, fmt.Sprintf("%d output items against %d expected items: overlap %.2f", len(got), len(want), score)), nil
}

// listPairs caps the pairs of items compared exactly: up to it, and while comparing every
// pair stays within alignBudget word steps, every output item is compared with every
// expected item and the best one-to-one pairing is found (O(rows^2 x columns), at most 16.7
// million steps, and a 512 KiB table).
const listPairs = 1 << 16

// greedyBudget is the word steps the approximate pairing spends on comparing pairs,
// counting the characters of each pair for building its masks.
const greedyBudget = alignBudget / 2

// listNeighbours is how many expected items each remaining output item is compared with
// on each side, in sorted order and by position, when the lists are beyond the exact limits.
const listNeighbours = 8

// listOverlap is autoevals' ListContains with Levenshtein similarity. Within listPairs and
// alignBudget it is exact; beyond, it is approximated (exact false), and the score is a
// lower bound of the exact one: identical items are paired first, then each remaining
// output item is compared with the expected items nearest to it in sorted order and in
// position, within alignBudget word steps in all, and the most similar pairs are taken
// greedily.
func listOverlap(ctx context.Context, got, want []string, allowExtra bool) (score float64, exact bool, err error) {
	switch {
	case len(got) == 0 && len(want) == 0:
		return 1, true, nil
	case len(got) == 0 || len(want) == 0:
		return 0, true, nil
	}
	var total float64
	if g, w, ok := exactPairs(got, want); ok {
		total, err = assignExact(ctx, g, w)
		if len(got) == 1 && len(want) == 1 {
			return total, true, err
		}
		exact = true
	} else {
		total, err = assignGreedy(ctx, got, want)
	}
	if err != nil {
		return 0, false, err
	}
	denom := max(len(got), len(want))
	if allowExtra {
		denom = len(want)
	}
	return math.Min(math.Max(total/float64(denom), 0), 1), exact, nil
}

// exactPairs returns the items as runes when comparing every pair is within the limits.
func exactPairs(got, want []string) (g, w [][]rune, ok bool) {
	if len(got)*len(want) > listPairs {
		return nil, nil, false
	}
	g, w = itemRunes(got), itemRunes(want)
	cost := 0
	for _, a := range g {
		for _, b := range w {
			cost += alignCost(len(a), len(b))
		}
	}
	return g, w, cost <= alignBudget
}

// alignCost is the word steps of an exact alignment of texts of n and m characters.
func alignCost(n, m int) int {
	if n < m {
		n, m = m, n
	}
	if m <= 64 {
		return n
	}
	return n * ((m + 63) / 64)
}

// itemRunes converts each item once.
func itemRunes(items []string) [][]rune {
	out := make([][]rune, len(items))
	for i, s := range items {
		out[i] = []rune(s)
	}
	return out
}

// similarity is 1 - edit distance / longer length, within budget word steps, computed in
// t (reused from pair to pair).
func similarity(ctx context.Context, t *table, a, b []rune, budget int) (float64, bool, error) {
	d, exact, err := t.align(ctx, a, b, budget, denseWords, false)
	return levenshteinScore(d, max(len(a), len(b))), exact, err
}

// assignExact compares every pair and returns the sum of similarities of the best pairing.
func assignExact(ctx context.Context, g, w [][]rune) (float64, error) {
	var t table
	sim := make([][]float64, len(g))
	for i, a := range g {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		sim[i] = make([]float64, len(w))
		for j, b := range w {
			v, _, err := similarity(ctx, &t, a, b, alignBudget)
			if err != nil {
				return 0, err
			}
			sim[i][j] = v
		}
	}
	if len(g) == 1 && len(w) == 1 {
		return sim[0][0], nil
	}
	pairs, err := maxAssignment(ctx, sim)
	if err != nil {
		return 0, err
	}
	total := 0.0
	for i, j := range pairs {
		if j >= 0 {
			total += sim[i][j]
		}
	}
	return total, nil
}

// assignGreedy pairs identical items, then compares each remaining output item with its
// neighbours among the remaining expected items (in sorted order and in position), closest
// in length first, until alignBudget word steps are spent, and takes the most similar pairs
// first. It returns the sum of the paired similarities.
func assignGreedy(ctx context.Context, got, want []string) (float64, error) {
	total := 0.0
	left := make(map[string]int, len(want))
	for _, s := range want {
		left[s]++
	}
	var restG []int
	for i, s := range got {
		if left[s] > 0 {
			left[s]--
			total++
			continue
		}
		restG = append(restG, i)
	}
	var restW []int
	for j, s := range want {
		if left[s] > 0 {
			left[s]--
			restW = append(restW, j)
		}
	}
	left = nil
	if len(restG) == 0 || len(restW) == 0 {
		return total, nil
	}
	g, w := make([][]rune, len(restG)), make([][]rune, len(restW))
	for k, i := range restG {
		g[k] = []rune(got[i])
	}
	for k, j := range restW {
		w[k] = []rune(want[j])
	}
	edges := neighbourEdges(got, want, restG, restW)
	// Pairs of close length first (within an eighth of the longer), the pairs most likely
	// to be similar, so they are compared before the budget runs out: two passes over the
	// edges, the near ones, then the others.
	near := func(e uint64) bool {
		a, b := len(g[e>>32]), len(w[uint32(e)])
		return 8*(max(a, b)-min(a, b)) <= max(a, b)
	}
	// A pair is kept as its similarity's complement's bits (ordered like the complement for
	// values in [0, 1]) and its edge, so sorting the keys puts the most similar first.
	type pair struct{ key, edge uint64 }
	var pairs []pair
	var t table
	done := 0
	for _, wantNear := range [2]bool{true, false} {
		for _, e := range edges {
			if near(e) != wantNear {
				continue
			}
			if t.steps >= greedyBudget {
				break
			}
			if done%256 == 0 {
				if err := ctx.Err(); err != nil {
					return 0, err
				}
			}
			a, b := g[e>>32], w[uint32(e)]
			share := max((greedyBudget-t.steps)/(len(edges)-done), 256)
			done++
			t.steps += len(a) + len(b) // building the pair's masks
			v, _, err := similarity(ctx, &t, a, b, share)
			if err != nil {
				return 0, err
			}
			if v > 0 {
				pairs = append(pairs, pair{math.Float64bits(1 - v), e})
			}
		}
	}
	slices.SortFunc(pairs, func(x, y pair) int {
		if c := cmp.Compare(x.key, y.key); c != 0 {
			return c
		}
		return cmp.Compare(x.edge, y.edge)
	})
	usedG, usedW := make([]bool, len(restG)), make([]bool, len(restW))
	for _, p := range pairs {
		gk, wk := p.edge>>32, uint32(p.edge)
		if usedG[gk] || usedW[wk] {
			continue
		}
		usedG[gk], usedW[wk] = true, true
		total += 1 - math.Float64frombits(p.key)
	}
	return total, nil
}

// neighbourEdges returns the candidate pairs (index into restG << 32 | index into restW),
// distinct and sorted: each remaining output item with the listNeighbours nearest remaining
// expected items on either side in the sorted order of both lists, and with the
// 2*listNeighbours+1 nearest in position.
func neighbourEdges(got, want []string, restG, restW []int) []uint64 {
	type entry struct {
		s    string
		want bool
		k    int
	}
	all := make([]entry, 0, len(restG)+len(restW))
	for k, i := range restG {
		all = append(all, entry{got[i], false, k})
	}
	for k, j := range restW {
		all = append(all, entry{want[j], true, k})
	}
	slices.SortFunc(all, func(x, y entry) int {
		if c := strings.Compare(x.s, y.s); c != 0 {
			return c
		}
		if x.want != y.want {
			if x.want {
				return 1
			}
			return -1
		}
		return x.k - y.k
	})
	var edges []uint64
	for p, e := range all {
		if e.want {
			continue
		}
		for _, dir := range [2]int{-1, 1} {
			found := 0
			for q, steps := p+dir, 0; q >= 0 && q < len(all) && found < listNeighbours && steps < 4*listNeighbours; q, steps = q+dir, steps+1 {
				if all[q].want {
					edges = append(edges, uint64(e.k)<<32|uint64(all[q].k))
					found++
				}
			}
		}
		at := e.k * len(restW) / len(restG)
		for wk := max(0, at-listNeighbours); wk < min(len(restW), at+listNeighbours+1); wk++ {
			edges = append(edges, uint64(e.k)<<32|uint64(wk))
		}
	}
	slices.Sort(edges)
	return slices.Compact(edges)
}

// parseList turns text into list items according to format.
func parseList(s, format string) ([]string, error) {
	t := strings.TrimSpace(s)
	if format == "json" || (format == "auto" && strings.HasPrefix(t, "[")) {
		var items []json.RawMessage
		if err := json.Unmarshal([]byte(t), &items); err != nil {
			if format == "json" {
				return nil, fmt.Errorf("want a JSON array: %w", err)
			}
		} else {
			out := make([]string, len(items))
			for i, it := range items {
				var str string
				if json.Unmarshal(it, &str) == nil {
					out[i] = str
				} else {
					out[i] = string(it)
				}
			}
			return out, nil
		}
	}
	if t == "" {
		return nil, nil
	}
	lines := strings.Split(t, "\n")
	if format == "auto" && len(lines) == 1 {
		lines = strings.Split(t, ",")
	}
	var out []string
	for _, ln := range lines {
		if item := stripBullet(strings.TrimSpace(ln)); item != "" {
			out = append(out, item)
		}
	}
	return out, nil
}

// stripBullet removes a leading "- ", "* ", "• ", "1. " or "1) ".
func stripBullet(s string) string {
	for _, b := range []string{"- ", "* ", "• "} {
		if strings.HasPrefix(s, b) {
			return strings.TrimSpace(s[len(b):])
		}
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(s) && (s[i] == '.' || s[i] == ')') && s[i+1] == ' ' {
		return strings.TrimSpace(s[i+2:])
	}
	return s
}

// maxAssignment pairs rows with columns one-to-one so that the sum of w over the pairs is
// largest (the Hungarian algorithm on costs 1 - w, O(n^2 m)); it returns, for each row, its
// column or -1 when the row is left unpaired (more rows than columns).
func maxAssignment(ctx context.Context, w [][]float64) ([]int, error) {
	rows, cols := len(w), len(w[0])
	transposed := rows > cols
	if transposed {
		t := make([][]float64, cols)
		for j := range t {
			t[j] = make([]float64, rows)
			for i := range w {
				t[j][i] = w[i][j]
			}
		}
		w, rows, cols = t, cols, rows
	}
	// Potentials u (rows) and v (columns), 1-based with column 0 as the virtual start.
	u := make([]float64, rows+1)
	v := make([]float64, cols+1)
	p := make([]int, cols+1) // p[j]: row matched to column j
	way := make([]int, cols+1)
	minv := make([]float64, cols+1)
	used := make([]bool, cols+1)
	for i := 1; i <= rows; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p[0] = i
		j0 := 0
		for j := range minv {
			minv[j] = math.Inf(1)
			used[j] = false
		}
		for {
			used[j0] = true
			i0, delta, j1 := p[j0], math.Inf(1), 0
			for j := 1; j <= cols; j++ {
				if used[j] {
					continue
				}
				cur := (1 - w[i0-1][j-1]) - u[i0] - v[j]
				if cur < minv[j] {
					minv[j], way[j] = cur, j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= cols; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	out := make([]int, len(w))
	for i := range out {
		out[i] = -1
	}
	for j := 1; j <= cols; j++ {
		if p[j] > 0 {
			out[p[j]-1] = j - 1
		}
	}
	if !transposed {
		return out, nil
	}
	back := make([]int, cols)
	for i := range back {
		back[i] = -1
	}
	for r, c := range out {
		if c >= 0 {
			back[c] = r
		}
	}
	return back, nil
}
