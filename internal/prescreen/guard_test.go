package prescreen_test

import (
	"context"
	"testing"

	"github.com/scorekit/scorekit/internal/prescreen"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// TestUnanswered: the judge scorers' guard agrees with the pre-screen on error outputs and
// on answers that only talk about an error the input is about (which GrossFailure, reading
// no input, would flag).
func TestUnanswered(t *testing.T) {
	cases := []struct {
		name     string
		run      sdk.Run
		wantFlag string // "" when the run is for the judge
	}{
		{"provider failure", sdk.Run{Input: "Summarize the contract.", Output: "Error code: 429 - Rate limit reached for requests"}, prescreen.FlagErrorText},
		{"stack trace", sdk.Run{Input: "What is the capital of France?", Output: "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\nKeyError: 'x'"}, prescreen.FlagErrorText},
		{"upstream timeout", sdk.Run{Input: "Summarize the attached contract.", Output: "ERROR: upstream timeout"}, prescreen.FlagErrorText},
		{"an error the caller recorded", sdk.Run{Input: "q", Output: "Paris", Metadata: map[string]any{"error": "tool call failed"}}, prescreen.FlagErrorText},
		{"empty", sdk.Run{Input: "q", Output: "  "}, prescreen.FlagEmptyOutput},
		{"a correct short answer", sdk.Run{Input: "What is the capital of France?", Output: "Paris"}, ""},
		{"an answer about the traceback the user pasted", sdk.Run{Input: "My script prints 'Traceback (most recent call last)' and a KeyError. Why?",
			Output: "The traceback (most recent call last) ends in a KeyError: the dict has no key 'x', so check it with 'x' in d first."}, ""},
	}
	screen := heuristic.NewPrescreen()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			flag, detail, ok := prescreen.Unanswered(&c.run)
			if flag != c.wantFlag || ok != (c.wantFlag != "") || ok && detail == "" {
				t.Fatalf("Unanswered = %q, %q, %v; want %q", flag, detail, ok, c.wantFlag)
			}
			res, _ := screen.Score(context.Background(), sdk.Call{Run: c.run})
			if c.wantFlag != "" && !res.HasFlag(c.wantFlag) || c.wantFlag == "" && (res.HasFlag(prescreen.FlagErrorText) || res.HasFlag(prescreen.FlagEmptyOutput)) {
				t.Errorf("the pre-screen's flags %v disagree with the guard's %q", res.Flags, flag)
			}
		})
	}
}

// TestGrossFailure holds the judge's guard to empty outputs and errors, and to nothing else.
func TestGrossFailure(t *testing.T) {
	tests := []struct {
		name     string
		output   string
		metadata map[string]any
		wantFlag string
	}{
		{"empty", "", nil, prescreen.FlagEmptyOutput},
		{"blank", " \n\t", nil, prescreen.FlagEmptyOutput},
		{"provider error", "Error code: 429 - Rate limit reached for requests", nil, prescreen.FlagErrorText},
		{"python traceback", "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: 'x'", nil, prescreen.FlagErrorText},
		{"recorded error", "Paris", map[string]any{"error": "timeout"}, prescreen.FlagErrorText},
		{"answer", "Paris", nil, ""},
		{"refusal is not gross", "I'm sorry, but I can't help with that.", nil, ""},
		{"truncation is not gross", "Paris", map[string]any{"finish_reason": "length"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			flag, ok := prescreen.GrossFailure(tt.output, tt.metadata)
			if ok != (tt.wantFlag != "") || flag != tt.wantFlag {
				t.Errorf("GrossFailure = %q, %v; want %q", flag, ok, tt.wantFlag)
			}
		})
	}
}
