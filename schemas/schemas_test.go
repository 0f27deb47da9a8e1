package schemas_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/scorekit/scorekit/internal/cmd/genschemas/schemagen"
	"github.com/scorekit/scorekit/schemas"
)

// TestSchemasFresh fails when a type in sdk/ changed and schemas/ was not regenerated.
func TestSchemasFresh(t *testing.T) {
	root, err := schemagen.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := schemagen.Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
		t.Run(f.Name, func(t *testing.T) {
			committed, err := os.ReadFile(filepath.Join(root, "schemas", f.Name))
			if err != nil {
				t.Fatalf("%v; run `go generate ./schemas` (or `make schemas`) and commit the result", err)
			}
			if !bytes.Equal(committed, f.Data) {
				t.Errorf("schemas/%s is stale: the sdk types changed since it was generated; run `go generate ./schemas` (or `make schemas`) and commit the result", f.Name)
			}
		})
	}
	slices.Sort(names)
	if !slices.Equal(names, schemas.Names()) {
		t.Errorf("the generator writes %v, package schemas lists %v; keep them in step", names, schemas.Names())
	}
}

// TestConfigSchemasFresh fails when a scorer's generated config schema is stale.
func TestConfigSchemasFresh(t *testing.T) {
	root, err := schemagen.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := schemagen.GenerateConfigs(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no config schema generated; plugins/rubric generates one")
	}
	for _, f := range files {
		t.Run(f.Name, func(t *testing.T) {
			committed, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Name)))
			if err != nil {
				t.Fatalf("%v; run `go generate ./schemas` (or `make schemas`) and commit the result", err)
			}
			if !bytes.Equal(committed, f.Data) {
				t.Errorf("%s is stale: its config type changed since it was generated; run `go generate ./schemas` (or `make schemas`) and commit the result", f.Name)
			}
		})
	}
}

func TestSchemas(t *testing.T) {
	files, err := fs.Glob(schemas.FS(), "*.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(files, schemas.Names()) {
		t.Errorf("embedded files %v, Names() %v; keep them in step", files, schemas.Names())
	}
	for _, name := range schemas.Names() {
		t.Run(name, func(t *testing.T) {
			raw, err := schemas.Get(name)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				ID     string `json:"$id"`
				Schema string `json:"$schema"`
			}
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatalf("%s is not JSON: %v; run `go generate ./schemas`", name, err)
			}
			if doc.ID != schemas.ID(name) {
				t.Errorf("$id %q, want %q", doc.ID, schemas.ID(name))
			}
			if doc.Schema != "https://json-schema.org/draft/2020-12/schema" {
				t.Errorf("$schema %q, want draft 2020-12", doc.Schema)
			}
		})
	}
	if _, err := schemas.Get("nope.json"); err == nil {
		t.Error("Get of an unknown name succeeded")
	}
}
