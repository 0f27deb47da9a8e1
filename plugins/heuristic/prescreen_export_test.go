package heuristic_test

import (
	"context"
	"testing"

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
		{"provider failure", sdk.Run{Input: "Summarize the contract.", Output: "Error code: 429 - Rate limit reached for requests"}, heuristic.FlagErrorText},
		{"stack trace", sdk.Run{Input: "What is the capital of France?", Output: "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\nKeyError: 'x'"}, heuristic.FlagErrorText},
		{"upstream timeout", sdk.Run{Input: "Summarize the attached contract.", Output: "ERROR: upstream timeout"}, heuristic.FlagErrorText},
		{"an error the caller recorded", sdk.Run{Input: "q", Output: "Paris", Metadata: map[string]any{"error": "tool call failed"}}, heuristic.FlagErrorText},
		{"empty", sdk.Run{Input: "q", Output: "  "}, heuristic.FlagEmptyOutput},
		{"a correct short answer", sdk.Run{Input: "What is the capital of France?", Output: "Paris"}, ""},
		{"an answer about the traceback the user pasted", sdk.Run{Input: "My script prints 'Traceback (most recent call last)' and a KeyError. Why?",
			Output: "The traceback (most recent call last) ends in a KeyError: the dict has no key 'x', so check it with 'x' in d first."}, ""},
	}
	screen := heuristic.NewPrescreen()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			flag, detail, ok := heuristic.Unanswered(&c.run)
			if flag != c.wantFlag || ok != (c.wantFlag != "") || ok && detail == "" {
				t.Fatalf("Unanswered = %q, %q, %v; want %q", flag, detail, ok, c.wantFlag)
			}
			res, _ := screen.Score(context.Background(), sdk.Call{Run: c.run})
			if c.wantFlag != "" && !res.HasFlag(c.wantFlag) || c.wantFlag == "" && (res.HasFlag(heuristic.FlagErrorText) || res.HasFlag(heuristic.FlagEmptyOutput)) {
				t.Errorf("the pre-screen's flags %v disagree with the guard's %q", res.Flags, flag)
			}
		})
	}
}
