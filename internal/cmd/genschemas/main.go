// Command genschemas writes the JSON Schemas under schemas/ from the sdk's Go types, and
// the config schemas of the built-in scorers that generate theirs (plugins/rubric). Run it
// through go generate from the module root:
//
//	go generate ./schemas
//
// The output is deterministic (sorted keys, two-space indent, trailing newline), so a test
// can regenerate the files in memory and fail when the committed ones are stale.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/scorekit/scorekit/internal/cmd/genschemas/schemagen"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "genschemas:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := schemagen.ModuleRoot()
	if err != nil {
		return err
	}
	files, err := schemagen.Generate(root)
	if err != nil {
		return err
	}
	for _, f := range files {
		path := filepath.Join(root, "schemas", f.Name)
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	configs, err := schemagen.GenerateConfigs(root)
	if err != nil {
		return err
	}
	for _, f := range configs {
		path := filepath.Join(root, filepath.FromSlash(f.Name))
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}
