package heuristic

import (
	"context"
	"math/bits"
	"unicode/utf8"
)

// alignBudget caps one edit-distance or LCS computation at this many word steps (one step
// updates 64 cells of the dynamic-programming table; about 20-60 ms natively). Within it the
// answer is exact. Two texts whose exact table exceeds it (both longer than about 32,000
// characters) are aligned within a band around the diagonal that fits the budget: exact
// whenever the texts differ by fewer edits than the band is wide, otherwise the cost of the
// best alignment that stays within the band, an upper bound of the edit distance and a lower
// bound of the LCS.
const alignBudget = 1 << 24

// FlagApproximated marks a result whose score is a documented approximation: the input was
// beyond the size the scorer computes exactly (see the scorer's documentation).
const FlagApproximated = "approximated"

// denseWords caps the dense table of character masks (characters x words): beyond it the
// masks are kept sparse, so text with thousands of distinct characters costs memory in
// proportion to its length.
const denseWords = 1 << 18

// pollSteps is how many word steps run between two looks at the context.
const pollSteps = 1 << 16

// editDistance returns the Levenshtein distance of a and b, computed exactly within budget
// word steps; beyond it, an upper bound (see alignBudget), and exact false.
func editDistance(ctx context.Context, a, b []rune, budget int) (dist int, exact bool, err error) {
	var t table
	return t.align(ctx, a, b, budget, denseWords, false)
}

// lcsLength returns the length of the longest common subsequence of a and b, computed
// exactly within budget word steps; beyond it, a lower bound, and exact false.
func lcsLength(ctx context.Context, a, b []rune, budget int) (n int, exact bool, err error) {
	var t table
	return t.align(ctx, a, b, budget, denseWords, true)
}

// align computes the edit distance (lcs false) or the LCS of a and b within budget word
// steps, with mask tables dense up to dense words. A table may be reused for many
// alignments, one at a time; it keeps its buffers.
func (t *table) align(ctx context.Context, a, b []rune, budget, dense int, lcs bool) (int, bool, error) {
	// A common prefix and suffix align with themselves in some optimal alignment.
	a, b, p, s := trimCommon(a, b)
	// a is the longer, b the shorter.
	if len(b) == 0 {
		if lcs {
			return p + s, true, nil
		}
		return len(a), true, nil
	}
	if len(b) <= 64 {
		t.steps += len(a)
		t.word.build(b)
		if lcs {
			return p + s + t.word.lcs(b, a), true, nil
		}
		return t.word.lev(b, a), true, nil
	}
	n, m := len(a), len(b)
	if (m+63)/64*n <= budget {
		// The whole table: the shorter text down the rows keeps the masks small.
		t.init(b, a, true, dense)
	} else {
		// A band around the diagonal: the longer text down the rows, so a band of w rows
		// costs about 2w/64 steps for each of the shorter text's characters.
		t.init(a, b, false, dense)
	}
	v, exact, err := t.run(ctx, budget, lcs)
	if lcs {
		v += p + s
	}
	return v, exact, err
}

// table is the dynamic-programming table of one alignment, computed a column at a time with
// the bit-parallel algorithms: Myers/Hyyrö for the edit distance (vertical deltas in two
// bit vectors), Allison-Dix/Hyyrö for the LCS (one bit vector whose zeros are increments).
// The rows are the characters of one text, 64 to a word ("block"); the columns the other's.
type table struct {
	rows, cols int
	words      int
	pat        pattern
	ids        []int32 // the columns' characters as pattern ids, -1 when absent from the rows
	full       bool    // no band: every block of every column
	// Per block: the vertical deltas (P, M for the edit distance; P alone for the LCS) and
	// the value of the table at the block's last row (for the last block, at the last row
	// of the text).
	p, m  []uint64
	score []int
	word  wordMasks // the pattern of a text of at most 64 characters
	// steps counts the word steps of every alignment the table computed, so callers that
	// share a budget among many can account for it.
	steps int
}

// trimCommon returns a and b without their common prefix (p elements) and suffix (s
// elements), the longer of the two rests first.
func trimCommon[E comparable](a, b []E) (long, short []E, p, s int) {
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	a, b = a[p:], b[p:]
	for s < len(a) && s < len(b) && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	a, b = a[:len(a)-s], b[:len(b)-s]
	if len(a) < len(b) {
		a, b = b, a
	}
	return a, b, p, s
}

// resize returns s with length n and every element zero, reusing its array when it can.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

func (t *table) init(rows, cols []rune, full bool, dense int) {
	t.rows, t.cols = len(rows), len(cols)
	t.words = (t.rows + 63) / 64
	t.full = full
	t.pat.build(rows, dense)
	t.ids = resize(t.ids, len(cols))
	for j, r := range cols {
		t.ids[j] = t.pat.id(r)
	}
	t.p = resize(t.p, t.words)
	t.m = resize(t.m, t.words)
	t.score = resize(t.score, t.words)
}

// run computes the table, the whole of it or within a band widened until the answer is
// provably exact or the budget is spent.
func (t *table) run(ctx context.Context, budget int, lcs bool) (int, bool, error) {
	n, m := t.rows, t.cols
	if t.full {
		v, err := t.pass(ctx, n, lcs)
		return v, true, err
	}
	// A band of w rows either side costs about (2w + n/m)/64 + 2 steps a column.
	wmax := max(64, (budget/m-2)*32-n/(2*m))
	w := min(wmax, max(256, n-m+1))
	for {
		v, err := t.pass(ctx, w, lcs)
		if err != nil {
			return 0, false, err
		}
		// The cost (edit distance, or insertions plus deletions for the LCS) of an
		// alignment bounds how far its path strays from the diagonal, so a cost below w
		// means the best path lies within the band.
		cost := v
		if lcs {
			cost = n + m - 2*v
		}
		if cost < w || w >= n {
			return v, true, nil
		}
		if w == wmax {
			return v, false, nil
		}
		w = min(wmax, max(2*w, cost+1))
	}
}

// band returns the blocks holding the rows within w of the diagonal in column j.
func (t *table) band(j, w int) (lo, hi int) {
	if t.full {
		return 0, t.words - 1
	}
	c := j * t.rows / t.cols
	return (max(1, c-w) - 1) / 64, (min(t.rows, c+w) - 1) / 64
}

// pass computes the table within w rows of the diagonal (every row when w >= rows) and
// returns its last cell. Cells outside the band count as reached by the cheapest path
// along the band's edge (a row above: one insertion a column; a block entering below: one
// deletion a row), so every value is that of a real alignment.
func (t *table) pass(ctx context.Context, w int, lcs bool) (int, error) {
	if w >= t.rows {
		t.full = true
	}
	t.pat.reset()
	last := t.words - 1
	lastRows := t.rows - 64*last // rows in the last block
	_, hi := t.band(0, w)
	t.enter(0, 0, lcs, lastRows)
	for b := 1; b <= hi; b++ {
		t.enter(b, t.score[b-1], lcs, lastRows)
	}
	prevHi := hi
	lo := 0
	poll := max(1, pollSteps/(hi+1))
	for j := 1; j <= t.cols; j++ {
		if j%poll == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		lo, hi = t.band(j, w)
		for b := prevHi + 1; b <= hi; b++ {
			t.enter(b, t.score[b-1], lcs, lastRows)
		}
		prevHi = hi
		t.steps += hi - lo + 1
		eq := t.pat.column(t.ids[j-1], lo, hi)
		if lcs {
			t.lcsColumn(eq, lo, hi)
		} else {
			t.levColumn(eq, lo, hi, last, lastRows)
		}
	}
	return t.score[last], nil
}

// enter starts block b in the column before the one being computed: its rows are reached
// straight down from the row above, whose value is above.
func (t *table) enter(b, above int, lcs bool, lastRows int) {
	t.p[b], t.m[b] = ^uint64(0), 0
	if lcs {
		t.score[b] = above
		return
	}
	if b == t.words-1 {
		t.score[b] = above + lastRows
	} else {
		t.score[b] = above + 64
	}
}

// lcsColumn advances blocks lo..hi by one column. The carry out of a block's addition is
// the increase of the LCS at its last row.
func (t *table) lcsColumn(eq []uint64, lo, hi int) {
	p, score := t.p[lo:hi+1], t.score[lo:hi+1]
	eq = eq[:len(p)]
	var carry uint64
	for i, v := range p {
		x := eq[i]
		sum, c := bits.Add64(v, v&x, carry)
		p[i] = sum | (v &^ x)
		score[i] += int(c)
		carry = c
	}
}

// levColumn advances blocks lo..hi by one column with Hyyrö's block step; the horizontal
// delta entering the top block is +1 (the table's first row, or the band's edge). The delta
// passes from block to block as two bits (hp: +1, hm: -1), the shortest chain of dependent
// operations between blocks.
func (t *table) levColumn(eq []uint64, lo, hi, last, lastRows int) {
	end := hi
	if hi == last {
		end = hi - 1
	}
	hp, hm := uint64(1), uint64(0)
	if end >= lo {
		p, mvs, score := t.p[lo:end+1], t.m[lo:end+1], t.score[lo:end+1]
		eq := eq[:len(p)]
		mvs = mvs[:len(p)]
		score = score[:len(p)]
		for i, pv := range p {
			x, mv := eq[i], mvs[i]
			xv := x | mv
			x |= hm
			xh := (((x & pv) + pv) ^ pv) | x
			ph := mv | ^(xh | pv)
			mh := pv & xh
			ph, hp = ph<<1|hp, ph>>63
			mh, hm = mh<<1|hm, mh>>63
			p[i] = mh | ^(xv | ph)
			mvs[i] = ph & xv
			score[i] += int(hp) - int(hm)
		}
	}
	if hi == last {
		x := eq[last-lo]
		pv, mv := t.p[last], t.m[last]
		xv := x | mv
		x |= hm
		xh := (((x & pv) + pv) ^ pv) | x
		ph := mv | ^(xh | pv)
		mh := pv & xh
		r := uint(lastRows - 1) // the text's last row
		t.score[last] += int(ph>>r&1) - int(mh>>r&1)
		ph = ph<<1 | hp
		mh = mh<<1 | hm
		t.p[last] = mh | ^(xv | ph)
		t.m[last] = ph & xv
	}
}

// pattern holds each character's positions in the rows as bit masks, 64 rows to a word:
// dense (a table of characters x words) when that is small, else per character the blocks
// where it occurs, so the masks take memory in proportion to the text.
type pattern struct {
	words  int
	ascii  [utf8.RuneSelf]int32 // id+1 of an ASCII character; 0 when absent
	other  map[rune]int32
	n      int // distinct characters
	ids    []int32
	dense  []uint64
	sparse bool
	// Sparse: character id's entries are start[id]..start[id+1], by block.
	start []int32
	blk   []int32
	mask  []uint64
	cur   []int32 // per id, the first entry not below the band (the band only moves down)
	col   []uint64
}

func (p *pattern) id(r rune) int32 {
	if r >= 0 && r < utf8.RuneSelf {
		return p.ascii[r] - 1
	}
	if k, ok := p.other[r]; ok {
		return k
	}
	return -1
}

func (p *pattern) build(rows []rune, dense int) {
	p.words = (len(rows) + 63) / 64
	p.ascii = [utf8.RuneSelf]int32{}
	clear(p.other)
	p.n = 0
	p.sparse = false
	p.ids = resize(p.ids, len(rows))
	ids := p.ids
	for i, r := range rows {
		k := p.id(r)
		if k < 0 {
			k = int32(p.n)
			p.n++
			if r >= 0 && r < utf8.RuneSelf {
				p.ascii[r] = k + 1
			} else {
				if p.other == nil {
					p.other = make(map[rune]int32)
				}
				p.other[r] = k
			}
		}
		ids[i] = k
	}
	if p.n*p.words <= dense {
		p.dense = resize(p.dense, p.n*p.words)
		for i, k := range ids {
			p.dense[int(k)*p.words+i/64] |= 1 << (uint(i) % 64)
		}
		p.col = resize(p.col, p.words) // zeros, for characters absent from the rows
		return
	}
	p.sparse = true
	// Count each character's blocks, then fill them in block order.
	p.start = resize(p.start, p.n+1)
	lastBlk := resize(p.cur, p.n)
	for i := range lastBlk {
		lastBlk[i] = -1
	}
	for i, k := range ids {
		if b := int32(i / 64); lastBlk[k] != b {
			lastBlk[k] = b
			p.start[k+1]++
		}
	}
	for k := 0; k < p.n; k++ {
		p.start[k+1] += p.start[k]
	}
	total := p.start[p.n]
	p.blk = resize(p.blk, int(total))
	p.mask = resize(p.mask, int(total))
	fill := lastBlk // reused: next free entry of each id
	copy(fill, p.start[:p.n])
	for i, k := range ids {
		b := int32(i / 64)
		e := fill[k]
		if e > p.start[k] && p.blk[e-1] == b {
			e--
		} else {
			fill[k]++
			p.blk[e] = b
		}
		p.mask[e] |= 1 << (uint(i) % 64)
	}
	p.cur = fill
	p.col = resize(p.col, p.words)
}

// reset rewinds the sparse cursors for a new pass.
func (p *pattern) reset() {
	if p.sparse {
		copy(p.cur, p.start[:p.n])
	}
}

// column returns the masks of character id for blocks lo..hi. lo must not decrease between
// calls of one pass.
func (p *pattern) column(id int32, lo, hi int) []uint64 {
	if id < 0 {
		if p.sparse {
			clear(p.col[:hi-lo+1])
		}
		return p.col[:hi-lo+1]
	}
	if !p.sparse {
		base := int(id) * p.words
		return p.dense[base+lo : base+hi+1]
	}
	out := p.col[:hi-lo+1]
	clear(out)
	e, end := p.cur[id], p.start[id+1]
	for e < end && int(p.blk[e]) < lo {
		e++
	}
	p.cur[id] = e
	for ; e < end && int(p.blk[e]) <= hi; e++ {
		out[int(p.blk[e])-lo] = p.mask[e]
	}
	return out
}

// wordMasks is the pattern of a text of at most 64 characters.
type wordMasks struct {
	ascii [utf8.RuneSelf]uint64
	other map[rune]uint64
}

func (w *wordMasks) build(s []rune) {
	w.ascii = [utf8.RuneSelf]uint64{}
	clear(w.other)
	for i, r := range s {
		if r >= 0 && r < utf8.RuneSelf {
			w.ascii[r] |= 1 << uint(i)
			continue
		}
		if w.other == nil {
			w.other = make(map[rune]uint64)
		}
		w.other[r] |= 1 << uint(i)
	}
}

func (w *wordMasks) get(r rune) uint64 {
	if r >= 0 && r < utf8.RuneSelf {
		return w.ascii[r]
	}
	return w.other[r]
}

// lev is the edit distance of rows, the text of at most 64 characters w was built from,
// and cols.
func (w *wordMasks) lev(rows, cols []rune) int {
	pv, mv := ^uint64(0), uint64(0)
	score := len(rows)
	top := uint(len(rows) - 1)
	for _, r := range cols {
		x := w.get(r)
		xv := x | mv
		xh := (((x & pv) + pv) ^ pv) | x
		ph := mv | ^(xh | pv)
		mh := pv & xh
		score += int(ph>>top&1) - int(mh>>top&1)
		ph = ph<<1 | 1
		mh <<= 1
		pv = mh | ^(xv | ph)
		mv = ph & xv
	}
	return score
}

// lcs is the LCS of rows, the text of at most 64 characters w was built from, and cols.
func (w *wordMasks) lcs(rows, cols []rune) int {
	v := ^uint64(0)
	for _, r := range cols {
		x := w.get(r)
		v = (v + v&x) | (v &^ x)
	}
	if len(rows) < 64 {
		v |= ^uint64(0) << uint(len(rows))
	}
	return 64 - bits.OnesCount64(v)
}
