package corpus

import (
	"strings"
	"testing"
)

// TestJudgedSets loads every judged set and checks its verdict counts against the source
// files as published (counted from the files' own columns), so a changed mapping or a
// truncated file is noticed.
func TestJudgedSets(t *testing.T) {
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ pass, fail, people int }{
		// Off-topic pairs leave out answers that occur more than once in a set (offTopic).
		"halueval/relevancy":   {pass: 500, fail: 440},
		"halueval/masis":       {pass: 500, fail: 500},
		"truthfulqa/relevancy": {pass: 817, fail: 736},
		// ARES: Answer_Relevance 179 ones, 21 zeros; faithful and relevant 169; relevant
		// documents 98 of 200.
		"ares/relevancy":        {pass: 179, fail: 21},
		"ares/masis":            {pass: 169, fail: 31},
		"ares/contextprecision": {pass: 98, fail: 102},
		// XSTest: 1,766 compliant-with-safe or refusing-unsafe, 172 refusing safe; 1,906
		// of them with both annotators' labels readable.
		"xstest/relevancy":       {pass: 1766, fail: 172, people: 1906},
		"coqa/relevancy":         {pass: 20, fail: 20},
		"email_triage/relevancy": {pass: 16, fail: 16},
		"trulens/relevancy":      {pass: 17},
		// Mastra's tests that assert a computed score (12 of faithfulness, 17 of
		// hallucination) and context recall's mocked runs (6; two more build no run).
		"mastra-grounding/faithfulness":       {pass: 12},
		"mastra-grounding/hallucination_free": {pass: 17},
		"mastra-grounding/context_recall":     {pass: 6},
		// Answer similarity's 12 asserted scores; context relevance's 2 recorded runs.
		"mastra-grounding/context_relevance": {pass: 2},
		"mastra-grounding/answer_similarity": {pass: 12},
	}
	seen := map[string]bool{}
	for _, s := range JudgedSets() {
		key := s.Set + "/" + s.Scorer
		t.Run(key, func(t *testing.T) {
			if seen[key] {
				t.Fatalf("%s mapped twice", key)
			}
			seen[key] = true
			if s.Meaning == "" {
				t.Error("no meaning: the docs and the command print it")
			}
			js, err := s.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			ids := map[string]bool{}
			var pass, fail, people int
			for _, j := range js {
				if ids[j.Run.ID] {
					t.Errorf("duplicate run %s", j.Run.ID)
				}
				ids[j.Run.ID] = true
				if j.Set != s.Set || j.Label == "" || j.Run.Input == "" {
					t.Errorf("%s: set %q label %q input %q", j.Run.ID, j.Set, j.Label, j.Run.Input)
				}
				if s.Scorer == "masis" || s.Scorer == "contextprecision" {
					if len(j.Run.Context) == 0 {
						t.Errorf("%s: no evidence for %s", j.Run.ID, s.Scorer)
					}
				}
				switch {
				case s.Verdict == VerdictScore:
					if j.Score < 0 || j.Score > 1 {
						t.Errorf("%s: score %v", j.Run.ID, j.Score)
					}
					pass++
				case j.Pass:
					pass++
				default:
					fail++
				}
				if len(j.People) == 2 {
					people++
				}
			}
			w := want[key]
			if pass != w.pass || fail != w.fail || people != w.people {
				t.Errorf("pass %d fail %d with two people %d, want %d, %d, %d", pass, fail, people, w.pass, w.fail, w.people)
			}
		})
	}
	if len(seen) != len(want) {
		t.Errorf("%d judged sets, want %d", len(seen), len(want))
	}
	if got := strings.Join(JudgedSetNames(), ","); got != "halueval,truthfulqa,ares,xstest,coqa,email_triage,trulens,mastra-grounding" {
		t.Errorf("names %s", got)
	}
}

// TestXSTestVerdicts: the relevancy reading of XSTest's labels, case by case.
func TestXSTestVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		label    string
		safe     bool
		pass, ok bool
	}{
		{"complies with a safe prompt", "1_full_compliance", true, true, true},
		{"refuses a safe prompt", "2_full_refusal", true, false, true},
		{"refuses an unsafe prompt", "2_full_refusal", false, true, true},
		{"complies with an unsafe prompt", "1_full_compliance", false, false, false},
		{"partial refusal", "3_partial_refusal", true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pass, ok := xsTestVerdict(tc.label, tc.safe)
			if pass != tc.pass || ok != tc.ok {
				t.Errorf("pass %v ok %v, want %v %v", pass, ok, tc.pass, tc.ok)
			}
		})
	}
}
