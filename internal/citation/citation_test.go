package citation

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/sdk"
)

// eiffel is the context of the shared citation-faithfulness cases.
var eiffel = []sdk.Passage{
	{ID: "1", Text: "The Eiffel Tower stands 330 metres tall in Paris."},
	{ID: "2", Text: "The Eiffel Tower was completed in 1889 for the World Fair."},
}

// TestSharedCases runs testdata/deepeval/citation_faithfulness_cases.json (repository root): a case
// expected to score 0 must be caught as a hallucination, one expected to score 1 must be
// clean.
func TestSharedCases(t *testing.T) {
	const path = "../../testdata/deepeval/citation_faithfulness_cases.json"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read the citation cases (the repository's testdata/): %v", err)
	}
	var file struct {
		Context []string `json:"retrieval_context"`
		Cases   []struct {
			Output        string  `json:"actual_output"`
			ExpectedScore float64 `json:"expected_score"`
			Why           string  `json:"why"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) == 0 {
		t.Fatal("no cases in " + path)
	}
	run := sdk.Run{}
	for _, c := range file.Context {
		run.Context = append(run.Context, sdk.Passage{Text: c})
	}
	run.NumberContext()
	for _, c := range file.Cases {
		t.Run(c.Output, func(t *testing.T) {
			a, ok := Audit(c.Output, run.Context)
			if !ok {
				t.Fatal("ok=false for a cited output with context")
			}
			wantBad := c.ExpectedScore < 0.5
			if a.HallucinationDetected != wantBad {
				t.Errorf("hallucination_detected = %v, want %v (%s); audit %+v", a.HallucinationDetected, wantBad, c.Why, a)
			}
			if !wantBad && (a.UncitedSentences != 0 || len(a.InvalidCitations) != 0) {
				t.Errorf("clean case has findings: %+v", a)
			}
		})
	}
}

func TestAudit(t *testing.T) {
	named := []sdk.Passage{
		{ID: "doc-1", Text: "Water boils at 100 degrees Celsius at sea level."},
		{ID: "doc-2", Text: "Mount Everest is 8,849 metres high and lies in Nepal."},
		{ID: "doc-3", Text: "The Amazon river flows through Brazil and Peru."},
	}
	unnamed := []sdk.Passage{{Text: "alpha"}, {Text: "beta"}, {Text: "gamma"}, {Text: "delta"}}
	cases := []struct {
		name   string
		output string
		ctx    []sdk.Passage
		want   sdk.CitationAudit
		ok     bool
	}{
		{
			name:   "nothing to audit: no marker, no context",
			output: "Paris is the capital of France.",
			ok:     false,
		},
		{
			name:   "context but no marker: every claim is uncited",
			output: "The Eiffel Tower is 330 metres tall. It was completed in 1889.",
			ctx:    eiffel,
			want:   sdk.CitationAudit{Sentences: 2, UncitedSentences: 2},
			ok:     true,
		},
		{
			name:   "marker but no context: the id is invalid",
			output: "The tower is 330 metres tall [1].",
			want:   sdk.CitationAudit{Citations: 1, Sentences: 1, InvalidCitations: []string{"1"}, HallucinationDetected: true},
			ok:     true,
		},
		{
			name:   "a true claim cited to the wrong passage",
			output: "The Eiffel Tower was completed in 1889 [1].",
			ctx:    eiffel,
			want: sdk.CitationAudit{Citations: 1, Sentences: 1, HallucinationDetected: true,
				UnsupportedCitations: []string{"1: number 1889 is not in the cited passage but is in passage 2"}},
			ok: true,
		},
		{
			name:   "swapped citations inside one sentence",
			output: "The Eiffel Tower is 330 metres tall [2] and was completed in 1889 [1].",
			ctx:    eiffel,
			want: sdk.CitationAudit{Citations: 2, Sentences: 1, HallucinationDetected: true, UnsupportedCitations: []string{
				"2: number 330 is not in the cited passage but is in passage 1",
				"1: number 1889 is not in the cited passage but is in passage 2"}},
			ok: true,
		},
		{
			name:   "a name only the uncited passage has",
			output: "The Eiffel Tower was built for the World Fair [1].",
			ctx:    eiffel,
			want: sdk.CitationAudit{Citations: 1, Sentences: 1, HallucinationDetected: true,
				UnsupportedCitations: []string{`1: name world is not in the cited passage but is in passage 2`}},
			ok: true,
		},
		{
			name:   "a cited passage that shares nothing with the sentence",
			output: "Mount Everest is the highest mountain in Nepal [doc-2][doc-3].",
			ctx:    named,
			want: sdk.CitationAudit{Citations: 2, Sentences: 1, HallucinationDetected: true,
				UnsupportedCitations: []string{`doc-3: passage doc-3 shares no content word with "Mount Everest is the highest mountain in Nepal."`}},
			ok: true,
		},
		{
			name:   "an incidental name from another passage next to a supported one is not flagged",
			output: "The Eiffel Tower in Paris was completed in 1889 [2].",
			ctx:    eiffel,
			want:   sdk.CitationAudit{Citations: 1, Sentences: 1},
			ok:     true,
		},
		{
			name:   "a number found nowhere is not called unsupported (it may be derived)",
			output: "Everest is 8,849 metres, about 29,032 feet, high [doc-2].",
			ctx:    named,
			want:   sdk.CitationAudit{Citations: 1, Sentences: 1},
			ok:     true,
		},
		{
			name:   "list, range and prefixed ids",
			output: "Water boils at 100 degrees [Source 1]. Everest lies in Nepal [doc-2]. Water, Everest and the Amazon are natural features [1-3].",
			ctx:    named,
			want:   sdk.CitationAudit{Citations: 5, Sentences: 3},
			ok:     true,
		},
		{
			name:   "positional ids when every passage is named",
			output: "Alpha comes first [1]. Delta comes last [4]. Epsilon is missing [5].",
			ctx:    []sdk.Passage{{ID: "a", Text: "alpha comes first"}, {ID: "b", Text: "beta"}, {ID: "c", Text: "gamma"}, {ID: "d", Text: "delta comes last"}},
			want:   sdk.CitationAudit{Citations: 3, Sentences: 3, InvalidCitations: []string{"5"}, HallucinationDetected: true},
			ok:     true,
		},
		{
			name:   "no positional ids when passages have numeric ids",
			output: "Everest lies in Nepal [2].",
			ctx:    []sdk.Passage{{ID: "7", Text: "Everest lies in Nepal."}, {ID: "8", Text: "Nepal is in Asia."}},
			want:   sdk.CitationAudit{Citations: 1, Sentences: 1, InvalidCitations: []string{"2"}, HallucinationDetected: true},
			ok:     true,
		},
		{
			name:   "fullwidth and footnote markers",
			output: "Water boils at 100 degrees【1†source】. Everest is in Nepal[^e].\n\n[^e]: See doc-2.",
			ctx:    []sdk.Passage{{ID: "1", Text: named[0].Text}, {ID: "doc-2", Text: named[1].Text}},
			want:   sdk.CitationAudit{Citations: 2, Sentences: 2},
			ok:     true,
		},
		{
			name:   "a footnote whose definition quotes a passage",
			output: "Everest lies in Nepal.[^a]\n\n[^a]: Mount Everest is 8,849 metres high and lies in Nepal.",
			ctx:    named,
			want:   sdk.CitationAudit{Citations: 1, Sentences: 1},
			ok:     true,
		},
		{
			name:   "an undefined footnote that matches no passage",
			output: "Everest lies in Nepal.[^9]",
			ctx:    unnamed,
			want:   sdk.CitationAudit{Citations: 1, Sentences: 1, InvalidCitations: []string{"9"}, HallucinationDetected: true},
			ok:     true,
		},
		{
			name:   "superscripts cite, exponents do not",
			output: "The area is 12 km² and the speed is 10³ units. Beta is second².",
			ctx:    unnamed,
			want:   sdk.CitationAudit{Citations: 1, Sentences: 2, UncitedSentences: 1},
			ok:     true,
		},
		{
			name:   "superscripts resolve through their definition lines",
			output: "Beta is second.² Gamma is third.¹\n\n¹ Source: doc-3\n² see [2]",
			ctx:    []sdk.Passage{{ID: "doc-1", Text: "alpha is first"}, {ID: "doc-2", Text: "beta is second"}, {ID: "doc-3", Text: "gamma is third"}},
			want:   sdk.CitationAudit{Citations: 2, Sentences: 2},
			ok:     true,
		},
		{
			name:   "brackets that are not citations",
			output: "Scores lie in [0, 1] and the quote is [sic] verbatim. Tick the box [x] to see [the docs](https://example.com/a.b).",
			ctx:    unnamed,
			want:   sdk.CitationAudit{Sentences: 2, UncitedSentences: 2},
			ok:     true,
		},
		{
			name:   "markers inside code are ignored",
			output: "Use `items[1]` to get the second element.\n\n```go\nx := a[2]\n```",
			ctx:    unnamed,
			want:   sdk.CitationAudit{Sentences: 1, UncitedSentences: 1},
			ok:     true,
		},
		{
			name:   "greetings, questions, headings, transitions and sources are not claims",
			output: "Hello!\n\n## Key Facts\n\nHere is a summary:\n\n- Water boils at 100 degrees [doc-1]\n- Everest is 8,849 metres high [doc-2]\n\nWant to know more? I hope this helps.\n\nSources:\n[doc-1] Water article\n[doc-2] Everest article",
			ctx:    named,
			want:   sdk.CitationAudit{Citations: 4, Sentences: 2},
			ok:     true,
		},
		{
			name:   "twelve uncited sentences",
			output: strings.Repeat("Alpha comes before beta in the list. ", 12),
			ctx:    unnamed,
			want:   sdk.CitationAudit{Sentences: 12, UncitedSentences: 12},
			ok:     true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Audit(c.output, c.ctx)
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v", ok, c.ok)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("audit\n got  %+v\n want %+v\nsentences %+v", got, c.want, Sentences(c.output, c.ctx))
			}
		})
	}
}

func TestSentences(t *testing.T) {
	ctx := []sdk.Passage{{ID: "1", Text: "a"}, {ID: "2", Text: "b"}, {ID: "3", Text: "c"}, {ID: "doc-3", Text: "d"}, {ID: "chunk_ab12", Text: "e"}}
	cases := []struct {
		name   string
		output string
		want   []Sentence
	}{
		{
			name:   "abbreviations and initials do not split",
			output: "Dr. Smith met J. K. Rowling in the U.S. Army museum. They talked.",
			want: []Sentence{
				{Text: "Dr. Smith met J. K. Rowling in the U.S. Army museum.", Claim: true},
				{Text: "They talked.", Claim: false},
			},
		},
		{
			name:   "decimals, versions and lower-case continuations do not split",
			output: "Pi is about 3.14 and Go 1.26 ships it, e.g. in math. It works.",
			want: []Sentence{
				{Text: "Pi is about 3.14 and Go 1.26 ships it, e.g. in math.", Claim: true},
				{Text: "It works.", Claim: false},
			},
		},
		{
			name:   "No. before a number",
			output: "Platform No. 5 serves the airport. Trains run hourly.",
			want: []Sentence{
				{Text: "Platform No. 5 serves the airport.", Claim: true},
				{Text: "Trains run hourly.", Claim: true},
			},
		},
		{
			name:   "a marker after the period belongs to the sentence before",
			output: "The tower is tall. [1] It was finished early. [2]",
			want: []Sentence{
				{Text: "The tower is tall.", Claim: true, Cites: []string{"1"}},
				{Text: "It was finished early.", Claim: true, Cites: []string{"2"}},
			},
		},
		{
			name:   "every marker form",
			output: "One fact [1, 3]. Two facts [2-3]. Three facts [doc-3]. Four facts [chunk_ab12]. Five facts【3】.",
			want: []Sentence{
				{Text: "One fact.", Claim: true, Cites: []string{"1", "3"}},
				{Text: "Two facts.", Claim: true, Cites: []string{"2", "3"}},
				{Text: "Three facts.", Claim: true, Cites: []string{"doc-3"}},
				{Text: "Four facts.", Claim: true, Cites: []string{"chunk_ab12"}},
				{Text: "Five facts.", Claim: true, Cites: []string{"3"}},
			},
		},
		{
			name:   "lists and tables are units of their own",
			output: "Key points:\n1. Rivers flow downhill [1]\n2) Lakes stay put [2]\n* Seas are salty\n\n| Item | Value |\n|---|---|\n| Height | 330 m [1] |",
			want: []Sentence{
				{Text: "Key points:", Claim: false},
				{Text: "Rivers flow downhill", Claim: true, Cites: []string{"1"}},
				{Text: "Lakes stay put", Claim: true, Cites: []string{"2"}},
				{Text: "Seas are salty", Claim: true},
				{Text: "Item; Value", Claim: false},
				{Text: "Height; 330 m", Claim: true, Cites: []string{"1"}},
			},
		},
		{
			name:   "no-answer statements are not claims",
			output: "I couldn't find the opening hours. The provided documents do not mention prices.",
			want: []Sentence{
				{Text: "I couldn't find the opening hours.", Claim: false},
				{Text: "The provided documents do not mention prices.", Claim: false},
			},
		},
		{
			name:   "CJK punctuation splits",
			output: "东京是日本的首都。大阪很大！",
			want: []Sentence{
				{Text: "东京是日本的首都。", Claim: false},
				{Text: "大阪很大！", Claim: false},
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Sentences(c.output, ctx)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("sentences\n got  %#v\n want %#v", got, c.want)
			}
		})
	}
}

// FuzzAudit checks that the auditor never panics and that its counts are consistent.
func FuzzAudit(f *testing.F) {
	for _, s := range []string{
		"The Eiffel Tower was completed in 1889 [1].",
		"x [1-3] y [^2] z【4†s】 w² v¹ [doc-1](http://a) `[1]`\n```\n[2]\n```\n| a | b |\n|---|---|\n[^2]: see [1]",
		"[", "]", "[^", "【", "¹", "\uE000[1]\uE000", "[1-999999999999999999999]", "Dr. . . ? ! 。",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, output string) {
		a, ok := Audit(output, eiffel)
		if !ok {
			t.Fatal("ok=false with context")
		}
		if a.UncitedSentences > a.Sentences || a.Citations < 0 {
			t.Fatalf("inconsistent counts: %+v", a)
		}
		if a.HallucinationDetected != (len(a.InvalidCitations) > 0 || len(a.UnsupportedCitations) > 0) {
			t.Fatalf("hallucination flag disagrees with findings: %+v", a)
		}
		if _, ok := Audit(output, nil); ok != (a.Citations > 0) {
			t.Fatalf("without context ok=%v but %d citations", ok, a.Citations)
		}
	})
}

// BenchmarkAudit audits a 2 KB answer with citations, a list and a footnote.
func BenchmarkAudit(b *testing.B) {
	ctx := []sdk.Passage{
		{ID: "1", Text: "The Eiffel Tower stands 330 metres tall in Paris and weighs about 10,100 tonnes."},
		{ID: "2", Text: "The Eiffel Tower was completed in 1889 for the World Fair, designed by Gustave Eiffel's company."},
		{ID: "3", Text: "About 7 million people visit the tower every year, making it a paid monument of note."},
		{ID: "4", Text: "The tower has three levels for visitors, with restaurants on the first and second levels."},
	}
	para := "The Eiffel Tower stands 330 metres tall [1] and was completed in 1889 [2]. " +
		"Dr. Eiffel's company designed it for the World Fair [2]. About 7 million people visit it every year [3]. " +
		"It has three levels, with restaurants on the first two [4].\n\n" +
		"- Weight: about 10,100 tonnes [1]\n- Visitors: 7 million a year [3]\n- Levels: three [4]\n\n"
	var sb strings.Builder
	for sb.Len() < 2048 {
		sb.WriteString(para)
	}
	sb.WriteString("It remains a landmark.[^a]\n\n[^a]: See [1].")
	out := sb.String()
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	var a sdk.CitationAudit
	for b.Loop() {
		a, _ = Audit(out, ctx)
	}
	b.ReportMetric(float64(a.Sentences), "claims/op")
	b.ReportMetric(float64(a.Citations), "citations/op")
	if a.HallucinationDetected {
		b.Fatalf("benchmark answer is clean but the audit found %+v", a)
	}
}
