package toolcalls

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/scorekit/scorekit/internal/prescreen"
	"github.com/scorekit/scorekit/sdk"
)

// pairWork is what comparing one pair costs beyond the bytes compared, so that many
// pairs of empty arguments still count against maxWork.
const pairWork = 64

// matching is how a run's calls were paired with the expected ones.
type matching struct {
	call      []int    // expected i -> the call matched with it, or -1
	expected  []int    // call j -> the expected call it matched, or -1
	miss      []string // expected i -> why its closest call did not match, when unmatched
	failed    []bool   // call j -> its result says it failed
	unordered int      // with order: how many would match in any order
}

// match pairs the expected calls with the run's calls: as many as possible, in the
// expected order when cfg.Order. Ties go to the earliest calls, so the result is the same
// in every runtime.
func match(ctx context.Context, exp []expectation, calls []sdk.ToolCall, cfg Config) (*matching, error) {
	m := &matching{call: make([]int, len(exp)), expected: make([]int, len(calls)), miss: make([]string, len(exp)), failed: make([]bool, len(calls))}
	for j, c := range calls {
		m.failed[j] = prescreen.ToolCallFailed(c)
		m.expected[j] = -1
	}
	byName := map[string][]int{}
	for j, c := range calls {
		byName[c.Name] = append(byName[c.Name], j)
	}
	args := make([]*arguments, len(calls))
	ok := make([][]int, len(exp)) // expected i -> the calls that satisfy it, ascending
	work := 0
	for i := range exp {
		m.call[i] = -1
		e := &exp[i]
		for _, j := range byName[e.Name] {
			work += pairWork + len(e.Arguments) + len(e.ArgumentsSchema) + len(calls[j].Arguments)
			if work > maxWork {
				return nil, fmt.Errorf("comparing %d expected calls with %d calls of the same tools exceeds %d MiB of arguments; "+
					"split the run or expect fewer calls", len(exp), len(calls), maxWork>>20)
			}
			if args[j] == nil {
				a := parseArguments(calls[j].Arguments)
				args[j] = &a
			}
			why := e.check(calls[j], *args[j])
			if why == "" && m.failed[j] && !cfg.CountFailed {
				why = "its result says it failed (count_failed is false)"
			}
			if why == "" {
				ok[i] = append(ok[i], j)
			} else if m.miss[i] == "" {
				m.miss[i] = "call " + strconv.Itoa(j+1) + " (" + e.Name + "): " + why
			}
		}
		if len(byName[e.Name]) == 0 {
			m.miss[i] = "never called"
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if cfg.Order {
		m.unordered = anyOrder(ok, len(calls), nil)
		inOrder(ok, m)
	} else {
		m.unordered = anyOrder(ok, len(calls), m)
	}
	for i, j := range m.call {
		switch {
		case j >= 0 || len(ok[i]) == 0:
		case cfg.Order:
			m.miss[i] = "no call that fits it comes in order"
		default:
			m.miss[i] = "every call that fits it went to another expected call"
		}
	}
	return m, nil
}

// anyOrder finds a maximum matching of expected calls with calls (augmenting paths,
// expected calls and their candidates taken in order), records it in m when m is not
// nil, and returns its size.
func anyOrder(ok [][]int, calls int, m *matching) int {
	owner := make([]int, calls) // call -> expected, or -1
	for j := range owner {
		owner[j] = -1
	}
	seen := make([]int, calls) // call -> the round that visited it
	round := 0
	var augment func(i int) bool
	augment = func(i int) bool {
		for _, j := range ok[i] {
			if seen[j] == round {
				continue
			}
			seen[j] = round
			if owner[j] < 0 || augment(owner[j]) {
				owner[j] = i
				return true
			}
		}
		return false
	}
	n := 0
	for i := range ok {
		round++
		if augment(i) {
			n++
		}
	}
	if m != nil {
		for j, i := range owner {
			if i >= 0 {
				m.call[i], m.expected[j] = j, i
			}
		}
	}
	return n
}

// inOrder finds the longest chain of (expected, call) pairs increasing in both and
// records it in m: a longest increasing subsequence over the candidate pairs, taken by
// expected call ascending and, within one, by call descending, so that no chain holds
// two calls for one expectation.
func inOrder(ok [][]int, m *matching) {
	type pair struct{ i, j, prev int }
	var pairs []pair
	for i, js := range ok {
		for k := len(js) - 1; k >= 0; k-- {
			pairs = append(pairs, pair{i: i, j: js[k], prev: -1})
		}
	}
	var tails []int // tails[l] = the pair ending the best chain of length l+1
	for p := range pairs {
		l := sort.Search(len(tails), func(l int) bool { return pairs[tails[l]].j >= pairs[p].j })
		if l > 0 {
			pairs[p].prev = tails[l-1]
		}
		if l == len(tails) {
			tails = append(tails, p)
		} else {
			tails[l] = p
		}
	}
	if len(tails) == 0 {
		return
	}
	for p := tails[len(tails)-1]; p >= 0; p = pairs[p].prev {
		m.call[pairs[p].i], m.expected[pairs[p].j] = pairs[p].j, pairs[p].i
	}
}

// result turns a matching into the scorer's result: the share of expected calls matched,
// 0 under strict when any call matched nothing, and every finding in the reason and the
// step.
func (m *matching) result(exp []expectation, calls []sdk.ToolCall, cfg Config) sdk.Result {
	matched := 0
	for _, j := range m.call {
		if j >= 0 {
			matched++
		}
	}
	var extra, failed []int
	for j := range calls {
		if m.expected[j] < 0 {
			extra = append(extra, j)
		}
		if m.failed[j] {
			failed = append(failed, j)
		}
	}
	score := float64(matched) / float64(len(exp))
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d expected tool calls made", matched, len(exp))
	if cfg.Order {
		b.WriteString(" in order")
	}
	var flags []string
	if matched < len(exp) {
		flags = append(flags, FlagMissing)
		b.WriteString("; missing: ")
		sep := ""
		for i, j := range m.call {
			if j < 0 {
				b.WriteString(sep + exp[i].Name + " (" + m.miss[i] + ")")
				sep = "; "
			}
		}
	}
	if cfg.Order && m.unordered > matched {
		flags = append(flags, FlagOutOfOrder)
		fmt.Fprintf(&b, "; %d would match in another order", m.unordered)
	}
	if len(extra) > 0 {
		flags = append(flags, FlagUnexpected)
		b.WriteString("; unexpected: " + callList(calls, extra))
		if cfg.Strict {
			score = 0
			b.WriteString(" (strict: no call beyond the expected ones, so the score is 0)")
		}
	}
	if len(failed) > 0 {
		flags = append(flags, FlagFailed)
		b.WriteString("; failed: ")
		for k, j := range failed {
			if k > 0 {
				b.WriteString(", ")
			}
			b.WriteString(calls[j].Name + " " + clip(calls[j].Result, 60))
		}
	}
	res := sdk.Scored(score, b.String())
	res.Flags = flags
	res.Steps = []sdk.Step{m.step(exp, calls, cfg)}
	return res
}

// callList names calls by position and tool: "call 2 (search_web), call 4 (log)".
func callList(calls []sdk.ToolCall, idx []int) string {
	parts := make([]string, 0, min(len(idx), 6))
	for k, j := range idx {
		if k == 5 {
			parts = append(parts, strconv.Itoa(len(idx)-5)+" more")
			break
		}
		parts = append(parts, "call "+strconv.Itoa(j+1)+" ("+calls[j].Name+")")
	}
	return strings.Join(parts, ", ")
}

// step records the matching: for each expected call, the call (1-based) that matched it
// or why none did; the calls that matched nothing and those that failed.
func (m *matching) step(exp []expectation, calls []sdk.ToolCall, cfg Config) sdk.Step {
	type expected struct {
		Name string `json:"name"`
		Call *int   `json:"call"`
		Miss string `json:"miss,omitempty"`
	}
	out := struct {
		Expected   []expected `json:"expected"`
		Unexpected []int      `json:"unexpected_calls"`
		Failed     []int      `json:"failed_calls"`
		Order      bool       `json:"order"`
		Strict     bool       `json:"strict"`
	}{Expected: make([]expected, len(exp)), Unexpected: []int{}, Failed: []int{}, Order: cfg.Order, Strict: cfg.Strict}
	for i, j := range m.call {
		out.Expected[i] = expected{Name: exp[i].Name}
		if j >= 0 {
			n := j + 1
			out.Expected[i].Call = &n
		} else {
			out.Expected[i].Miss = m.miss[i]
		}
	}
	for j := range calls {
		if m.expected[j] < 0 {
			out.Unexpected = append(out.Unexpected, j+1)
		}
		if m.failed[j] {
			out.Failed = append(out.Failed, j+1)
		}
	}
	raw, err := json.Marshal(out)
	if err != nil { // cannot happen: strings, ints and bools encode
		return sdk.Step{Name: "match", Prompt: "step output not encodable: " + err.Error()}
	}
	return sdk.Step{Name: "match", Output: raw}
}
