// Package schemas holds the JSON Schemas (draft 2020-12) of scorekit's contract, generated
// from the sdk's Go types. They are the language-neutral truth for scorer authors who do
// not write Go, and the host validates untrusted bytes against them.
//
// Regenerate them after changing a type in sdk/:
//
//	go generate ./schemas
package schemas

//go:generate go run ../internal/cmd/genschemas

import (
	"embed"
	"fmt"
	"io/fs"
)

// The schema files, by name.
const (
	// Run is a dataset line: unknown fields are tolerated; "output" is required.
	Run = "run.schema.json"
	// Result is what a scorer returns. Strict: unknown fields are errors.
	Result = "result.schema.json"
	// Info is what a scorer declares about itself. Strict.
	Info = "info.schema.json"
	// CompletionRequest is one chat completion a scorer asks the judge broker for. Strict.
	CompletionRequest = "completion_request.schema.json"
	// CompletionResponse is the broker's answer to one CompletionRequest. Strict.
	CompletionResponse = "completion_response.schema.json"
)

// BaseID prefixes the $id of every schema; the file name completes it.
const BaseID = "https://github.com/scorekit/scorekit/schemas/"

//go:embed *.schema.json
var files embed.FS

// Names lists the schema files, sorted.
func Names() []string {
	return []string{CompletionRequest, CompletionResponse, Info, Result, Run}
}

// Get returns the schema called name (one of the constants above).
func Get(name string) ([]byte, error) {
	b, err := files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("schemas: no schema %q (known: %v)", name, Names())
	}
	return b, nil
}

// ID returns the $id of the schema called name.
func ID(name string) string { return BaseID + name }

// FS returns the schema files as a read-only file system.
func FS() fs.FS { return files }
