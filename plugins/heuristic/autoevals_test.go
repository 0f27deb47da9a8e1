package heuristic_test

import (
	"testing"

	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// Cases in the spirit of autoevals' tests (js/*.test.ts, py/autoevals/test_*.py): the same
// formulas, so the same numbers. Scores pass through the host, which rounds to 2 decimals.

func TestExactMatchCases(t *testing.T) {
	for _, tc := range []struct {
		name, config, output, expected string
		want                           float64
	}{
		{"equal", "", "Paris", "Paris", 1},
		{"case differs", "", "paris", "Paris", 0},
		{"case ignored", `{"ignore_case": true}`, "paris", "Paris", 1},
		{"space differs", "", " Paris\n", "Paris", 0},
		{"space trimmed", `{"trim": true}`, " Paris\n", "Paris", 1},
		{"different", "", "Lyon", "Paris", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := value(t, score(t, heuristic.NewExactMatch, tc.config, sdk.Run{Output: tc.output, Expected: tc.expected}))
			if got != tc.want {
				t.Fatalf("score %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLevenshteinCases(t *testing.T) {
	for _, tc := range []struct {
		name, config, output, expected string
		want                           float64
	}{
		{"one substitution (autoevals)", "", "ab", "ac", 0.5},
		{"equal", "", "kitten", "kitten", 1},
		{"kitten sitting", "", "kitten", "sitting", 0.57}, // 1 - 3/7
		{"disjoint", "", "abc", "xyz", 0},
		{"case", "", "ABC", "abc", 0},
		{"case ignored", `{"ignore_case": true}`, "ABC", "abc", 1},
		{"runes, not bytes", "", "café", "cafe", 0.75},
		{"empty output", "", "", "abcd", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := value(t, score(t, heuristic.NewLevenshtein, tc.config, sdk.Run{Output: tc.output, Expected: tc.expected}))
			if got != tc.want {
				t.Fatalf("score %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNumericDiffCases(t *testing.T) {
	for _, tc := range []struct {
		name, output, expected string
		want                   float64
		status                 sdk.Status
		flag                   string
	}{
		{"1 vs 2 (autoevals)", "1", "2", 0.67, sdk.StatusScored, ""},
		{"equal", "42", "42", 1, sdk.StatusScored, ""},
		{"both zero", "0", "0.0", 1, sdk.StatusScored, ""},
		{"opposite signs", "-1", "1", 0, sdk.StatusScored, ""},
		{"white space", " 3.5\n", "3.5", 1, sdk.StatusScored, ""},
		{"output not a number", "about three", "3", 0, sdk.StatusScored, "not_a_number"},
		{"expected not a number", "3", "three", 0, sdk.StatusSkipped, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := score(t, heuristic.NewNumericDiff, "", sdk.Run{Output: tc.output, Expected: tc.expected})
			if res.Status != tc.status {
				t.Fatalf("status %s (%s), want %s", res.Status, res.Reason, tc.status)
			}
			if tc.status == sdk.StatusScored && res.Value() != tc.want {
				t.Fatalf("score %v, want %v", res.Value(), tc.want)
			}
			if tc.flag != "" && !res.HasFlag(tc.flag) {
				t.Fatalf("flags %v, want %s", res.Flags, tc.flag)
			}
		})
	}
}

func TestJSONValidCases(t *testing.T) {
	const person = `{"schema": {"type": "object", "required": ["name", "age"], "additionalProperties": false,
		"properties": {"name": {"type": "string", "minLength": 1}, "age": {"type": "integer", "minimum": 0},
		"tags": {"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": true}}}}`
	for _, tc := range []struct {
		name, config, output string
		want                 float64
	}{
		{"object", "", `{"a": 1}`, 1},
		{"array", "", `[1, 2, 3]`, 1},
		{"nested, white space", "", " \n{\"a\": {\"b\": [null, true]}}\n", 1},
		{"number is not enough", "", `42`, 0},
		{"string is not enough", "", `"text"`, 0},
		{"truncated", "", `{"a": 1`, 0},
		{"single quotes", "", `{'a': 1}`, 0},
		{"trailing text", "", `{"a": 1} and more`, 0},
		{"prose", "", `Here is the JSON you asked for`, 0},
		{"schema satisfied", person, `{"name": "Ada", "age": 36, "tags": ["a"]}`, 1},
		{"schema missing required", person, `{"name": "Ada"}`, 0},
		{"schema wrong type", person, `{"name": "Ada", "age": "36"}`, 0},
		{"schema not integer", person, `{"name": "Ada", "age": 36.5}`, 0},
		{"schema below minimum", person, `{"name": "Ada", "age": -1}`, 0},
		{"schema extra property", person, `{"name": "Ada", "age": 36, "x": 1}`, 0},
		{"schema enum", person, `{"name": "Ada", "age": 36, "tags": ["c"]}`, 0},
		{"schema unique", person, `{"name": "Ada", "age": 36, "tags": ["a", "a"]}`, 0},
		{"schema empty string", person, `{"name": "", "age": 36}`, 0},
		{"schema scalar allowed", `{"schema": {"type": "number", "maximum": 10}}`, `7`, 1},
		{"schema scalar too big", `{"schema": {"type": "number", "exclusiveMaximum": 7}}`, `7`, 0},
		{"anyOf", `{"schema": {"anyOf": [{"type": "string"}, {"type": "null"}]}}`, `null`, 1},
		{"oneOf both match", `{"schema": {"oneOf": [{"type": "number"}, {"type": "integer"}]}}`, `3`, 0},
		{"not", `{"schema": {"not": {"type": "array"}}}`, `[]`, 0},
		{"pattern", `{"schema": {"type": "string", "pattern": "^P[0-9]$"}}`, `"P1"`, 1},
		{"const", `{"schema": {"const": {"a": [1, 2]}}}`, `{"a": [1, 2.0]}`, 1},
		{"annotations ignored", `{"schema": {"$schema": "http://json-schema.org/draft-07/schema#", "title": "t", "type": "array"}}`, `[]`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := value(t, score(t, heuristic.NewJSONValid, tc.config, sdk.Run{Output: tc.output}))
			if got != tc.want {
				t.Fatalf("score %v, want %v", got, tc.want)
			}
		})
	}
}

func TestListContainsCases(t *testing.T) {
	for _, tc := range []struct {
		name, config, output, expected string
		want                           float64
	}{
		{"same items", "", `["a", "b", "c"]`, `["a", "b", "c"]`, 1},
		{"same items, other order", "", `["c", "a", "b"]`, `["a", "b", "c"]`, 1},
		{"one missing", "", `["a", "b"]`, `["a", "b", "c"]`, 0.67},
		{"one extra", "", `["a", "b", "c"]`, `["a", "b"]`, 0.67},
		{"one extra allowed", `{"allow_extra_entities": true}`, `["a", "b", "c"]`, `["a", "b"]`, 1},
		{"both empty", "", `[]`, `[]`, 1},
		{"output empty", "", `[]`, `["a"]`, 0},
		{"single pair is Levenshtein", "", `["ab"]`, `["ac"]`, 0.5},
		{"near matches pair up", "", `["apple", "banana"]`, `["bananas", "apples"]`, 0.85}, // (5/6 + 6/7) / 2
		{"lines with bullets", "", "- apples\n- bananas", "apples\nbananas", 1},
		{"numbered lines", "", "1. apples\n2) bananas", `["apples", "bananas"]`, 1},
		{"comma separated", "", "apples, bananas", "bananas, apples", 1},
		{"lines format keeps commas", `{"format": "lines"}`, "apples, bananas", "apples, bananas", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := value(t, score(t, heuristic.NewListContains, tc.config, sdk.Run{Output: tc.output, Expected: tc.expected}))
			if got != tc.want {
				t.Fatalf("score %v, want %v", got, tc.want)
			}
		})
	}
}
