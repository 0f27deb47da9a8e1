package main

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
)

// TestBaselines holds the platform pre-screen to the behaviour ../shared/PEERS.md reports.
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
			if got := originalRelevance(tt.in, tt.out); math.Abs(got-tt.original) > 1e-9 {
				t.Errorf("original = %v, want %v", got, tt.original)
			}
			if got := proposedRelevance(tt.in, tt.out); math.Abs(got-tt.fixed) > 1e-9 {
				t.Errorf("proposed fix = %v, want %v", got, tt.fixed)
			}
		})
	}
}

// TestPrescreenOnCorpus holds prescreen to floors on the shared corpus, so a change that
// starts failing correct answers or stops catching broken runs is noticed. The floors sit
// just under the measured rates in QUALITY.md.
func TestPrescreenOnCorpus(t *testing.T) {
	m, err := measure(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		set  string // source/label
		want float64
	}{
		{"halueval/correct", 0.99},
		{"truthfulqa/correct", 0.99},
		{"ares/correct", 0.99},
		{"email_triage/triage", 1},
		{"ragas_triage/triage", 1},
		{"synthetic_empty/empty", 1},
		{"synthetic_error/error", 1},
		{"xstest_refusal/refusal", 0.6},
		{"ares_off_topic/off_topic", 0.55},
		{"halueval_off_topic/off_topic", 0.12},
		{"coqa/correct", 1},
		{"truthfulqa_off_topic/off_topic", 0.25},
	}
	for _, tt := range tests {
		t.Run(tt.set, func(t *testing.T) {
			s := m.sets[tt.set]
			if s == nil || s.n == 0 {
				t.Fatalf("set %s is missing from the corpus", tt.set)
			}
			k := s.passed[0]
			if !s.wantPass {
				k = s.n - k
			}
			if got := float64(k) / float64(s.n); got < tt.want {
				t.Errorf("%s: %.3f, want >= %.2f (%s)", tt.set, got, tt.want, metric(s.wantPass))
			}
		})
	}
}

func TestReportPrints(t *testing.T) {
	var b bytes.Buffer
	if err := run(context.Background(), &b, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| set | label | N |", "| **all correct answers** |", "| **all failures** |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
