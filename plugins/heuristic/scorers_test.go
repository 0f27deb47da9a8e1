package heuristic_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// open registers f natively in a fresh host and opens it with config.
func open(t testing.TB, f func() sdk.Scorer, config string) (*host.Scorer, error) {
	t.Helper()
	reg := host.NewRegistry()
	if err := reg.Register(host.Native(f), false); err != nil {
		t.Fatalf("register: %v", err)
	}
	h := host.New(reg)
	var raw json.RawMessage
	if config != "" {
		raw = json.RawMessage(config)
	}
	return h.Open(context.Background(), f().Info().Name, host.OpenOptions{Config: raw})
}

// score runs one run through the host pipeline and fails the test on an open error.
func score(t testing.TB, f func() sdk.Scorer, config string, run sdk.Run) sdk.Result {
	t.Helper()
	s, err := open(t, f, config)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return s.Score(context.Background(), run)
}

// value returns the result's score, failing unless it is scored.
func value(t testing.TB, res sdk.Result) float64 {
	t.Helper()
	if res.Status != sdk.StatusScored {
		t.Fatalf("status %s (%s), want scored", res.Status, res.Reason)
	}
	return res.Value()
}

// stepOutput decodes the output of the result's only step.
func stepOutput(t testing.TB, res sdk.Result) map[string]any {
	t.Helper()
	if len(res.Steps) != 1 {
		t.Fatalf("steps = %d, want 1", len(res.Steps))
	}
	var m map[string]any
	if err := json.Unmarshal(res.Steps[0].Output, &m); err != nil {
		t.Fatalf("step output: %v", err)
	}
	return m
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestFactoriesRegisterEveryScorer(t *testing.T) {
	reg := host.NewRegistry()
	for _, f := range heuristic.Factories() {
		if err := reg.Register(host.Native(f), false); err != nil {
			t.Fatalf("register: %v", err)
		}
	}
	names := strings.Join(reg.Names(), " ")
	for _, want := range []string{"completeness", "content_similarity", "keyword_coverage", "textual_difference", "tone",
		"exact_match", "levenshtein", "numeric_diff", "json_valid", "list_contains"} {
		if !strings.Contains(" "+names+" ", " "+want+" ") {
			t.Errorf("Factories lacks %s (have %s)", want, names)
		}
	}
}

// TestConfigRejected: every configurable scorer refuses an unknown field and a mistyped
// one at Open, before any run is scored.
func TestConfigRejected(t *testing.T) {
	for _, tc := range []struct {
		name   string
		f      func() sdk.Scorer
		config string
	}{
		{"content_similarity unknown", heuristic.NewContentSimilarity, `{"ignore_cases": true}`},
		{"content_similarity mistyped", heuristic.NewContentSimilarity, `{"ignore_case": "yes"}`},
		{"tone unknown", heuristic.NewTone, `{"tone": "happy"}`},
		{"tone both references", heuristic.NewTone, `{"reference_tone": "great", "compare_input": true}`},
		{"exact_match expected_from", heuristic.NewExactMatch, `{"expected_from": "somewhere"}`},
		{"levenshtein unknown", heuristic.NewLevenshtein, `{"case": false}`},
		{"numeric_diff unknown", heuristic.NewNumericDiff, `{"tolerance": 0.1}`},
		{"list_contains format", heuristic.NewListContains, `{"format": "csv"}`},
		{"json_valid unsupported keyword", heuristic.NewJSONValid, `{"schema": {"type": "object", "properties": {"a": {"$ref": "#/x"}}}}`},
		{"json_valid format keyword", heuristic.NewJSONValid, `{"schema": {"type": "string", "format": "email"}}`},
		{"json_valid bad pattern", heuristic.NewJSONValid, `{"schema": {"pattern": "("}}`},
		{"completeness takes no config", heuristic.NewCompleteness, `{"threshold": 1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := open(t, tc.f, tc.config); err == nil {
				t.Fatalf("Open accepted %s", tc.config)
			}
		})
	}
}

func TestUnsupportedSchemaKeywordNamed(t *testing.T) {
	_, err := open(t, heuristic.NewJSONValid, `{"schema": {"type": "object", "properties": {"a": {"$ref": "#/x"}}}}`)
	if err == nil || !strings.Contains(err.Error(), `"$ref"`) || !strings.Contains(err.Error(), "#/properties/a") {
		t.Fatalf("err = %v, want it to name $ref and where it is", err)
	}
}

// TestExpectedAbsentSkips: autoevals-style scorers skip a run without a reference and say
// how to give one; they never score it 0.
func TestExpectedAbsentSkips(t *testing.T) {
	for _, f := range []func() sdk.Scorer{heuristic.NewExactMatch, heuristic.NewLevenshtein, heuristic.NewNumericDiff, heuristic.NewListContains} {
		name := f().Info().Name
		t.Run(name, func(t *testing.T) {
			res := score(t, f, "", sdk.Run{Input: "q", Output: "a"})
			if res.Status != sdk.StatusSkipped || !strings.Contains(res.Reason, "expected") {
				t.Fatalf("status %s reason %q, want skipped naming expected", res.Status, res.Reason)
			}
		})
	}
}

func TestExpectedFrom(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config string
		run    sdk.Run
		want   float64
		status sdk.Status
	}{
		{"input", `{"expected_from": "input"}`, sdk.Run{Input: "Paris", Output: "Paris"}, 1, sdk.StatusScored},
		{"metadata string", `{"expected_from": "metadata.gold"}`, sdk.Run{Output: "Paris", Metadata: map[string]any{"gold": "Paris"}}, 1, sdk.StatusScored},
		{"metadata number", `{"expected_from": "metadata.gold"}`, sdk.Run{Output: "42", Metadata: map[string]any{"gold": 42.0}}, 1, sdk.StatusScored},
		{"metadata absent", `{"expected_from": "metadata.gold"}`, sdk.Run{Output: "Paris"}, 0, sdk.StatusSkipped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := score(t, heuristic.NewExactMatch, tc.config, tc.run)
			if res.Status != tc.status {
				t.Fatalf("status %s (%s), want %s", res.Status, res.Reason, tc.status)
			}
			if tc.status == sdk.StatusScored && res.Value() != tc.want {
				t.Fatalf("score %v, want %v", res.Value(), tc.want)
			}
		})
	}
}

func TestOpenErrorsWrapInvalidConfig(t *testing.T) {
	_, err := open(t, heuristic.NewTone, `{"reference_tone": 3}`)
	if !errors.Is(err, host.ErrInvalidConfig) {
		t.Fatalf("err = %v, want ErrInvalidConfig", err)
	}
}
