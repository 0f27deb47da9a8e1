package cli_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/scorekit/scorekit/cli"
	"github.com/scorekit/scorekit/sdk"
)

// A scorekit with a scorer of your own linked in scores a run with it. A program's main
// calls cli.Main with the same factories instead.
func ExampleRun() {
	runs := strings.NewReader(`{"id": "loud", "input": "What is the capital of France?", "output": "PARIS"}` + "\n")
	code := cli.Run(context.Background(), []string{"score", "--scorers", "shout", "-"}, runs, os.Stdout, os.Stderr,
		func() sdk.Scorer { return shout{name: "shout"} })
	fmt.Println("exit status", code)
	// Output:
	// SCORER  RUNS  SCORED  MEAN  PASS RATE  FAILED  SKIPPED
	// shout   1     1       1.00  100%       0       0
	//
	// Mean and pass rate count scored results only; failed and skipped runs are never scores of 0.
	// exit status 0
}
