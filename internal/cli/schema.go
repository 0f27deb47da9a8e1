package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/host/process"
	"github.com/scorekit/scorekit/schemas"
)

func (e *env) schemaCommand() *cobra.Command {
	var plugins []string
	cmd := &cobra.Command{
		Use:   "schema [NAME]",
		Short: "Print a JSON schema of the contract (run, result, info ...) or a scorer's config schema",
		Long: `Print a JSON schema. NAME is one of the contract's schemas (run, result, info ...),
or a scorer's name for that scorer's config schema. Without NAME, list the names.
A contract schema wins when a scorer has the same name.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, closeReg, err := e.openRegistry(cmd.Context(), "", plugins, process.ConfineAuto)
			if err != nil {
				return err
			}
			defer closeReg(context.WithoutCancel(cmd.Context()))
			if len(args) == 0 {
				fmt.Fprintf(e.stdout, "contract: %s\nscorer configs: %s\n",
					strings.Join(contractSchemaNames(), ", "), strings.Join(reg.Names(), ", "))
				return nil
			}
			name := args[0]
			if b, ok := contractSchema(name); ok {
				return writeRawJSON(e.stdout, b)
			}
			p, err := reg.Lookup(name)
			if err != nil {
				return fmt.Errorf("schema %q: not a contract schema (%s) nor a scorer (%s)", name,
					strings.Join(contractSchemaNames(), ", "), strings.Join(reg.Names(), ", "))
			}
			info := p.Info()
			if len(info.ConfigSchema) == 0 {
				// A scorer without a schema accepts only an empty config; say so as a schema.
				return writeRawJSON(e.stdout, []byte(`{"type":"object","additionalProperties":false}`))
			}
			return writeRawJSON(e.stdout, info.ConfigSchema)
		},
	}
	pluginDirsFlag(cmd, &plugins)
	return cmd
}

// writeRawJSON prints b indented, so a schema reads the same whichever way it was stored.
func writeRawJSON(w interface{ Write([]byte) (int, error) }, b []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return fmt.Errorf("schema: stored schema is not valid JSON: %w", err)
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}

// contractSchemaNames lists the contract's schemas by short name: "run" for
// run.schema.json.
func contractSchemaNames() []string {
	names := schemas.Names()
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.TrimSuffix(n, schemaSuffix)
	}
	return out
}

const schemaSuffix = ".schema.json"

// contractSchema returns the contract schema called name ("run" or "run.schema.json").
func contractSchema(name string) ([]byte, bool) {
	b, err := schemas.Get(strings.TrimSuffix(name, schemaSuffix) + schemaSuffix)
	return b, err == nil
}
