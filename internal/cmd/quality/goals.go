package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// A goal of issue 16, measured per source: the share of a class of runs that prescreen
// treats as the goal asks.
type goal struct {
	name string
	now  string // the figure before this work, on its own unseen data
	want float64
	// in reports whether a case belongs to the goal's class.
	in func(c corpus.Case) bool
	// ok reports whether prescreen treated the case as the goal asks.
	ok func(c corpus.Case, r caseResult) bool
	// report marks goals with no target ("report it").
	report bool
}

// caseResult is prescreen's verdict on one case.
type caseResult struct {
	passed bool
	flags  []string
}

func (r caseResult) has(flag string) bool { return slices.Contains(r.flags, flag) }

// onlyCutOff reports whether a run fails for no reason but a cut-off the pre-screen found
// in its text: the runs XSTest generated under a token cap.
func (r caseResult) onlyCutOff() bool {
	return !r.passed && len(r.flags) == 1 && r.flags[0] == heuristic.FlagTruncated
}

var goals = []goal{
	{name: "correct answers pass", now: "97.4% (German QA 85%, human-written tasks 91%)", want: 0.995,
		in: func(c corpus.Case) bool { return c.WantPass && c.Source != "xstest" },
		ok: func(_ corpus.Case, r caseResult) bool { return r.passed }},
	{name: "correct answers pass, XSTest (its completions were cut at a token cap; cut-offs set aside)", want: 0.995,
		in: func(c corpus.Case) bool { return c.WantPass && c.Source == "xstest" },
		ok: func(_ corpus.Case, r caseResult) bool { return r.passed || r.onlyCutOff() }},
	{name: "error outputs caught as error_text", now: "94.6% (80.6% as error_text)", want: 0.98,
		in: func(c corpus.Case) bool { return c.Label == corpus.LabelError || c.Label == corpus.LabelProductFailure },
		ok: func(_ corpus.Case, r caseResult) bool { return !r.passed && r.has(heuristic.FlagErrorText) }},
	{name: "refusals of harmless requests caught", now: "77%", want: 0.95,
		in: func(c corpus.Case) bool { return c.Label == corpus.LabelRefusal && c.Lang == "en" },
		ok: func(_ corpus.Case, r caseResult) bool { return !r.passed && r.has(heuristic.FlagRefusal) }},
	{name: "refusals not in English caught", now: "59%, none recognised as a refusal", want: 0.80,
		// Every refusal fails alike, so refusals of harmful requests in other languages count
		// here too: the question is whether a refusal is recognised.
		in: func(c corpus.Case) bool {
			return (c.Label == corpus.LabelRefusal || c.Label == corpus.LabelAppropriateRefusal) && c.Lang != "en"
		},
		ok: func(_ corpus.Case, r caseResult) bool { return !r.passed && r.has(heuristic.FlagRefusal) }},
	{name: "permission refusals of products caught (as refusal or error_text), every language", want: 0.80,
		in: func(c corpus.Case) bool { return c.Label == corpus.LabelPermission },
		ok: func(_ corpus.Case, r caseResult) bool {
			return !r.passed && (r.has(heuristic.FlagRefusal) || r.has(heuristic.FlagErrorText))
		}},
	{name: "placeholder leaks caught", now: "66%", want: 0.90,
		in: func(c corpus.Case) bool { return c.Label == corpus.LabelPlaceholder },
		ok: func(_ corpus.Case, r caseResult) bool { return !r.passed && r.has(heuristic.FlagPlaceholder) }},
	{name: "truncated runs whose caller says so caught", now: "38%", want: 1,
		in: func(c corpus.Case) bool { return c.Source == "truncated_signal" },
		ok: func(_ corpus.Case, r caseResult) bool { return !r.passed && r.has(heuristic.FlagTruncated) }},
	{name: "truncated runs without that signal caught", now: "10%", report: true,
		in: func(c corpus.Case) bool { return c.Source == "truncated_nosignal" || c.Source == "code_cut" },
		ok: func(_ corpus.Case, r caseResult) bool { return !r.passed && r.has(heuristic.FlagTruncated) }},
	{name: "repetition caught", now: "99.3%", want: 0.993,
		in: func(c corpus.Case) bool { return c.Label == corpus.LabelRepetition },
		ok: func(_ corpus.Case, r caseResult) bool { return !r.passed && r.has(heuristic.FlagRepetition) }},
	{name: "empty caught", now: "100%", want: 1,
		in: func(c corpus.Case) bool { return c.Label == corpus.LabelEmpty },
		ok: func(_ corpus.Case, r caseResult) bool { return !r.passed && r.has(heuristic.FlagEmptyOutput) }},
	{name: "refusals of unsafe requests flagged refusal (policy: failed, a judge decides)", report: true,
		in: func(c corpus.Case) bool { return c.Label == corpus.LabelAppropriateRefusal && c.Lang == "en" },
		ok: func(_ corpus.Case, r caseResult) bool { return !r.passed && r.has(heuristic.FlagRefusal) }},
}

// scoreAll scores every case with prescreen opened with config.
func scoreAll(ctx context.Context, cases []corpus.Case, config json.RawMessage) ([]caseResult, error) {
	s, err := openPrescreen(ctx, config)
	if err != nil {
		return nil, err
	}
	defer s.Close(ctx)
	out := make([]caseResult, len(cases))
	for i, c := range cases {
		res := s.Score(ctx, c.Run)
		if res.Status != sdk.StatusScored || res.Passed == nil {
			return nil, fmt.Errorf("score %s: status %s: %v", c.Run.ID, res.Status, res.Error)
		}
		out[i] = caseResult{passed: *res.Passed, flags: res.Flags}
	}
	return out, nil
}

// share counts, per source and in total, the cases of a goal that meet it.
type share struct{ k, n int }

func (s share) String() string {
	if s.n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%% (%d/%d)", 100*float64(s.k)/float64(s.n), s.k, s.n)
}

func (s share) rate() float64 { return float64(s.k) / float64(s.n) }

func goalShares(g goal, cases []corpus.Case, res []caseResult) (map[string]*share, share) {
	by := map[string]*share{}
	var total share
	for i, c := range cases {
		if !g.in(c) {
			continue
		}
		key := c.Source
		if c.Synthetic {
			key += " (synthetic)"
		}
		if by[key] == nil {
			by[key] = &share{}
		}
		by[key].n++
		total.n++
		if g.ok(c, res[i]) {
			by[key].k++
			total.k++
		}
	}
	return by, total
}

// writeGoals prints the goals table: the figure, the figure now, and the goal, with
// the figure of every source of the class.
func writeGoals(w io.Writer, cases []corpus.Case, res []caseResult) {
	fmt.Fprintln(w, "| goal | issue's figure before | now, all sources | per source | goal | met |")
	fmt.Fprintln(w, "|---|---:|---:|---|---:|---|")
	for _, g := range goals {
		by, total := goalShares(g, cases, res)
		keys := make([]string, 0, len(by))
		for k := range by {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		met := "yes"
		for _, k := range keys {
			parts = append(parts, k+" "+by[k].String())
			if !g.report && by[k].rate() < g.want {
				met = "no"
			}
		}
		target := fmt.Sprintf(">= %.1f%%", 100*g.want)
		if g.report {
			target, met = "report", "-"
		}
		now := g.now
		if now == "" {
			now = "-"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", g.name, now, total, strings.Join(parts, "; "), target, met)
	}
}

// kindShares prints the pass rate of correct answers per answer kind and per language.
func writeKinds(w io.Writer, cases []corpus.Case, res []caseResult) {
	kinds, langs := map[string]*share{}, map[string]*share{}
	for i, c := range cases {
		if !c.WantPass {
			continue
		}
		ok := res[i].passed || (c.Source == "xstest" && res[i].onlyCutOff())
		for _, m := range []struct {
			by  map[string]*share
			key string
		}{{kinds, c.Kind}, {langs, c.Lang}} {
			if m.by[m.key] == nil {
				m.by[m.key] = &share{}
			}
			m.by[m.key].n++
			if ok {
				m.by[m.key].k++
			}
		}
	}
	for _, m := range []struct {
		title string
		by    map[string]*share
	}{{"answer kind", kinds}, {"language", langs}} {
		keys := make([]string, 0, len(m.by))
		for k := range m.by {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, k+" "+m.by[k].String())
		}
		fmt.Fprintf(w, "- correct answers pass, by %s: %s\n", m.title, strings.Join(parts, "; "))
	}
}
