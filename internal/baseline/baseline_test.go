package baseline

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// TestBaselines holds the platform pre-screen to the behaviour its platform reported.
func TestBaselines(t *testing.T) {
	tests := []struct {
		name            string
		in, out         string
		original, fixed float64
	}{
		// The original floors "Paris" at 0.2; the fix lifts it to 0.5 because the class
		// [\*\-\#\:emoji\|] matches the "i" of Paris.
		{"short correct answer", "What is the capital of France?", "Paris", 0.2, 0.5},
		// An empty word set: 0.5 for the original; the fix reads overlap 0.5, and "ok" is
		// "structured" (the class matches its o), so 0.5 + 0.5 x 0.5.
		{"no long input words", "Hi", "ok", 0.5, 0.75},
		// The original's set is {rotate, keys} (api is not longer than 3): both found. The
		// fix's set adds api: overlap 2/3, structured by the o of rotate.
		{"overlap", "rotate api keys", "rotate keys", 1, 0.5 + 0.5*2.0/3},
		// Not structured (no newline, no class character, short): max(overlap, 0.3).
		{"unstructured no overlap", "rotate api keys", "ya", 0.2, 0.3},
		// Over 100 characters: structured, max(0.5, 0.5 + 0.5 x overlap).
		{"long output", "rotate the keys", strings.Repeat("rotate ", 20), 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OriginalRelevance(tt.in, tt.out); math.Abs(got-tt.original) > 1e-9 {
				t.Errorf("original = %v, want %v", got, tt.original)
			}
			if got := ProposedRelevance(tt.in, tt.out); math.Abs(got-tt.fixed) > 1e-9 {
				t.Errorf("proposed fix = %v, want %v", got, tt.fixed)
			}
		})
	}
}

// TestScorerThroughHost scores through the host: the baseline's relevance, and passed
// against FlagBelow, so tests compare it with prescreen on equal terms.
func TestScorerThroughHost(t *testing.T) {
	reg := host.NewRegistry()
	if err := reg.Register(host.Native(New), false); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := host.New(reg).Open(ctx, Name, host.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	tests := []struct {
		name    string
		in, out string
		score   float64
		passed  bool
	}{
		{"Paris floored", "What is the capital of France?", "Paris", 0.2, false},
		{"overlap passes", "rotate api keys", "rotate keys", 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Score(ctx, sdk.Run{Input: tt.in, Output: tt.out})
			if r.Status != sdk.StatusScored || r.Score == nil || r.Passed == nil {
				t.Fatalf("result %+v, want scored with a score and passed", r)
			}
			if math.Abs(*r.Score-tt.score) > 1e-9 || *r.Passed != tt.passed {
				t.Errorf("score %v passed %v, want %v %v", *r.Score, *r.Passed, tt.score, tt.passed)
			}
		})
	}
}
