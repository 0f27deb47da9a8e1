package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/sdk"
)

// benchRun is one line of the corpus file: what both sides score.
type benchRun struct {
	ID     string `json:"id"`
	Source string `json:"source"`
	Input  string `json:"input"`
	Output string `json:"output"`
}

// corpusCmd writes the shared data's runs as JSONL.
func corpusCmd(args []string) error {
	fs := flag.NewFlagSet("corpus", flag.ContinueOnError)
	out := fs.String("out", "runs.jsonl", "file to write")
	minRuns := fs.Int("min", 2000, "fail when the corpus has fewer runs")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dir, err := corpus.Dir()
	if err != nil {
		return err
	}
	cases, err := corpus.Load(dir)
	if err != nil {
		return err
	}
	if len(cases) < *minRuns {
		return fmt.Errorf("corpus: %d runs in %s, want at least %d", len(cases), dir, *minRuns)
	}
	f, err := os.Create(*out)
	if err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, c := range cases {
		if err := enc.Encode(benchRun{ID: c.Run.ID, Source: c.Source, Input: c.Run.Input, Output: c.Run.Output}); err != nil {
			f.Close()
			return fmt.Errorf("corpus: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("corpus: %w", err)
	}
	fmt.Fprintf(os.Stderr, "corpus: %d runs from %s -> %s\n", len(cases), dir, *out)
	return f.Close()
}

// readRuns reads a corpus file.
func readRuns(path string) ([]benchRun, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w; write them with: peers corpus -out %s", err, path)
	}
	defer f.Close()
	var runs []benchRun
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r benchRun
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("read runs %s line %d: %w", path, len(runs)+1, err)
		}
		runs = append(runs, r)
	}
	return runs, sc.Err()
}

func (r benchRun) sdkRun() sdk.Run { return sdk.Run{ID: r.ID, Input: r.Input, Output: r.Output} }
