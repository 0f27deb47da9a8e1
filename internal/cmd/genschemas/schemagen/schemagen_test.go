package schemagen

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestGenerateDeterministic guards the sorted-keys promise: two runs give the same bytes.
func TestGenerateDeterministic(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	a, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(root)
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

// TestPassageIsStringOrObject checks the one type mapped by hand.
func TestPassageIsStringOrObject(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Items struct {
				OneOf []struct {
					Type     string   `json:"type"`
					Required []string `json:"required"`
				} `json:"oneOf"`
			} `json:"items"`
		} `json:"properties"`
		AdditionalProperties *bool `json:"additionalProperties"`
	}
	for _, f := range files {
		if f.Name == "run.schema.json" {
			if err := json.Unmarshal(f.Data, &run); err != nil {
				t.Fatal(err)
			}
		}
	}
	alts := run.Properties["context"].Items.OneOf
	if len(alts) != 2 || alts[0].Type != "string" || alts[1].Type != "object" || len(alts[1].Required) != 1 || alts[1].Required[0] != "text" {
		t.Errorf("context items oneOf = %+v, want [string, {id, text} requiring text]", alts)
	}
	if len(run.Required) != 1 || run.Required[0] != "output" {
		t.Errorf("run requires %v, want [output]", run.Required)
	}
	if run.AdditionalProperties != nil && !*run.AdditionalProperties {
		t.Error("run rejects unknown fields; datasets carry extra columns")
	}
}
