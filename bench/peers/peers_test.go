package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestScoreAndCompare runs the Go side on a few runs and compares it with a peer file that
// holds the same scores, as run.sh does with Mastra's: every scorer must score every run,
// and compare must accept the files.
func TestScoreAndCompare(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs.jsonl")
	lines := `{"id":"a","input":"What is the capital of France?","output":"Paris is the capital of France."}
{"id":"b","input":"The quick brown fox jumps over the lazy dog","output":"The quick brown fox runs past the lazy dog"}
{"id":"c","input":"","output":""}
`
	if err := os.WriteFile(runs, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	native := filepath.Join(dir, "native.json")
	if err := scoreCmd([]string{"-in", runs, "-out", native, "-min-time", "1ns"}); err != nil {
		t.Fatalf("score: %v", err)
	}
	got, err := readScores(native, 3)
	if err != nil {
		t.Fatalf("read scores: %v", err)
	}
	for _, name := range compared {
		for i, s := range got.Scorers[name].Scores {
			if s == nil {
				t.Errorf("%s did not score run %d", name, i)
			}
		}
	}
	if v := *got.Scorers["content_similarity"].Scores[1]; v != 0.72 {
		t.Errorf("content_similarity of Mastra's partial case = %v, want 0.72", v)
	}
	peer := *got
	peer.Side = "peer"
	b, err := json.Marshal(peer)
	if err != nil {
		t.Fatal(err)
	}
	peerPath := filepath.Join(dir, "peer.json")
	if err := os.WriteFile(peerPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := compareCmd([]string{"-runs", runs, "-mastra", peerPath, native}); err != nil {
		t.Fatalf("compare: %v", err)
	}
	// A second round of the four text scorers on each side, as run.sh alternates them.
	native2 := filepath.Join(dir, "native.2.json")
	if err := scoreCmd([]string{"-in", runs, "-out", native2, "-min-time", "1ns", "-scorers", "content_similarity,keyword_coverage,textual_difference,tone"}); err != nil {
		t.Fatalf("score round 2: %v", err)
	}
	if err := compareCmd([]string{"-runs", runs, "-mastra", peerPath + "," + peerPath, native, native2}); err != nil {
		t.Fatalf("compare two rounds: %v", err)
	}
	// Rounds of one side must agree on every score.
	bad := *got
	bad.Scorers = map[string]*scorerTimes{"tone": {Seconds: 1, Scores: []*float64{ptr(0.5), ptr(0.5), ptr(0.5)}}}
	badPath := filepath.Join(dir, "bad.json")
	if b, err := json.Marshal(bad); err != nil || os.WriteFile(badPath, b, 0o644) != nil {
		t.Fatal("write bad round")
	}
	if err := compareCmd([]string{"-runs", runs, "-mastra", peerPath, native, badPath}); err == nil {
		t.Fatal("compare accepted rounds of one side whose scores differ")
	}
	if err := compareCmd([]string{"-runs", runs, "-mastra", peerPath}); err == nil {
		t.Fatal("compare without scorekit files succeeded")
	}
}

func ptr(v float64) *float64 { return &v }

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
