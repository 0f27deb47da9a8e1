package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/scorekit/scorekit/schemas"
)

// TestSchemasFresh fails when a type in sdk/ changed and schemas/ was not regenerated.
func TestSchemasFresh(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(schemas.Names()) {
		t.Errorf("generator writes %d schemas, package schemas lists %d; keep specs and schemas.Names in step", len(files), len(schemas.Names()))
	}
	for _, f := range files {
		t.Run(f.Name, func(t *testing.T) {
			committed, err := os.ReadFile(filepath.Join(root, "schemas", f.Name))
			if err != nil {
				t.Fatalf("%v; run `go generate ./schemas` (or `make schemas`) and commit the result", err)
			}
			if !bytes.Equal(committed, f.Data) {
				t.Errorf("schemas/%s is stale: the sdk types changed since it was generated; run `go generate ./schemas` (or `make schemas`) and commit the result", f.Name)
			}
			embedded, err := schemas.Get(f.Name)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(embedded, committed) {
				t.Errorf("package schemas embeds a different %s than the file on disk; rebuild", f.Name)
			}
		})
	}
}

// TestGenerateDeterministic guards the sorted-keys promise: two runs give the same bytes.
func TestGenerateDeterministic(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	a, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if !bytes.Equal(a[i].Data, b[i].Data) {
			t.Errorf("%s differs between two runs", a[i].Name)
		}
		if !bytes.HasSuffix(a[i].Data, []byte("}\n")) {
			t.Errorf("%s does not end with a newline", a[i].Name)
		}
	}
}
