// Command apisurface writes API.txt, the listing of the module's public surface: every
// exported name of every package a user may import (not under internal/, not a command),
// with its signature, the exported fields of its structs, the methods of its interfaces and
// the methods of its types. Every name there is a promise to a Go program that embeds
// scorekit, so a change to the surface shows in the diff as a change to API.txt and is
// reviewed as one (RATIONALE.md, "The public face").
//
// It runs through go generate (make generate), and make check-code fails when API.txt is
// stale:
//
//	go generate ./internal/cmd/apisurface
//
// The listing follows the Go distribution's api/*.txt files: one line per name, sorted, so
// the diff of a change names exactly what was added or removed. Types of this module are
// written with their path inside it (sdk.Run, internal/service.Service), other types with
// their import path (net/http.Handler).
package main

//go:generate go run . -out ../../../API.txt

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("out", "", "write the listing to this file (default: standard output)")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "apisurface:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	s, err := Load(".")
	if err != nil {
		return err
	}
	text := s.Listing()
	if out == "" {
		_, err = os.Stdout.WriteString(text)
		return err
	}
	if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
