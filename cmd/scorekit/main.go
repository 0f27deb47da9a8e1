// Command scorekit scores what LLM agents did with pluggable scorers. See README.md; to
// build one with scorers of your own linked in, see the package cli.
package main

import "github.com/scorekit/scorekit/cli"

func main() { cli.Main() }
