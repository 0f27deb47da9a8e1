package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/baseline"
	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/textkit"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// tally counts, for one set, how many runs each screen let through.
type tally struct {
	source, label string
	wantPass      bool
	// wantFlag is the hint the set's runs should carry (corpus.Case.WantFlag): the set is
	// measured by how many carry it, and flagged counts them for each screen (a baseline
	// flags a run by scoring it under 0.5).
	wantFlag string
	flagged  [3]int
	n        int
	passed   [3]int // prescreen, original, proposed fix
	flags    map[string]int
	// cutOff counts runs that should pass and fail only because they are truncated.
	cutOff int
}

// measurement is one run of the report: the tallies per set, in corpus order, and the
// cases prescreen got wrong.
type measurement struct {
	order   []string
	sets    map[string]*tally
	wrong   []string
	runs    int
	elapsed time.Duration
	// cases and results are every case and prescreen's verdict on it, in corpus order.
	cases   []corpus.Case
	results []caseResult
}

func run(ctx context.Context, w io.Writer, misses, loso bool) error {
	m, err := measure(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "## Goals (issues 16, 25 and 32)\n\n")
	writeGoals(w, m.cases, m.results)
	fmt.Fprintln(w)
	writeKinds(w, m.cases, m.results)
	if loso {
		fmt.Fprintf(w, "\n## Leave one source out\n")
		if err := writeLOSO(ctx, w, m.cases); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "\n## Every set\n\n")
	good := writeTable(w, m.order, m.sets)
	fmt.Fprintf(w, "\n%d of the %d correct answers fail only because they stop mid-sentence (flag truncated); without them prescreen passes %.1f%% of correct answers.\n",
		good.cutOff, good.n, 100*float64(good.passed[0])/float64(good.n-good.cutOff))
	fmt.Fprintf(w, "\n%d runs scored through the host in %s (%.1f us per run, including the host pipeline).\n",
		m.runs, m.elapsed.Round(time.Millisecond), float64(m.elapsed.Microseconds())/float64(m.runs))
	if misses {
		fmt.Fprintf(w, "\n## Cases prescreen gets wrong (%d)\n\n%s\n", len(m.wrong), strings.Join(m.wrong, "\n"))
	}
	return nil
}

// measure scores the corpus with prescreen through the host and with both baselines.
func measure(ctx context.Context) (*measurement, error) {
	cases, err := corpus.LoadFound()
	if err != nil {
		return nil, err
	}
	s, err := openPrescreen(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer s.Close(ctx)

	m := &measurement{sets: map[string]*tally{}, runs: len(cases), cases: cases}
	start := time.Now()
	for _, c := range cases {
		key := c.Source + "/" + c.Label
		t := m.sets[key]
		if t == nil {
			t = &tally{source: c.Source, label: c.Label, wantPass: c.WantPass, wantFlag: c.WantFlag, flags: map[string]int{}}
			m.sets[key] = t
			m.order = append(m.order, key)
		}
		res := s.Score(ctx, c.Run)
		if res.Status != sdk.StatusScored {
			return nil, fmt.Errorf("score %s: status %s: %v", c.Run.ID, res.Status, res.Error)
		}
		if res.Passed == nil {
			return nil, fmt.Errorf("score %s: the host returned no passed; the host pipeline must compute it from the threshold", c.Run.ID)
		}
		ok := *res.Passed
		m.results = append(m.results, caseResult{passed: ok, flags: res.Flags})
		t.n++
		for i, p := range []bool{ok, baseline.OriginalRelevance(c.Run.Input, c.Run.Output) >= baseline.FlagBelow, baseline.ProposedRelevance(c.Run.Input, c.Run.Output) >= baseline.FlagBelow} {
			if p {
				t.passed[i]++
			}
			if c.WantFlag != "" && (i == 0 && slices.Contains(res.Flags, c.WantFlag) || i > 0 && !p) {
				t.flagged[i]++
			}
		}
		for _, f := range res.Flags {
			t.flags[f]++
		}
		if c.WantPass && !ok && len(res.Flags) == 1 && res.Flags[0] == heuristic.FlagTruncated {
			t.cutOff++
		}
		if ok != c.WantPass && c.WantFlag == "" {
			m.wrong = append(m.wrong, fmt.Sprintf("- %s (%s) want pass=%v got %.2f %v: %q -> %q", c.Run.ID, c.Label, c.WantPass, res.Value(), res.Flags, clip(c.Run.Input, 120), clip(c.Run.Output, 160)))
		}
	}
	m.elapsed = time.Since(start)
	return m, nil
}

// writeTable prints one row per set and the totals, and returns the total of correct answers.
func writeTable(w io.Writer, order []string, sets map[string]*tally) tally {
	fmt.Fprintln(w, "| set | label | N | metric | prescreen | original pre-screen | proposed fix | prescreen flags |")
	fmt.Fprintln(w, "|---|---|---:|---|---:|---:|---:|---|")
	// Appropriate refusals are the refusal policy at work, not answers: they get their own
	// total, and so do the off-topic answers, which a pre-screen flags and a judge fails.
	var good, policy, bad, hinted tally
	for _, key := range order {
		t := sets[key]
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %s |\n", t.source, t.label, t.n, t.metric(),
			rate(t, 0), rate(t, 1), rate(t, 2), flagList(t.flags))
		sum := &bad
		switch {
		case t.wantFlag != "":
			sum = &hinted
			sum.wantFlag = t.wantFlag
			for i := range sum.flagged {
				sum.flagged[i] += t.flagged[i]
			}
		case t.label == corpus.LabelAppropriateRefusal:
			sum = &policy
		case t.wantPass:
			sum = &good
		}
		sum.wantPass = t.wantPass
		sum.n += t.n
		sum.cutOff += t.cutOff
		for i := range sum.passed {
			sum.passed[i] += t.passed[i]
		}
	}
	fmt.Fprintf(w, "| **all correct answers** | correct, triage | %d | %s | **%s** | %s | %s | |\n", good.n, metric(true), rate(&good, 0), rate(&good, 1), rate(&good, 2))
	fmt.Fprintf(w, "| **refusals of unsafe requests** | appropriate_refusal | %d | %s | **%s** | %s | %s | |\n", policy.n, metric(false), rate(&policy, 0), rate(&policy, 1), rate(&policy, 2))
	fmt.Fprintf(w, "| **all failures** | | %d | %s | **%s** | %s | %s | |\n", bad.n, metric(false), rate(&bad, 0), rate(&bad, 1), rate(&bad, 2))
	if hinted.n > 0 {
		fmt.Fprintf(w, "| **off-topic answers (a judge fails them)** | off_topic | %d | %s | **%s** | %s | %s | |\n", hinted.n, hinted.metric(), rate(&hinted, 0), rate(&hinted, 1), rate(&hinted, 2))
	}
	return good
}

func metric(wantPass bool) string {
	if wantPass {
		return "pass rate"
	}
	return "detection rate"
}

// metric names what rate measures on the set.
func (t *tally) metric() string {
	if t.wantFlag != "" {
		return "flag rate"
	}
	return metric(t.wantPass)
}

// rate is the pass rate of screen i on a set that should pass, its flag rate on a set that
// should be flagged, its detection rate otherwise.
func rate(t *tally, i int) string {
	if t.n == 0 {
		return "-"
	}
	k := t.passed[i]
	switch {
	case t.wantFlag != "":
		k = t.flagged[i]
	case !t.wantPass:
		k = t.n - k
	}
	return fmt.Sprintf("%.1f%%", 100*float64(k)/float64(t.n))
}

func flagList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func clip(s string, n int) string { return textkit.Clip(textkit.CollapseSpace(s), n) }

// explainCases prints prescreen's score, flags and reason for every case whose id starts
// with prefix.
func explainCases(ctx context.Context, w io.Writer, prefix string) error {
	cases, err := corpus.LoadFound()
	if err != nil {
		return err
	}
	s, err := openPrescreen(ctx, nil)
	if err != nil {
		return err
	}
	defer s.Close(ctx)
	for _, c := range cases {
		if !strings.HasPrefix(c.Run.ID, prefix) {
			continue
		}
		res := s.Score(ctx, c.Run)
		fmt.Fprintf(w, "%s (%s, want pass=%v): %.2f %v\n  %s\n  in:  %q\n  out: %q\n", c.Run.ID, c.Label, c.WantPass, res.Value(), res.Flags, res.Reason, clip(c.Run.Input, 200), clip(c.Run.Output, 300))
	}
	return nil
}

// openPrescreen opens prescreen through a host with config (nil for the defaults).
func openPrescreen(ctx context.Context, config json.RawMessage) (*host.Scorer, error) {
	reg := host.NewRegistry()
	if err := reg.Register(host.Native(heuristic.NewPrescreen), false); err != nil {
		return nil, err
	}
	s, err := host.New(reg).Open(ctx, "prescreen", host.OpenOptions{Config: config})
	if err != nil {
		return nil, fmt.Errorf("open prescreen: %w", err)
	}
	return s, nil
}
