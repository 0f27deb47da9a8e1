// Command quality scores the shared labelled corpus with the prescreen scorer through the
// host, next to the platform pre-screen it replaces, and prints a markdown table.
//
//	go run ./internal/cmd/quality          # the table
//	go run ./internal/cmd/quality -misses  # also every case each screen gets wrong
//	go run ./internal/cmd/quality -loso    # also leave-one-source-out threshold figures
//	go run ./internal/cmd/quality -explain ID-PREFIX  # prescreen's reason for some cases
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
)

func main() {
	misses := flag.Bool("misses", false, "list the cases prescreen gets wrong")
	loso := flag.Bool("loso", false, "also tune each threshold without each source and measure the source (slower)")
	explain := flag.String("explain", "", "print prescreen's result for the cases whose id starts with this prefix, then exit")
	flag.Parse()
	if *explain != "" {
		if err := explainCases(context.Background(), os.Stdout, *explain); err != nil {
			fmt.Fprintln(os.Stderr, "quality:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(context.Background(), os.Stdout, *misses, *loso); err != nil {
		fmt.Fprintln(os.Stderr, "quality:", err)
		os.Exit(1)
	}
}
