// Command peers measures scorekit's deterministic scorers side by side with Mastra's code
// scorers on the same runs: speed (runs per second of the scoring loop) and agreement of the
// scores. bench/peers/run.sh drives it (make bench-peers):
//
//	peers corpus -out runs.jsonl            # the shared data as JSONL runs
//	peers score -in runs.jsonl -out go.json -runtime native
//	peers compare -runs runs.jsonl -mastra mastra.json go.json [wasm.json ...]
//
// Each score file holds, per scorer, the seconds the timed loop took and one score per run
// (null where the scorer did not score), so runtimes and peers compare run by run.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: peers corpus|score|compare [flags]; see bench/peers/run.sh")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "corpus":
		err = corpusCmd(os.Args[2:])
	case "score":
		err = scoreCmd(os.Args[2:])
	case "compare":
		err = compareCmd(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: want corpus, score or compare", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
}
