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
// and, for a process plugin, how it is confined.
type scorerListing struct {
	sdk.Info
	Runtime string           `json:"runtime"`
	Sandbox *process.Sandbox `json:"sandbox,omitempty"`
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
			reg, closeReg, err := e.openRegistry(cmd.Context(), "", plugins)
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
			return writeScorerText(e.stdout, list)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of each scorer's Info and runtime")
	pluginDirsFlag(cmd, &plugins)
	return cmd
}

func listScorers(reg *host.Registry) ([]scorerListing, error) {
	list := make([]scorerListing, 0, len(reg.Names()))
	for _, n := range reg.Names() {
		p, err := reg.Lookup(n)
		if err != nil {
			return nil, err
		}
		l := scorerListing{Info: p.Info(), Runtime: p.Runtime()}
		if sp, ok := p.(sandboxed); ok {
			sb := sp.Sandbox()
			l.Sandbox = &sb
		}
		list = append(list, l)
	}
	return list, nil
}

func writeScorerText(w io.Writer, list []scorerListing) error {
	bw := bufio.NewWriter(w)
	if len(list) == 0 {
		fmt.Fprintln(bw, "no scorers registered")
	}
	for i, s := range list {
		if i > 0 {
			fmt.Fprintln(bw)
		}
		fmt.Fprintf(bw, "%s %s (%s)\n", s.Name, s.Version, s.Runtime)
		if s.Sandbox != nil {
			fmt.Fprintf(bw, "  sandbox: %s\n", s.Sandbox)
		}
		if s.Description != "" {
			fmt.Fprintf(bw, "  %s\n", oneLine(s.Description, 200))
		}
		fmt.Fprintf(bw, "  range %s, threshold %s\n", formatRange(s.Range), num(s.Threshold))
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
			fmt.Fprintf(bw, "  config: scorekit schema %s\n", s.Name)
		}
	}
	return bw.Flush()
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
