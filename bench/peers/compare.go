package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
)

// compareCmd prints the side-by-side tables in Markdown: the median speed of each side over
// the rounds run.sh alternated, the ratio of the medians with the range of the per-round
// ratios, and agreement of each scorekit side with Mastra.
//
// Score files are grouped by their side; every file of a side is one round. A scorer timed
// in fewer rounds than others (run.sh times completeness, Mastra's slowest, in the first
// round only) has the median of the rounds it has.
func compareCmd(args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	runsPath := fs.String("runs", "runs.jsonl", "corpus file")
	mastraPaths := fs.String("mastra", "mastra.json", "Mastra's score files, comma-separated, one a round")
	if err := fs.Parse(args); err != nil {
		return err
	}
	runs, err := readRuns(*runsPath)
	if err != nil {
		return err
	}
	mastra, err := readSide(strings.Split(*mastraPaths, ","), len(runs))
	if err != nil {
		return err
	}
	if len(mastra) != 1 {
		return fmt.Errorf("compare: -mastra files hold %d sides, want Mastra's only", len(mastra))
	}
	ours, err := readSide(fs.Args(), len(runs))
	if err != nil {
		return err
	}
	if len(ours) == 0 {
		return fmt.Errorf("compare: no scorekit score files given; pass them after the flags")
	}
	fmt.Println("Wall time (runs per second of the timed passes):")
	fmt.Println()
	printSpeed(runs, mastra[0], ours, false)
	fmt.Println("CPU time of the process (runs per CPU-second; every thread, garbage collection and compilers included):")
	fmt.Println()
	printSpeed(runs, mastra[0], ours, true)
	for _, o := range ours {
		printAgreement(runs, mastra[0], o)
	}
	return nil
}

// side is every round of one side: its score files in the order given.
type side struct {
	name   string
	rounds []*scoreFile
}

// seconds returns the scorer's seconds a pass in each round that timed it: wall time, or
// CPU time when cpu is set.
func (s *side) seconds(name string, cpu bool) []float64 {
	var out []float64
	for _, r := range s.rounds {
		if t := r.Scorers[name]; t != nil {
			if cpu {
				out = append(out, t.CPUSeconds)
			} else {
				out = append(out, t.Seconds)
			}
		}
	}
	return out
}

// scores returns the scorer's per-run scores from the first round that has them.
func (s *side) scores(name string) []*float64 {
	for _, r := range s.rounds {
		if t := r.Scorers[name]; t != nil {
			return t.Scores
		}
	}
	return nil
}

// readSide reads score files and groups them by side, in order of first appearance. Every
// compared scorer must be in some round of each side, and a scorer's scores must be the
// same in every round.
func readSide(paths []string, n int) ([]*side, error) {
	var out []*side
	for _, p := range paths {
		f, err := readScores(p, n)
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(out, func(s *side) bool { return s.name == f.Side })
		if i < 0 {
			out = append(out, &side{name: f.Side})
			i = len(out) - 1
		}
		s := out[i]
		for name, t := range f.Scorers {
			if prev := s.scores(name); prev != nil && !sameScores(prev, t.Scores) {
				return nil, fmt.Errorf("compare %s: %s scores differ between rounds of %s", p, name, f.Side)
			}
		}
		s.rounds = append(s.rounds, f)
	}
	for _, s := range out {
		for _, name := range compared {
			if s.scores(name) == nil {
				return nil, fmt.Errorf("compare: %s has no round with scorer %s", s.name, name)
			}
		}
	}
	return out, nil
}

func sameScores(a, b []*float64) bool {
	return slices.EqualFunc(a, b, func(x, y *float64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) })
}

func readScores(path string, n int) (*scoreFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	var s scoreFile
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("compare %s: %w", path, err)
	}
	if len(s.Scorers) == 0 {
		return nil, fmt.Errorf("compare %s: no scorers", path)
	}
	for name, t := range s.Scorers {
		if !slices.Contains(compared, name) {
			return nil, fmt.Errorf("compare %s: unknown scorer %s", path, name)
		}
		if len(t.Scores) != n {
			return nil, fmt.Errorf("compare %s: scorer %s scored %d runs, want all %d", path, name, len(t.Scores), n)
		}
	}
	return &s, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ratioRange is the lowest and highest ratio of a round of Mastra to a round of ours
// timed in the same round (rounds paired by position).
func ratioRange(m, o []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), 0
	for i := range min(len(m), len(o)) {
		r := m[i] / o[i]
		lo, hi = min(lo, r), max(hi, r)
	}
	return lo, hi
}

func printSpeed(runs []benchRun, mastra *side, ours []*side, cpu bool) {
	n := float64(len(runs))
	unit := " runs/s"
	if cpu {
		unit = " runs/cpu-s"
	}
	head := "| scorer | rounds | " + mastra.name + unit
	sep := "|---|---:|---:"
	for _, o := range ours {
		head += " | " + o.name + unit + " | x Mastra (range)"
		sep += "|---:|---:"
	}
	fmt.Println(head + " |")
	fmt.Println(sep + "|")
	var mTotal float64
	oTotal := make([]float64, len(ours))
	for _, name := range compared {
		ms := mastra.seconds(name, cpu)
		m := median(ms)
		mTotal += m
		row := fmt.Sprintf("| %s | %d | %.0f", name, len(ms), n/m)
		for i, o := range ours {
			osec := o.seconds(name, cpu)
			s := median(osec)
			oTotal[i] += s
			lo, hi := ratioRange(ms, osec)
			row += fmt.Sprintf(" | %.0f | %.1fx (%.1f-%.1f)", n/s, m/s, lo, hi)
		}
		fmt.Println(row + " |")
	}
	row := fmt.Sprintf("| **all five, per run** | | %.0f", n/mTotal)
	for i := range ours {
		row += fmt.Sprintf(" | %.0f | %.1fx", n/oTotal[i], mTotal/oTotal[i])
	}
	fmt.Println(row + " |")
	fmt.Println()
}

// round2 rounds as the host does for a scorer with 2 decimals.
func round2(v float64) float64 { return math.Round(v*100) / 100 }

func printAgreement(runs []benchRun, mastra, ours *side) {
	fmt.Printf("Agreement of %s with %s (Mastra's scores rounded to 2 decimals as the host rounds ours):\n\n", ours.name, mastra.name)
	fmt.Println("| scorer | runs compared | mean abs. difference | within 0.01 | identical | max difference (run) |")
	fmt.Println("|---|---:|---:|---:|---:|---|")
	for _, name := range compared {
		ms, gs := mastra.scores(name), ours.scores(name)
		var sum, worst float64
		within, same, both, worstAt := 0, 0, 0, -1
		for i := range ms {
			if ms[i] == nil || gs[i] == nil {
				continue
			}
			both++
			d := math.Abs(round2(*ms[i]) - *gs[i])
			sum += d
			if d <= 0.01+1e-9 {
				within++
			}
			if d < 1e-9 {
				same++
			}
			if d > worst {
				worst, worstAt = d, i
			}
		}
		where := "-"
		if worstAt >= 0 {
			where = fmt.Sprintf("%.2f (%s)", worst, strings.ReplaceAll(runs[worstAt].ID, "|", "/"))
		}
		div := float64(max(both, 1))
		fmt.Printf("| %s | %d | %.4f | %.1f%% | %.1f%% | %s |\n", name, both, sum/div, 100*float64(within)/div, 100*float64(same)/div, where)
	}
	fmt.Println()
}
