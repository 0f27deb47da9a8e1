// Command scorekit scores what LLM agents did with pluggable scorers. See README.md.
package main

import (
	"context"
	"os"

	"github.com/scorekit/scorekit/internal/cli"
)

func main() {
	os.Exit(cli.Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
