package heuristic_test

import (
	"slices"
	"testing"

	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// The cases below are Mastra's published test cases for its code scorers
// (packages/evals/src/scorers/code/*/index.test.ts), with the bounds they assert, plus the
// issue's reference figures. Scores pass through the host, which rounds to 2 decimals.

func TestCompletenessMastraCases(t *testing.T) {
	for _, tc := range []struct {
		name, input, output string
		lo, hi              float64 // lo <= score <= hi
		missing             []string
	}{
		{"identical", "The quick brown fox jumps over the lazy dog", "The quick brown fox jumps over the lazy dog", 1, 1, nil},
		{"simplified", "The quick brown fox jumps over the lazy dog", "The fox jumps over the dog", 0.51, 0.99, []string{"brown", "lazy"}},
		{"different", "The weather is sunny today", "I like to eat pizza", 0, 0.29, nil},
		{"both empty", "", "", 1, 1, nil},
		{"empty input", "", "some text", 0, 0, nil},
		{"white space only", "   \n  ", "  \n  ", 1, 1, nil},
		{"enumeration", "apples, oranges, and bananas", "apples and bananas", 0, 0.79, []string{"oranges"}},
		{"repeated", "cat cat cat cats", "cat cats", 0.71, 1, nil},
		{"paragraphs", "First paragraph about AI.\n Second paragraph about ML.\n Third paragraph about DL.", "First para about AI.\n Second para about ML.", 0.51, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := score(t, heuristic.NewCompleteness, "", sdk.Run{Input: tc.input, Output: tc.output})
			v := value(t, res)
			if v < tc.lo || v > tc.hi {
				t.Fatalf("score %v, want in [%v, %v] (%s)", v, tc.lo, tc.hi, res.Reason)
			}
			missing := []string{}
			for _, m := range stepOutput(t, res)["missing_elements"].([]any) {
				missing = append(missing, m.(string))
			}
			for _, m := range tc.missing {
				if !slices.Contains(missing, m) {
					t.Errorf("missing = %v, want it to contain %q", missing, m)
				}
			}
		})
	}
}

func TestContentSimilarityMastraCases(t *testing.T) {
	for _, tc := range []struct {
		name, config, input, output string
		lo, hi                      float64
	}{
		{"identical", "", "The quick brown fox", "The quick brown fox", 1, 1},
		{"case", "", "The Quick Brown Fox", "the quick brown fox", 1, 1},
		{"white space", "", "The   quick\nbrown    fox", "The quick brown fox", 1, 1},
		{"tabs and newlines", `{"ignore_case": true, "ignore_whitespace": true}`, "The\tquick  brown\n\nfox", "The quick brown fox", 1, 1},
		{"case sensitive", `{"ignore_case": false}`, "The Quick Brown FOX", "the quick brown fox", 0, 0.79},
		{"case sensitive, white space ignored", `{"ignore_case": false, "ignore_whitespace": true}`, "The\tQuick  Brown\n\nFOX", "the quick brown fox", 0, 0.79},
		{"partial (0.7164 in Mastra)", "", "The quick brown fox jumps over the lazy dog", "The quick brown fox runs past the lazy dog", 0.72, 0.72},
		{"different", "", "The quick brown fox", "Lorem ipsum dolor sit amet", 0, 0.29},
		{"both empty", "", "", "", 1, 1},
		{"one empty", "", "The quick brown fox", "", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := value(t, score(t, heuristic.NewContentSimilarity, tc.config, sdk.Run{Input: tc.input, Output: tc.output}))
			if v < tc.lo || v > tc.hi {
				t.Fatalf("score %v, want in [%v, %v]", v, tc.lo, tc.hi)
			}
		})
	}
}

func TestKeywordCoverageMastraCases(t *testing.T) {
	for _, tc := range []struct {
		name, input, output string
		lo, hi              float64
		total               float64 // -1: not checked
	}{
		{"identical", "The quick brown fox jumps over the lazy dog", "The quick brown fox jumps over the lazy dog", 1, 1, 6},
		{"partial", "The quick brown fox jumps over the lazy dog", "A quick brown fox runs past a sleeping cat", 0.31, 0.69, 6},
		{"stop words ignored", "The quick brown fox", "A quick brown fox", 1, 1, 3},
		{"case", "The Quick Brown Fox", "the quick brown fox", 1, 1, 3},
		{"both empty", "", "", 1, 1, -1},
		{"empty output", "The quick brown fox", "", 0, 0, 3},
		{"numbers ignored", "The 123 quick 456 brown fox", "The quick brown fox", 1, 1, 3},
		{"hyphenated", "The quick-brown fox!", "The quick brown fox", 0.5, 0.99, 2},
		{"different", "The quick brown fox jumps over the lazy dog", "Lorem ipsum dolor sit amet", 0, 0, 6},
		{"details", "quick brown fox", "quick brown fox", 1, 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := score(t, heuristic.NewKeywordCoverage, "", sdk.Run{Input: tc.input, Output: tc.output})
			v := value(t, res)
			if v < tc.lo || v > tc.hi {
				t.Fatalf("score %v, want in [%v, %v] (%s)", v, tc.lo, tc.hi, res.Reason)
			}
			if tc.total >= 0 {
				if got := stepOutput(t, res)["total_keywords"]; got != tc.total {
					t.Fatalf("total keywords %v, want %v", got, tc.total)
				}
			}
		})
	}
}

func TestTextualDifferenceMastraCases(t *testing.T) {
	for _, tc := range []struct {
		name, input, output  string
		lo, hi               float64
		changesLo, changesHi float64
		lengthDiff           float64 // -1: not checked
	}{
		{"identical", "The quick brown fox", "The quick brown fox", 1, 1, 0, 0, 0},
		{"one word changed", "The quick brown fox", "The quick brown cat", 0.81, 1, 1, 1, -1},
		{"word added", "The quick brown fox", "The very quick brown fox", 0.71, 1, 1, 1, -1},
		{"word deleted", "The quick brown fox jumps", "The quick fox jumps", 0.71, 1, 1, 1, -1},
		{"many changes", "The quick brown fox jumps over the lazy dog", "The slow black fox runs under the active cat", 0.41, 0.69, 4, 100, -1},
		{"different", "The quick brown fox", "Lorem ipsum dolor sit amet", 0, 0.29, 4, 100, -1},
		{"both empty", "", "", 1, 1, 0, 0, 0},
		{"one empty", "The quick brown fox", "", 0, 0, 1, 100, 1},
		{"case", "The Quick Brown Fox", "the quick brown fox", 0, 0.99, 1, 100, -1},
		{"white space", "The   quick\nbrown    fox", "The quick brown fox", 0, 0.99, 1, 100, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := score(t, heuristic.NewTextualDifference, "", sdk.Run{Input: tc.input, Output: tc.output})
			v := value(t, res)
			if v < tc.lo || v > tc.hi {
				t.Fatalf("score %v, want in [%v, %v]", v, tc.lo, tc.hi)
			}
			step := stepOutput(t, res)
			if c := step["changes"].(float64); c < tc.changesLo || c > tc.changesHi {
				t.Fatalf("changes %v, want in [%v, %v]", c, tc.changesLo, tc.changesHi)
			}
			if tc.lengthDiff >= 0 && step["length_diff"] != tc.lengthDiff {
				t.Fatalf("length_diff %v, want %v", step["length_diff"], tc.lengthDiff)
			}
		})
	}
}

func TestToneMastraCases(t *testing.T) {
	for _, tc := range []struct {
		name, config, input, output string
		lo, hi                      float64
	}{
		// With a reference: Mastra's tests pass the reference as the input.
		{"same sentiment", `{"compare_input": true}`, "I love this amazing product!", "This product is wonderful and fantastic!", 0.91, 1},
		{"opposite sentiment (issue)", `{"compare_input": true}`, "This is excellent and amazing!", "This is terrible and disappointing.", 0, 0.49},
		{"opposite sentiment, reference_tone", `{"reference_tone": "This is excellent and amazing!"}`, "", "This is terrible and disappointing.", 0, 0.49},
		{"neutral", `{"compare_input": true}`, "The sky is blue. The grass is green.", "Trees are tall. Water is wet.", 0.91, 1},
		{"mixed", `{"compare_input": true}`, "The product has great features but some annoying bugs.", "While the interface is beautiful, performance is poor.", 0.71, 1},
		// Stability of the output's own tone.
		{"consistent positive", "", "", "I love this product! It works amazingly well. The features are fantastic.", 0.81, 1},
		{"consistent negative", "", "", "This is terrible. It never works properly. The support is awful.", 0.81, 1},
		{"inconsistent", "", "", "This is amazing! But it has terrible flaws. Yet somehow I love it. Though it frustrates me.", 0, 0.69},
		{"one sentence", "", "", "This is a great product.", 1, 1},
		{"empty", "", "", "", 1, 1},
		{"neutral consistent", "", "", "The sky is blue. The grass is green. The tree is tall.", 0.91, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := value(t, score(t, heuristic.NewTone, tc.config, sdk.Run{Input: tc.input, Output: tc.output}))
			if v < tc.lo || v > tc.hi {
				t.Fatalf("score %v, want in [%v, %v]", v, tc.lo, tc.hi)
			}
		})
	}
}
