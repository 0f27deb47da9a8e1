package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
)

// compareCmd prints the side-by-side tables in Markdown: speed of each side and agreement
// of each scorekit side with Mastra.
func compareCmd(args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	runsPath := fs.String("runs", "runs.jsonl", "corpus file")
	mastraPath := fs.String("mastra", "mastra.json", "Mastra's scores")
	if err := fs.Parse(args); err != nil {
		return err
	}
	runs, err := readRuns(*runsPath)
	if err != nil {
		return err
	}
	mastra, err := readScores(*mastraPath, len(runs))
	if err != nil {
		return err
	}
	var ours []*scoreFile
	for _, p := range fs.Args() {
		s, err := readScores(p, len(runs))
		if err != nil {
			return err
		}
		ours = append(ours, s)
	}
	if len(ours) == 0 {
		return fmt.Errorf("compare: no scorekit score files given; pass them after the flags")
	}
	printSpeed(runs, mastra, ours)
	for _, o := range ours {
		printAgreement(runs, mastra, o)
	}
	return nil
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
	for _, name := range compared {
		t := s.Scorers[name]
		if t == nil || len(t.Scores) != n {
			return nil, fmt.Errorf("compare %s: scorer %s missing or not scored on all %d runs", path, name, n)
		}
	}
	return &s, nil
}

func printSpeed(runs []benchRun, mastra *scoreFile, ours []*scoreFile) {
	n := float64(len(runs))
	head := "| scorer | " + mastra.Side + " runs/s"
	sep := "|---|---:"
	for _, o := range ours {
		head += " | " + o.Side + " runs/s | x Mastra"
		sep += "|---:|---:"
	}
	fmt.Println(head + " |")
	fmt.Println(sep + "|")
	var mTotal float64
	oTotal := make([]float64, len(ours))
	for _, name := range compared {
		m := mastra.Scorers[name].Seconds
		mTotal += m
		row := fmt.Sprintf("| %s | %.0f", name, n/m)
		for i, o := range ours {
			s := o.Scorers[name].Seconds
			oTotal[i] += s
			row += fmt.Sprintf(" | %.0f | %.1fx", n/s, m/s)
		}
		fmt.Println(row + " |")
	}
	row := fmt.Sprintf("| **all five, per run** | %.0f", n/mTotal)
	for i := range ours {
		row += fmt.Sprintf(" | %.0f | %.1fx", n/oTotal[i], mTotal/oTotal[i])
	}
	fmt.Println(row + " |")
	fmt.Println()
}

// round2 rounds as the host does for a scorer with 2 decimals.
func round2(v float64) float64 { return math.Round(v*100) / 100 }

func printAgreement(runs []benchRun, mastra, ours *scoreFile) {
	fmt.Printf("Agreement of %s with %s (Mastra's scores rounded to 2 decimals as the host rounds ours):\n\n", ours.Side, mastra.Side)
	fmt.Println("| scorer | runs compared | mean abs. difference | within 0.01 | identical | max difference (run) |")
	fmt.Println("|---|---:|---:|---:|---:|---|")
	for _, name := range compared {
		ms, gs := mastra.Scorers[name].Scores, ours.Scorers[name].Scores
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
