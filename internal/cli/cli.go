// Package cli is scorekit's command line: score a JSONL dataset, list the scorers, print
// the contract's JSON schemas, and serve scoring over HTTP.
//
// Every command is built on one [Run] call so that tests drive the real command line with
// in-memory streams and read its exit code.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/abiversion"
	"github.com/scorekit/scorekit/plugins/builtin"
	"github.com/scorekit/scorekit/sdk"
)

// Exit codes.
const (
	// ExitOK: the command did what was asked. Failed or skipped results are not errors.
	ExitOK = 0
	// ExitSetup: a usage or setup error (bad flag, unknown scorer, unreadable config).
	ExitSetup = 1
	// ExitBadInput: at least one dataset line was not a valid run (the others were
	// scored), or the dataset is empty or not JSON Lines.
	ExitBadInput = 2
	// ExitGate: a gate (--fail-under, --max-failed) failed; every line was a valid run.
	ExitGate = 3
	// ExitInterrupted: the command was interrupted (Ctrl-C); what was finished is reported.
	ExitInterrupted = 130
)

// Errors that map to exit codes.
var (
	// errBadInput: a line was invalid, or the dataset cannot be read as JSON Lines.
	errBadInput = errors.New("bad input")
	// errGate: a gate failed.
	errGate = errors.New("gate failed")
	// errInterrupted: the context ended (Ctrl-C) before the work was done.
	errInterrupted = errors.New("interrupted")
)

// env is what a command reads and writes. Tests build one with their own registry.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// registry builds the scorers a command may use.
	registry func() (*host.Registry, error)
	// stderrIsTerminal decides whether a progress bar is drawn.
	stderrIsTerminal bool
}

// Run runs the scorekit command line with args (without the program name) and returns
// the process exit code: [ExitOK], [ExitSetup], [ExitBadInput], [ExitGate] or
// [ExitInterrupted].
//
// The first Ctrl-C ends the work in progress and lets the command report what was
// finished; a second one stops the process at once, as usual.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return RunWith(ctx, nil, args, stdin, stdout, stderr)
}

// RunWith is [Run] with scorers linked in beside the built-ins, running in-process in
// every command: the public package cli builds a scorekit of a user's own with it. A
// scorer that declares no ABIVersion is given this sdk's, as serve.Register does.
func RunWith(ctx context.Context, scorers []func() sdk.Scorer, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	e := &env{
		stdin:            stdin,
		stdout:           stdout,
		stderr:           stderr,
		registry:         registryWith(scorers),
		stderrIsTerminal: isTerminal(stderr),
	}
	return e.run(ctx, args)
}

func (e *env) run(ctx context.Context, args []string) int {
	root := e.rootCommand()
	if args == nil {
		args = []string{} // cobra reads os.Args for nil
	}
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(e.stderr, "scorekit: %v\n", err)
	switch {
	case errors.Is(err, errBadInput):
		return ExitBadInput
	case errors.Is(err, errGate):
		return ExitGate
	case errors.Is(err, errInterrupted):
		return ExitInterrupted
	}
	return ExitSetup
}

func (e *env) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "scorekit",
		Short: "Score what LLM agents did, with pluggable scorers",
		Long: "scorekit grades agent runs (input, output, retrieved context) with scorers that\n" +
			"return a status (scored, skipped, failed), a score in [0, 1] and a reason.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(e.scoreCommand(), e.scorersCommand(), e.schemaCommand(), e.serveCommand(), e.pluginCommand(), e.convertCommand(),
		e.workerCommand(), e.tenantsCommand(), e.keysCommand(), e.runsCommand(), e.evalCommand(), e.insightsCommand(), e.secretKeyCommand())
	agree := e.agreementCommand()
	agree.AddCommand(e.tenantAgreementCommand())
	root.AddCommand(agree, e.labelsCommand())
	root.AddCommand(e.exportCommand(), e.auditCommand())
	return root
}

// builtinRegistry registers every built-in scorer, running in-process.
func builtinRegistry() (*host.Registry, error) { return registryWith(nil)() }

// registryWith returns a func that registers the built-in scorers and then scorers, all
// running in-process. A linked-in scorer takes no built-in's name: the command would
// otherwise run a different scorer than the one its name documents.
func registryWith(scorers []func() sdk.Scorer) func() (*host.Registry, error) {
	return func() (*host.Registry, error) {
		reg := host.NewRegistry()
		for _, f := range builtin.Factories() {
			if err := reg.Register(host.Native(f), false); err != nil {
				return nil, fmt.Errorf("register built-in scorers: %w", err)
			}
		}
		for _, f := range scorers {
			f = abiversion.Fill(f)
			name := f().Info().Name
			if err := reg.Register(host.Native(f), false); err != nil {
				if errors.Is(err, host.ErrDuplicate) {
					return nil, fmt.Errorf("register the linked-in scorer %s: %w: a built-in or another linked-in scorer has that name; give yours another name in its Info", name, err)
				}
				return nil, fmt.Errorf("register the linked-in scorer %q: %w", name, err)
			}
		}
		return reg, nil
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newTable returns a writer that aligns tab-separated columns two spaces apart: the layout
// of every table the commands print.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// writeTable prints a table of tab-separated rows under a blank line, its title and its
// header; nothing when there is no row.
func writeTable(w io.Writer, title, header string, rows []string) error {
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\n"+title)
	tw := newTable(w)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintln(tw, r)
	}
	return tw.Flush()
}
