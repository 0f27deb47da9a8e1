package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/prescreen"
	"github.com/scorekit/scorekit/plugins/heuristic"
)

// A tunable is a threshold of prescreen's config that trades false alarms on correct
// answers for detections. Leave-one-source-out: for every source, the threshold is chosen
// on all the other sources, then the source is measured at that value.
type tunable struct {
	field string // the prescreen config field
	def   int    // the scorer's default
	grid  []int  // candidate values, ascending; a larger value flags less
	// target reports the failures the threshold exists to catch.
	target func(c corpus.Case) bool
}

// off_topic_min_words is not one: it decides the off_topic hint only, never a verdict
// (writeFlagOnly shows it).
var tunables = []tunable{
	{field: "cutoff_min_words", def: prescreen.CutoffMinWords, grid: []int{5, 10, 15, 20, 25, 30, 40, 60},
		target: func(c corpus.Case) bool { return c.Label == corpus.LabelTruncated }},
}

// maxCost is how many points of pass rate a held-in source of correct answers may lose
// against the most lenient value before a threshold is too eager.
const maxCost = 0.005

// correctOK is whether prescreen treated a correct case right: it passed, or (XSTest,
// whose completions were cut at a token cap) it failed only for a cut-off it found.
func correctOK(c corpus.Case, r caseResult) bool {
	return r.passed || (c.Source == "xstest" && r.onlyCutOff())
}

// sourceRate is the pass rate of a source's correct cases, or the detection rate of its
// target failures.
func sourceRate(cases []corpus.Case, res []caseResult, source string, target func(corpus.Case) bool) share {
	var s share
	for i, c := range cases {
		if c.Source != source {
			continue
		}
		switch {
		case c.WantPass:
			s.n++
			if correctOK(c, res[i]) {
				s.k++
			}
		case target(c):
			s.n++
			if !res[i].passed {
				s.k++
			}
		}
	}
	return s
}

// writeLOSO scores the corpus at every value of every tunable and prints, per source, the
// value chosen without that source and the source's figure at it.
func writeLOSO(ctx context.Context, w io.Writer, cases []corpus.Case) error {
	var correctSources, allSources []string
	seen := map[string]bool{}
	for _, c := range cases {
		if !seen[c.Source] {
			seen[c.Source] = true
			allSources = append(allSources, c.Source)
		}
	}
	for _, src := range allSources {
		for _, c := range cases {
			if c.Source == src && c.WantPass {
				correctSources = append(correctSources, src)
				break
			}
		}
	}
	for _, tu := range tunables {
		byValue := map[int][]caseResult{}
		for _, v := range tu.grid {
			cfg, _ := json.Marshal(map[string]int{tu.field: v})
			res, err := scoreAll(ctx, cases, cfg)
			if err != nil {
				return fmt.Errorf("%s=%d: %w", tu.field, v, err)
			}
			byValue[v] = res
		}
		lenient := tu.grid[len(tu.grid)-1]
		// allowed reports whether value v costs a held-in source of correct answers nothing
		// it can afford: it keeps the source at 99.5% or better, or, for a source already
		// below that at the most lenient value, costs it at most maxCost.
		allowed := func(v int, exclude string) bool {
			for _, src := range correctSources {
				if src == exclude {
					continue
				}
				floor := min(0.995, sourceRate(cases, byValue[lenient], src, tu.target).rate()-maxCost)
				if sourceRate(cases, byValue[v], src, tu.target).rate() < floor {
					return false
				}
			}
			return true
		}
		// detected counts the held-in target failures value v catches.
		detected := func(v int, exclude string) int {
			n := 0
			for i, c := range cases {
				if c.Source != exclude && tu.target(c) && !byValue[v][i].passed {
					n++
				}
			}
			return n
		}
		// choose returns the allowed value that catches the most held-in target failures,
		// the most lenient of those that tie.
		choose := func(exclude string) int {
			best, bestN := lenient, -1
			for _, v := range tu.grid {
				if !allowed(v, exclude) {
					continue
				}
				if n := detected(v, exclude); n > bestN || n == bestN {
					best, bestN = v, n
				}
			}
			return best
		}
		global := choose("")
		fmt.Fprintf(w, "\n`%s` (default %d): chosen on all sources: %d. Per source, chosen without it:\n\n", tu.field, tu.def, global)
		fmt.Fprintln(w, "| source | metric | value chosen without the source | figure at that value | figure at the default |")
		fmt.Fprintln(w, "|---|---|---:|---:|---:|")
		def := byValue[tu.def]
		rows := 0
		for _, src := range allSources {
			s := sourceRate(cases, def, src, tu.target)
			if s.n == 0 {
				continue
			}
			metric := "pass rate"
			if !slices.Contains(correctSources, src) {
				metric = "detection rate"
			}
			v := choose(src)
			fmt.Fprintf(w, "| %s | %s | %d | %s | %s |\n", src, metric, v, sourceRate(cases, byValue[v], src, tu.target), s)
			rows++
		}
		if rows == 0 {
			return fmt.Errorf("%s: no source to report", tu.field)
		}
	}
	return writeFlagOnly(ctx, w, cases)
}

// offTopicGrid are the values of off_topic_min_words writeFlagOnly scores the corpus at.
var offTopicGrid = []int{3, 4, 6, 8, 10, 15, 20}

// writeFlagOnly scores the corpus at several values of off_topic_min_words and prints, for
// each, the share of off-topic answers and of correct answers flagged off_topic, and how
// many runs' verdicts differ from the default's: none, since the threshold decides the
// hint only.
func writeFlagOnly(ctx context.Context, w io.Writer, cases []corpus.Case) error {
	def, err := scoreAll(ctx, cases, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n`off_topic_min_words` (default %d) decides the off_topic hint only; at each value:\n\n", prescreen.OffTopicMinWords)
	fmt.Fprintln(w, "| value | off-topic answers flagged | correct answers flagged | runs whose verdict differs from the default's |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|")
	for _, v := range offTopicGrid {
		cfg, _ := json.Marshal(map[string]int{"off_topic_min_words": v})
		res, err := scoreAll(ctx, cases, cfg)
		if err != nil {
			return fmt.Errorf("off_topic_min_words=%d: %w", v, err)
		}
		var off, good share
		changed := 0
		for i, c := range cases {
			s := &good
			switch {
			case c.WantFlag == heuristic.FlagOffTopic:
				s = &off
			case !c.WantPass:
				s = nil
			}
			if s != nil {
				s.n++
				if res[i].has(heuristic.FlagOffTopic) {
					s.k++
				}
			}
			if res[i].passed != def[i].passed {
				changed++
			}
		}
		fmt.Fprintf(w, "| %d | %s | %s | %d |\n", v, off, good, changed)
	}
	return nil
}
