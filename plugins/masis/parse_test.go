package masis

import (
	"reflect"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/sdk"
)

func TestParse(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		name     string
		text     string
		evidence bool
		want     answer
		err      string
	}{
		{
			name:     "the asked shape",
			text:     `{"faithfulness": 0.9, "relevance": 0.8, "completeness": 0.7, "reasoning_quality": 0.6, "overall_score": 0.8, "improvement_suggestions": ["a", "b"]}`,
			evidence: true,
			want:     answer{Scores: map[string]float64{Faithfulness: 0.9, Relevance: 0.8, Completeness: 0.7, ReasoningQuality: 0.6}, Overall: f(0.8), Suggestions: []string{"a", "b"}},
		},
		{
			name:     "aliases, case and numbers as strings",
			text:     `{"Faithfulness": "0.9", "Relevancy": "80%", "completeness": "7/10", "Reasoning": 0.6, "suggestions": "cite more"}`,
			evidence: true,
			want:     answer{Scores: map[string]float64{Faithfulness: 0.9, Relevance: 0.8, Completeness: 0.7, ReasoningQuality: 0.6}, Suggestions: []string{"cite more"}},
		},
		{
			name:     "a 0-100 answer is read as a whole, a 1 on its scale too, and keeps its raw numbers",
			text:     `{"faithfulness": 90, "relevance": 1, "completeness": 0, "reasoning_quality": 60, "overall_score": 1}`,
			evidence: true,
			want: answer{Scores: map[string]float64{Faithfulness: 0.9, Relevance: 0.01, Completeness: 0, ReasoningQuality: 0.6},
				Raw: map[string]float64{Faithfulness: 90, Relevance: 1, Completeness: 0, ReasoningQuality: 60}, Percent: true, Overall: f(0.01)},
		},
		{
			name:     "an answer on 1-10 is ambiguous and fails",
			text:     `{"faithfulness": 8, "relevance": 7, "completeness": 9, "reasoning_quality": 6}`,
			evidence: true,
			err:      "ambiguous",
		},
		{
			name:     "an overall off the answer's scale is dropped",
			text:     `{"faithfulness": 0.9, "relevance": 0.8, "completeness": 0.7, "reasoning_quality": 0.6, "overall_score": 80}`,
			evidence: true,
			want:     answer{Scores: map[string]float64{Faithfulness: 0.9, Relevance: 0.8, Completeness: 0.7, ReasoningQuality: 0.6}},
		},
		{
			name:     "without evidence faithfulness is dropped even when given",
			text:     `{"faithfulness": 0.2, "relevance": 0.8, "completeness": 0.7, "reasoning_quality": 0.6}`,
			evidence: false,
			want:     answer{Scores: map[string]float64{Relevance: 0.8, Completeness: 0.7, ReasoningQuality: 0.6}},
		},
		{
			name:     "suggestions as objects",
			text:     `{"faithfulness": 1, "relevance": 1, "completeness": 1, "reasoning_quality": 1, "improvement_suggestions": [{"suggestion": "shorter"}, "", "  "]}`,
			evidence: true,
			want:     answer{Scores: map[string]float64{Faithfulness: 1, Relevance: 1, Completeness: 1, ReasoningQuality: 1}, Suggestions: []string{"shorter"}},
		},
		{
			name:     "null faithfulness with evidence",
			text:     `{"faithfulness": null, "relevance": 0.8, "completeness": 0.7, "reasoning_quality": 0.6}`,
			evidence: true,
			err:      `no "faithfulness" score`,
		},
		{
			name:     "a negative score",
			text:     `{"faithfulness": -0.1, "relevance": 0.8, "completeness": 0.7, "reasoning_quality": 0.6}`,
			evidence: true,
			err:      `"faithfulness" is unusable`,
		},
		{
			name:     "a word for a score",
			text:     `{"faithfulness": "high", "relevance": 0.8, "completeness": 0.7, "reasoning_quality": 0.6}`,
			evidence: true,
			err:      `"faithfulness" is unusable`,
		},
		{
			name:     "truncated",
			text:     `{"faithfulness": 0.9, "relevance": 0.8, "compl`,
			evidence: true,
			err:      "truncated",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parse(c.text, c.evidence)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.want.Raw == nil {
				c.want.Raw = c.want.Scores // a 0-1 answer is read as written
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("parse\n got  %+v (overall %v)\n want %+v (overall %v)", got, deref(got.Overall), c.want, deref(c.want.Overall))
			}
		})
	}
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

func TestConstraints(t *testing.T) {
	cases := []struct {
		name     string
		audit    sdk.CitationAudit
		evidence bool
		want     []string
	}{
		{
			name:     "clean",
			audit:    sdk.CitationAudit{Citations: 2, Sentences: 2},
			evidence: true,
		},
		{
			name:     "invalid ids",
			audit:    sdk.CitationAudit{Citations: 2, Sentences: 2, InvalidCitations: []string{"3", "doc-9"}, HallucinationDetected: true},
			evidence: true,
			want:     []string{"The answer cites ids that match no evidence passage: [3], [doc-9]. Citing evidence that does not exist is a hallucination. Faithfulness must be at most 0.4."},
		},
		{
			name:     "wrong passage and ten uncited",
			audit:    sdk.CitationAudit{Citations: 1, Sentences: 11, UncitedSentences: 10, UnsupportedCitations: []string{"1: number 1889 ..."}, HallucinationDetected: true},
			evidence: true,
			want: []string{
				"These citations point at a passage that does not contain what the sentence claims (id: finding): 1: number 1889 .... A claim cited to the wrong passage is unsupported. Faithfulness must be at most 0.4.",
				"10 of the answer's 11 claims carry no citation. Faithfulness must be at most 0.3.",
			},
		},
		{
			name:     "no evidence states no cap",
			audit:    sdk.CitationAudit{Citations: 1, Sentences: 1, InvalidCitations: []string{"1"}, HallucinationDetected: true},
			evidence: false,
			want:     []string{"The answer cites ids that match no evidence passage: [1]. Citing evidence that does not exist is a hallucination."},
		},
		{
			name:     "a few uncited",
			audit:    sdk.CitationAudit{Sentences: 3, UncitedSentences: 2},
			evidence: true,
			want:     []string{"2 of the answer's 3 claims carry no citation; judge whether the evidence supports them anyway."},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := constraints(&c.audit, c.evidence); !reflect.DeepEqual(got, c.want) {
				t.Errorf("constraints\n got  %q\n want %q", got, c.want)
			}
		})
	}
}
