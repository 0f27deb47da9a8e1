package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/process"
	"github.com/scorekit/scorekit/sdk"
)

// scorerListing is one scorer as `scorers --json` prints it: its Info plus where it runs
// and, for a process plugin, how it is confined; or, for a plugin that failed to load,
// what it was and why it failed.
type scorerListing struct {
	sdk.Info
	Runtime string           `json:"runtime"`
	Sandbox *process.Sandbox `json:"sandbox,omitempty"`
	// Replaced names the plugin that replaced the scorer registered under this name.
	Replaced string `json:"replaced,omitempty"`
	// Error says why the scorer (or, when Name is the plugin's, the whole plugin) is
	// unavailable; Plugin and Manifest say which plugin failed.
	Error    string `json:"error,omitempty"`
	Plugin   string `json:"plugin,omitempty"`
	Manifest string `json:"manifest,omitempty"`
}

// sandboxed is a plugin that says how it is confined (process plugins).
type sandboxed interface{ Sandbox() process.Sandbox }

func (e *env) scorersCommand() *cobra.Command {
	var (
		asJSON  bool
		plugins []string
	)
	cmd := &cobra.Command{
		Use:   "scorers",
		Short: "List the available scorers with what they measure, their scale and needs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, closeReg, err := e.openRegistry(cmd.Context(), "", plugins, process.ConfineAuto)
			if err != nil {
				return err
			}
			defer closeReg(context.WithoutCancel(cmd.Context()))
			list, err := listScorers(reg)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, list)
			}
			return writeScorerText(e.stdout, list, plugins)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of each scorer's Info and runtime")
	pluginDirsFlag(cmd, &plugins)
	cmd.AddCommand(e.publishCommands()...)
	return cmd
}

func listScorers(reg *host.Registry) ([]scorerListing, error) {
	list := make([]scorerListing, 0, len(reg.Names()))
	for _, n := range reg.Names() {
		p, err := reg.Lookup(n)
		if err != nil {
			return nil, err
		}
		replaced, _ := reg.Replaced(n)
		l := scorerListing{Info: p.Info(), Runtime: p.Runtime(), Replaced: replaced}
		if sp, ok := p.(sandboxed); ok {
			sb := sp.Sandbox()
			l.Sandbox = &sb
		}
		list = append(list, l)
	}
	for _, f := range reg.Failures() {
		names := f.Scorers
		if len(names) == 0 {
			names = []string{f.Plugin}
		}
		for _, n := range names {
			list = append(list, scorerListing{Info: sdk.Info{Name: n}, Runtime: f.Runtime, Error: f.Err.Error(), Plugin: f.Plugin, Manifest: f.Manifest})
		}
	}
	return list, nil
}

// writeScorerText prints the listing; plugins are the --plugins it was made with, which
// the commands it prints for a plugin's scorer need too.
func writeScorerText(w io.Writer, list []scorerListing, plugins []string) error {
	bw := bufio.NewWriter(w)
	if len(list) == 0 {
		fmt.Fprintln(bw, "no scorers registered")
	}
	for i, s := range list {
		if i > 0 {
			fmt.Fprintln(bw)
		}
		if s.Error != "" {
			fmt.Fprintf(bw, "%s (unavailable: plugin %s, %s)\n  error: %s\n", s.Name, s.Plugin, s.Manifest, oneLine(s.Error, 400))
			continue
		}
		where := s.Runtime
		if s.Replaced != "" {
			where += ", from plugin " + s.Replaced + ", replacing the built-in of this name"
		}
		fmt.Fprintf(bw, "%s %s (%s)\n", s.Name, s.Version, where)
		if s.Sandbox != nil {
			fmt.Fprintf(bw, "  sandbox: %s\n", s.Sandbox)
		}
		if s.Description != "" {
			fmt.Fprintf(bw, "  %s\n", oneLine(s.Description, 200))
		}
		rng := formatRange(s.Range)
		if s.RangeConfig != "" {
			rng += " (or the config's " + strings.TrimPrefix(s.RangeConfig, "/") + ")"
		}
		fmt.Fprintf(bw, "  range %s, threshold %s\n", rng, num(s.Threshold))
		if len(s.Dimensions) > 0 {
			dims := make([]string, len(s.Dimensions))
			for i, d := range s.Dimensions {
				dims[i] = d.Name + " " + num(d.Weight)
			}
			fmt.Fprintf(bw, "  dimensions: %s\n", strings.Join(dims, ", "))
		}
		caps := "none"
		if len(s.Capabilities) > 0 {
			cs := make([]string, len(s.Capabilities))
			for i, c := range s.Capabilities {
				cs[i] = string(c)
			}
			caps = strings.Join(cs, ", ")
		}
		fmt.Fprintf(bw, "  needs: %s\n", caps)
		if len(s.ConfigSchema) > 0 {
			fmt.Fprintf(bw, "  config: scorekit schema %s%s\n", pluginFlags(s, plugins), s.Name)
		}
	}
	return bw.Flush()
}

// pluginFlags returns the --plugins flags a command about s needs, as shell words ending in
// a space: none for a scorer linked into the command, all of them for a plugin's, which
// exists (or replaces a built-in) only where its plugin is loaded.
func pluginFlags(s scorerListing, plugins []string) string {
	if s.Runtime == host.RuntimeNative && s.Replaced == "" {
		return ""
	}
	var b strings.Builder
	for _, dir := range plugins {
		b.WriteString("--plugins " + shellQuote(dir) + " ")
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain path characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+=:@%,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// formatRange prints a native range; the zero Range means the default 0-1.
func formatRange(r sdk.Range) string {
	if r == (sdk.Range{}) {
		r = sdk.Unit
	}
	return num(r.Min) + "-" + num(r.Max)
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
