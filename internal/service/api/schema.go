package api

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"gopkg.in/yaml.v3"

	"github.com/scorekit/scorekit/schemas"
)

// RunJSON is a run as the contract's run schema (schemas/run.schema.json) describes it;
// the API document refers to that schema, and huma validates bodies against it.
type RunJSON json.RawMessage

// UnmarshalJSON keeps the run's bytes.
func (r *RunJSON) UnmarshalJSON(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

// MarshalJSON writes the run's bytes.
func (r RunJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// Schema registers the contract's run schema as "Run" and refers to it.
func (RunJSON) Schema(r huma.Registry) *huma.Schema {
	const name = "Run"
	if _, ok := r.Map()[name]; !ok {
		if err := registerContract(r, "run.schema.json", name); err != nil {
			panic(err) // the schema is embedded and tested: this is a build error
		}
	}
	return &huma.Schema{Ref: "#/components/schemas/" + name}
}

// registerContract puts the contract schema file into the registry under name; its
// $defs become name+Def entries.
func registerContract(r huma.Registry, file, name string) error {
	raw, err := schemas.Get(file)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return err
	}
	defs, _ := doc["$defs"].(map[string]any)
	delete(doc, "$defs")
	delete(doc, "$id")
	delete(doc, "$schema")
	rewriteRefs(doc, name)
	for def, v := range defs {
		rewriteRefs(v, name)
		s, err := toSchema(v)
		if err != nil {
			return fmt.Errorf("schema %s: $defs.%s: %w", file, def, err)
		}
		r.Map()[name+def] = s
	}
	s, err := toSchema(doc)
	if err != nil {
		return fmt.Errorf("schema %s: %w", file, err)
	}
	r.Map()[name] = s
	return nil
}

// rewriteRefs points the schema's $defs references at the registry's names, and writes
// {"type": "null"} as {"enum": [null]}: huma's validator knows no "null" type and would
// let anything match it.
func rewriteRefs(v any, name string) {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok {
			if def, ok := strings.CutPrefix(ref, "#/$defs/"); ok {
				x["$ref"] = "#/components/schemas/" + name + def
			}
		}
		if x["type"] == "null" {
			delete(x, "type")
			x["enum"] = []any{nil}
		}
		for _, c := range x {
			rewriteRefs(c, name)
		}
	case []any:
		for _, c := range x {
			rewriteRefs(c, name)
		}
	}
}

// toSchema converts a JSON Schema document to huma's type. It decodes with YAML (JSON is
// YAML) because huma.Schema names its keys in yaml tags only: encoding/json would drop
// "$ref", and a $ref dropped accepts anything.
func toSchema(v any) (*huma.Schema, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var s huma.Schema
	if err := yaml.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	s.PrecomputeMessages()
	return &s, nil
}
