// Command quality scores the shared labelled corpus with the prescreen scorer through the
// host, next to the platform pre-screen it replaces, and prints a markdown table.
//
//	go run ./internal/cmd/quality          # the table
//	go run ./internal/cmd/quality -misses  # also every case each screen gets wrong
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
)

func main() {
	misses := flag.Bool("misses", false, "list the cases prescreen gets wrong")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *misses); err != nil {
		fmt.Fprintln(os.Stderr, "quality:", err)
		os.Exit(1)
	}
}
