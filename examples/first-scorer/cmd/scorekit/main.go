// Command scorekit is scorekit's command line with the word_budget scorer linked in.
package main

import (
	"github.com/scorekit/scorekit/cli"
	"github.com/scorekit/scorekit/sdk"

	"example.com/wordbudget"
)

func main() { cli.Main(func() sdk.Scorer { return wordbudget.New() }) }
