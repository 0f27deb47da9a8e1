package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// Gates turn a score run into a CI verdict: the command exits with [ExitGate] when one
// fails. They look at results the way the table does: a mean counts scored results only,
// and failed results are counted on their own, never as scores of 0.

// gates are the checks a score run must pass.
type gates struct {
	// failUnder maps a scorer to the lowest mean score (normalized, 0-1) it may have.
	failUnder map[string]gateValue
	// maxFailed caps failed results; nil for no cap.
	maxFailed *failedCap
}

// gateValue is a threshold and where it was set, for messages.
type gateValue struct {
	min    float64
	source string // "--fail-under prescreen=0.8" or "config gate.fail_under.prescreen"
}

// failedCap is --max-failed: a count, or a percentage of all results.
type failedCap struct {
	n       int
	percent float64
	isPct   bool
	source  string
}

// gateConfig is the config file's "gate" object.
type gateConfig struct {
	// FailUnder maps a scorer to the lowest mean score (0-1) it may have. Optional.
	FailUnder map[string]float64 `json:"fail_under"`
	// MaxFailed caps failed results: a count (3, "3") or a percentage ("5%"). Optional.
	MaxFailed json.RawMessage `json:"max_failed"`
}

// parseGates merges the config file's gates with the flags (a flag wins per scorer) and
// checks them against the selected scorers.
func parseGates(cfg gateConfig, failUnder []string, maxFailed string, scorers []string) (gates, error) {
	g := gates{failUnder: map[string]gateValue{}}
	for _, name := range slices.Sorted(maps.Keys(cfg.FailUnder)) {
		v := cfg.FailUnder[name]
		src := "config gate.fail_under." + name
		if err := checkThreshold(v, src); err != nil {
			return g, err
		}
		g.failUnder[name] = gateValue{min: v, source: src}
	}
	for _, arg := range failUnder {
		for _, pair := range strings.Split(arg, ",") {
			name, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok || name == "" {
				return g, fmt.Errorf("score: --fail-under %q: want SCORER=MIN, e.g. --fail-under prescreen=0.8", pair)
			}
			v, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return g, fmt.Errorf("score: --fail-under %s: %q is not a number; want a mean score from 0 to 1, e.g. 0.8", pair, val)
			}
			src := "--fail-under " + pair
			if err := checkThreshold(v, src); err != nil {
				return g, err
			}
			g.failUnder[name] = gateValue{min: v, source: src}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(g.failUnder)) {
		if !slices.Contains(scorers, name) {
			return g, fmt.Errorf("score: %s: %s is not among the selected scorers (%s); add it to --scorers or drop the gate",
				g.failUnder[name].source, name, strings.Join(scorers, ", "))
		}
	}
	raw := bytes.TrimSpace(cfg.MaxFailed)
	src := "config gate.max_failed"
	if maxFailed != "" {
		raw, src = []byte(strconv.Quote(maxFailed)), "--max-failed "+maxFailed
	}
	if len(raw) > 0 && string(raw) != "null" {
		text := string(raw)
		if raw[0] == '"' {
			if err := json.Unmarshal(raw, &text); err != nil {
				return g, fmt.Errorf("score: %s: %w", src, err)
			}
		}
		c, err := parseFailedCap(text)
		if err != nil {
			return g, fmt.Errorf("score: %s: %w", src, err)
		}
		c.source = src
		g.maxFailed = c
	}
	return g, nil
}

func checkThreshold(v float64, src string) error {
	if math.IsNaN(v) || v < 0 || v > 1 {
		return fmt.Errorf("score: %s: want a mean score from 0 to 1 (normalized, whatever --scale says)", src)
	}
	return nil
}

// parseFailedCap reads "3" or "5%".
func parseFailedCap(s string) (*failedCap, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > 100 {
			return nil, fmt.Errorf("%q: want a percentage from 0%% to 100%%, e.g. 5%%", s)
		}
		return &failedCap{percent: v, isPct: true}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%q: want a count of failed results (0 or more) or a percentage of all results, e.g. 3 or 5%%", s)
	}
	return &failedCap{n: n}, nil
}

func (g *gates) empty() bool { return len(g.failUnder) == 0 && g.maxFailed == nil }

// tally counts what the gates look at.
type tally struct {
	names   []string
	scored  []int
	sum     []float64
	failed  int
	results int
	// noJudge marks the scorers that need a judge the command does not have: they did
	// not run, so a gate on their mean fails, saying why.
	noJudge []bool
}

func newTally(names []string) *tally {
	return &tally{names: names, scored: make([]int, len(names)), sum: make([]float64, len(names))}
}

func (t *tally) add(l scoredLine) {
	for i, r := range l.results {
		t.results++
		switch r.Status {
		case sdk.StatusScored:
			t.scored[i]++
			t.sum[i] += r.Value()
		case sdk.StatusFailed:
			t.failed++
		}
	}
}

// check reports every gate, passed or not, on w, and returns how many failed. scale is the
// --scale the scores were multiplied by; thresholds are normalized.
func (g *gates) check(t *tally, scale float64, w io.Writer) int {
	failed := 0
	verdict := func(ok bool) string {
		if ok {
			return "passed"
		}
		failed++
		return "FAILED"
	}
	for i, name := range t.names {
		gv, ok := g.failUnder[name]
		if !ok {
			continue
		}
		if i < len(t.noJudge) && t.noJudge[i] {
			fmt.Fprintf(w, "gate %s: %s did not run (it needs an LLM judge and none is configured: pass --judge-url and --judge-model), so no mean to hold to %s: %s\n",
				gv.source, name, num(gv.min), verdict(false))
			continue
		}
		if t.scored[i] == 0 {
			fmt.Fprintf(w, "gate %s: %s has no scored results, so no mean to hold to %s: %s\n",
				gv.source, name, num(gv.min), verdict(false))
			continue
		}
		mean := t.sum[i] / float64(t.scored[i])
		if scale > 0 {
			mean /= scale
		}
		cmp := ">="
		if mean < gv.min {
			cmp = "<"
		}
		fmt.Fprintf(w, "gate %s: mean %.2f over %d scored results %s %s: %s\n",
			gv.source, mean, t.scored[i], cmp, num(gv.min), verdict(mean >= gv.min))
	}
	if c := g.maxFailed; c != nil {
		pct := 0.0
		if t.results > 0 {
			pct = 100 * float64(t.failed) / float64(t.results)
		}
		ok := t.failed <= c.n
		limit := strconv.Itoa(c.n)
		if c.isPct {
			ok, limit = pct <= c.percent, num(c.percent)+"%"
		}
		fmt.Fprintf(w, "gate %s: %d failed of %d results (%.1f%%), at most %s allowed: %s\n",
			c.source, t.failed, t.results, pct, limit, verdict(ok))
	}
	return failed
}
