package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// compared lists the scorers Mastra also has, under scorekit's names, in report order.
var compared = []string{"completeness", "content_similarity", "keyword_coverage", "textual_difference", "tone"}

// scoreFile is what score writes and compare reads; the Node side writes the same shape.
type scoreFile struct {
	Side    string                  `json:"side"`
	Scorers map[string]*scorerTimes `json:"scorers"`
}

type scorerTimes struct {
	// Seconds is the wall time of one pass over the runs; CPUSeconds the process's CPU
	// time for it (every thread: garbage collection and compilers included), steadier on a
	// shared machine. Both are averages over the passes timed.
	Seconds    float64    `json:"seconds"`
	CPUSeconds float64    `json:"cpu_seconds"`
	Passes     int        `json:"passes"`
	Scores     []*float64 `json:"scores"`
}

// warmup is how many runs each side scores untimed before the timed loop (JIT, caches).
const warmup = 1000

// batch is how many runs go to a scorer at once, the most the command line's pipeline
// puts in one batch.
const batch = 256

// scoreCmd scores every run with every compared scorer in one runtime and writes the
// timings and scores.
func scoreCmd(args []string) error {
	fs := flag.NewFlagSet("score", flag.ContinueOnError)
	in := fs.String("in", "runs.jsonl", "corpus file")
	out := fs.String("out", "native.json", "file to write")
	runtime := fs.String("runtime", host.RuntimeNative, "where the scorers run: native or wasm")
	plugins := fs.String("plugins", "", "with -runtime wasm: the folder holding the heuristic plugin's manifest")
	only := fs.String("scorers", strings.Join(compared, ","), "comma-separated scorers to time")
	minTime := fs.Duration("min-time", time.Second, "time whole passes over the runs until at least this long")
	sideName := fs.String("side", "", `name of this side in the tables; default "scorekit RUNTIME" (name a build of other code, e.g. "before native")`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	names := strings.Split(*only, ",")
	for _, n := range names {
		if !slices.Contains(compared, n) {
			return fmt.Errorf("score: -scorers: unknown scorer %q; want some of %s", n, strings.Join(compared, ","))
		}
	}
	runs, err := readRuns(*in)
	if err != nil {
		return err
	}
	ctx := context.Background()
	reg, closeReg, err := registry(ctx, *runtime, *plugins)
	if err != nil {
		return err
	}
	defer closeReg()
	h := host.New(reg)
	sruns := make([]sdk.Run, len(runs))
	for i, r := range runs {
		sruns[i] = r.sdkRun()
	}
	if *sideName == "" {
		*sideName = "scorekit " + *runtime
	}
	res := scoreFile{Side: *sideName, Scorers: map[string]*scorerTimes{}}
	for _, name := range names {
		s, err := h.Open(ctx, name, host.OpenOptions{})
		if err != nil {
			return fmt.Errorf("score: %w", err)
		}
		// Runs go to the scorer in batches (host.Scorer.ScoreBatch), as the command line
		// and the service hand them: one guest call per batch under WASM, a loop natively.
		for i := 0; i < min(warmup, len(sruns)); i += batch {
			s.ScoreBatch(ctx, sruns[i:min(i+batch, warmup, len(sruns))])
		}
		scores := make([]*float64, len(sruns))
		passes := 0
		start, cpu := time.Now(), testkit.CPUTime()
		for passes == 0 || time.Since(start) < *minTime {
			for i := 0; i < len(sruns); i += batch {
				for j, got := range s.ScoreBatch(ctx, sruns[i:min(i+batch, len(sruns))]) {
					if got.Status == sdk.StatusScored && passes == 0 {
						v := got.Value()
						scores[i+j] = &v
					}
				}
			}
			passes++
		}
		secs := time.Since(start).Seconds() / float64(passes)
		cpuSecs := (testkit.CPUTime() - cpu).Seconds() / float64(passes)
		if err := s.Close(ctx); err != nil {
			return fmt.Errorf("score: close %s: %w", name, err)
		}
		res.Scorers[name] = &scorerTimes{Seconds: secs, CPUSeconds: cpuSecs, Passes: passes, Scores: scores}
		fmt.Fprintf(os.Stderr, "%s %-20s %8.0f runs/s %8.0f runs/cpu-s (%d passes)\n", res.Side, name, float64(len(sruns))/secs, float64(len(sruns))/cpuSecs, passes)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return os.WriteFile(*out, b, 0o644)
}

// registry returns the heuristic scorers registered in the named runtime and a function
// that releases them. Native links them into this process; a WASM column is one more case
// here that loads the plugin folder's manifest through host/wasm (see BENCHMARKS.md).
func registry(ctx context.Context, runtime, plugins string) (*host.Registry, func(), error) {
	reg := host.NewRegistry()
	switch runtime {
	case host.RuntimeNative:
		for _, f := range heuristic.Factories() {
			if err := reg.Register(host.Native(f), false); err != nil {
				return nil, nil, err
			}
		}
		return reg, func() {}, nil
	case host.RuntimeWASM:
		return wasmRegistry(ctx, reg, plugins)
	}
	return nil, nil, fmt.Errorf("score: runtime %q: want %s", runtime, strings.Join([]string{host.RuntimeNative, host.RuntimeWASM}, " or "))
}
