package jsonsubset_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/jsonsubset"
)

// TestValidateKeywords holds each keyword's check to its message, in allowed and denied
// pairs: the value that meets the bound passes, the one past it is refused naming the place
// and the bound.
func TestValidateKeywords(t *testing.T) {
	for _, tc := range []struct {
		name, schema, value, want string // want "" : valid
	}{
		{"minProperties allowed", `{"minProperties": 1}`, `{"a": 1}`, ""},
		{"minProperties denied", `{"minProperties": 2}`, `{"a": 1}`, "#: want at least 2 properties"},
		{"maxProperties allowed", `{"maxProperties": 1}`, `{"a": 1}`, ""},
		{"maxProperties denied", `{"maxProperties": 1}`, `{"a": 1, "b": 2}`, "#: want at most 1 properties"},
		{"minItems allowed", `{"minItems": 2}`, `[1, 2]`, ""},
		{"minItems denied", `{"minItems": 2}`, `[1]`, "#: want at least 2 items"},
		{"maxItems allowed", `{"maxItems": 2}`, `[1, 2]`, ""},
		{"maxItems denied", `{"maxItems": 1}`, `[1, 2]`, "#: want at most 1 items"},
		{"minLength allowed", `{"minLength": 2}`, `"éé"`, ""},
		{"minLength denied", `{"minLength": 3}`, `"éé"`, "#: want at least 3 characters"},
		{"maxLength allowed", `{"maxLength": 2}`, `"éé"`, ""},
		{"maxLength denied", `{"maxLength": 1}`, `"éé"`, "#: want at most 1 characters"},
		{"size bounds ignore other types", `{"minLength": 5, "minItems": 5, "minProperties": 5}`, `7`, ""},
		{"minimum allowed", `{"minimum": 1}`, `1`, ""},
		{"minimum denied", `{"minimum": 1}`, `0.5`, "#: 0.5 < minimum 1"},
		{"maximum allowed", `{"maximum": 1}`, `1`, ""},
		{"maximum denied", `{"maximum": 1}`, `2`, "#: 2 > maximum 1"},
		{"exclusiveMinimum allowed", `{"exclusiveMinimum": 1}`, `1.5`, ""},
		{"exclusiveMinimum denied", `{"exclusiveMinimum": 1}`, `1`, "#: 1 <= exclusiveMinimum 1"},
		{"exclusiveMaximum allowed", `{"exclusiveMaximum": 1}`, `0.5`, ""},
		{"exclusiveMaximum denied", `{"exclusiveMaximum": 1}`, `1`, "#: 1 >= exclusiveMaximum 1"},
		{"multipleOf allowed", `{"multipleOf": 0.5}`, `1.5`, ""},
		{"multipleOf denied", `{"multipleOf": 0.5}`, `1.2`, "#: 1.2 is not a multiple of 0.5"},
		{"nested place", `{"properties": {"a": {"items": {"maxLength": 1}}}}`, `{"a": ["x", "yz"]}`, "#/a/1: want at most 1 characters"},
		{"additionalProperties false", `{"properties": {"a": {}}, "additionalProperties": false}`, `{"a": 1, "b": 2}`, `#: property "b" is not allowed`},
		{"required", `{"required": ["a", "b"]}`, `{"a": 1}`, `#: missing required property "b"`},
		{"uniqueItems", `{"uniqueItems": true}`, `[1, 2, 1.0]`, "#: items 0 and 2 are equal"},
		{"pattern", `{"pattern": "^a"}`, `"ba"`, "#: does not match pattern ^a"},
		{"type", `{"type": ["string", "null"]}`, `1`, "#: want type string or null, got integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := jsonsubset.Compile([]byte(tc.schema))
			if err != nil {
				t.Fatalf("Compile(%s): %v", tc.schema, err)
			}
			dec := json.NewDecoder(strings.NewReader(tc.value))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			err = s.Validate(v)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate(%s): %v, want nil", tc.value, err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("Validate(%s): %v, want %q", tc.value, err, tc.want)
			}
		})
	}
}

// TestCompileRefusesBadValues holds each keyword's compile check to its message.
func TestCompileRefusesBadValues(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"minProperties": -1}`, "schema at #/minProperties: want a non-negative integer"},
		{`{"maxItems": 1.5}`, "schema at #/maxItems: want a non-negative integer"},
		{`{"minLength": "3"}`, "schema at #/minLength: want a number"},
		{`{"maxLength": true}`, "schema at #/maxLength: want a number"},
		{`{"minimum": "1"}`, "schema at #/minimum: want a number"},
		{`{"exclusiveMaximum": null}`, "schema at #/exclusiveMaximum: want a number"},
		{`{"multipleOf": 0}`, "schema at #/multipleOf: want a number > 0"},
		{`{"items": {"minItems": -2}}`, "schema at #/items/minItems: want a non-negative integer"},
		{`{"type": "text"}`, `schema at #/type: unknown type "text"`},
		{`{"uniqueItems": 1}`, "schema at #/uniqueItems: want a boolean"},
		{`{"anyOf": []}`, "schema at #/anyOf: want a non-empty array of schemas"},
	} {
		_, err := jsonsubset.Compile([]byte(tc.schema))
		if err == nil || err.Error() != tc.want {
			t.Errorf("Compile(%s): %v, want %q", tc.schema, err, tc.want)
		}
	}
}
