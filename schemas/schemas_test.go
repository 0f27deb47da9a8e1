package schemas_test

import (
	"encoding/json"
	"io/fs"
	"slices"
	"testing"

	"github.com/scorekit/scorekit/schemas"
)

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
