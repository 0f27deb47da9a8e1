// Package cli is the scorekit command line as a library: a `scorekit` of your own, with
// Go scorers of your own linked in beside the built-ins. Every command (score, scorers,
// schema, serve, eval ...) sees them, running natively in the command's process. Its main
// package is imports and one call:
//
//	package main
//
//	import (
//		"github.com/scorekit/scorekit/cli"
//		"github.com/scorekit/scorekit/sdk"
//
//		"example.com/wordbudget"
//	)
//
//	func main() { cli.Main(func() sdk.Scorer { return wordbudget.New() }) }
//
// Linking in is one of three ways to add a scorer (docs/FIRST-SCORER.md): the same
// scorer built as a WASM module runs sandboxed, and as a process plugin out of process,
// both loaded by the stock command with --plugins DIR and no rebuild. Link a scorer in when
// it is yours and trusted: it runs unconfined, at native speed, and a new version needs a
// new build of the command.
package cli

import (
	"context"
	"io"
	"os"

	"github.com/scorekit/scorekit/host/wasm"
	internal "github.com/scorekit/scorekit/internal/cli"
	"github.com/scorekit/scorekit/sdk"
)

// Exit statuses of [Main] and [Run].
const (
	// ExitOK: the command did what was asked. Failed or skipped results are not errors.
	ExitOK = internal.ExitOK
	// ExitSetup: a usage or setup error (a bad flag, an unknown scorer, a config that does
	// not validate, a linked-in scorer whose name is taken).
	ExitSetup = internal.ExitSetup
	// ExitBadInput: a dataset line was not a valid run, or the dataset is not JSON Lines.
	ExitBadInput = internal.ExitBadInput
	// ExitGate: a gate (--fail-under, --max-failed) failed.
	ExitGate = internal.ExitGate
	// ExitInterrupted: the command was interrupted (Ctrl-C); what was finished is reported.
	ExitInterrupted = internal.ExitInterrupted
)

// Main runs the scorekit command line on the program's arguments with the built-in
// scorers and scorers, and exits with its status. Each factory returns a fresh scorer; a
// scorer whose Info leaves ABIVersion at 0 is given this sdk's, as serve.Register does. A
// scorer whose name a built-in or another scorer has is a setup error (exit status 1) that
// says so.
//
// When the program was started as the child of a module's check (the evaluation service
// vets a module a tenant publishes in a child process of this program, host/wasm's Vet),
// Main does only that check: it is the program's hook for [wasm.VetChild].
func Main(scorers ...func() sdk.Scorer) {
	if code, ok := wasm.VetChild(); ok {
		os.Exit(code)
	}
	os.Exit(Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, scorers...))
}

// Run is [Main] for tests and for programs that do more than run the command: it runs the
// command line with args (without the program name) and returns the exit status. The
// first Ctrl-C (SIGINT or SIGTERM) ends the work in progress and lets the command report
// what was finished.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, scorers ...func() sdk.Scorer) int {
	return internal.RunWith(ctx, scorers, args, stdin, stdout, stderr)
}
