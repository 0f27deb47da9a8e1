// Command simulate measures the insight engine on simulated streams of prescreen results
// (internal/service/insights/internal/sim): false alarms on correct runs from every public source
// and the seed agents, and the delay to catch breakages of several kinds and rates.
//
//	go run ./internal/service/insights/simulate                  # the tables in QUALITY.md
//	go run ./internal/service/insights/simulate -trials 100 -seed 7
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/scorekit/scorekit/internal/service/insights"
	"github.com/scorekit/scorekit/internal/service/insights/internal/sim"
)

func main() {
	trials := flag.Int("trials", 1000, "streams per healthy source and per breakage")
	horizon := flag.Int("horizon", 150, "runs tracked after a break")
	seed := flag.Uint64("seed", 2025, "random seed")
	window := flag.Int("window", 0, "window in runs (0: the default)")
	flag.Parse()
	if err := run(*trials, *horizon, *seed, insights.Config{Window: *window}); err != nil {
		fmt.Fprintln(os.Stderr, "simulate:", err)
		os.Exit(1)
	}
}

func run(trials, horizon int, seed uint64, cfg insights.Config) error {
	start := time.Now()
	p, err := sim.LoadPools(context.Background())
	if err != nil {
		return err
	}
	c := cfg.WithDefaults()
	fmt.Printf("Insight engine, window %d runs, critical needs %d scored runs; %d trials per row, seed %d.\n\n", c.Window, c.MinScored, trials, seed)
	fmt.Println("## False alarms on correct runs")
	fmt.Println()
	as, err := sim.FalseAlarms(cfg, p, p.Sources, trials, seed)
	if err != nil {
		return err
	}
	sim.WriteAlarms(os.Stdout, as, c.Quality.Warning)
	fmt.Println()
	fmt.Println("## Detection after a break (healthy runs: the seed email-triage agent)")
	fmt.Println()
	var scs []sim.Scenario
	for _, r := range []float64{0.05, 0.10, 0.20, 0.30, 0.50, 1} {
		scs = append(scs, sim.Scenario{Name: "error text or empty", Rate: r, Pool: p.Gross})
	}
	for _, r := range []float64{0.05, 0.10, 0.20, 0.30} {
		scs = append(scs, sim.Scenario{Name: "refusals", Rate: r, Pool: p.Refusals})
	}
	for _, r := range []float64{0.05, 0.10, 0.20, 0.30} {
		scs = append(scs, sim.Scenario{Name: "random low scores", Rate: r, Pool: []insights.Result{p.LowScore()}})
	}
	ds, err := sim.Detect(cfg, p.Healthy["seed_email_triage"], scs, trials, horizon, seed)
	if err != nil {
		return err
	}
	sim.WriteDetections(os.Stdout, ds)
	fmt.Printf("\n%s on %d assessments.\n", time.Since(start).Round(time.Second), countAssessments(as, ds))
	return nil
}

func countAssessments(as []sim.Alarms, ds []sim.Detection) int {
	n := 0
	for _, a := range as {
		n += a.Windows
	}
	for _, d := range ds {
		n += d.Trials * (d.Horizon + 1)
	}
	return n
}
