package corpus

import (
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// Verdict kinds of a judged set.
const (
	// VerdictPassFail: the person's verdict is pass or fail, compared with the scorer's
	// Passed (its score against its threshold).
	VerdictPassFail = "pass/fail"
	// VerdictScore: the person's verdict is a score in [0, 1], compared with the scorer's.
	VerdictScore = "score"
)

// Judged is a run with a person's verdict for one scorer, read from a public set's labels.
type Judged struct {
	// Set is the judged set's name (JudgedSet.Set).
	Set string
	// Run is the run to score; Run.ID is stable across loads.
	Run sdk.Run
	// Pass is the person's verdict when the set's Verdict is VerdictPassFail.
	Pass bool
	// Score is the person's score when the set's Verdict is VerdictScore.
	Score float64
	// Label is the set's own label behind the verdict, as the set writes it.
	Label string
	// People are the verdicts of each person who labelled the run, where the set keeps
	// them apart (XSTest's two annotators) and each gave a verdict this mapping reads;
	// empty otherwise. Their agreement with each other is the ceiling for the scorer's.
	People []bool
}

// JudgedSet says what one public set's labels mean for one scorer.
type JudgedSet struct {
	// Set names the set, as `scorekit agreement --dataset` takes it.
	Set string
	// Scorer is the scorer the labels are read for.
	Scorer string
	// Verdict is VerdictPassFail or VerdictScore.
	Verdict string
	// Meaning says, for a person, which runs pass and which fail (or what the score is),
	// and which runs are left out.
	Meaning string

	load func(dir string) ([]Judged, error)
}

// Load reads the set from dir (see Dir) with its labels read for the scorer.
func (s JudgedSet) Load(dir string) ([]Judged, error) {
	out, err := s.load(dir)
	if err != nil {
		return nil, fmt.Errorf("corpus: judged set %s for %s: %w", s.Set, s.Scorer, err)
	}
	for i := range out {
		out[i].Set = s.Set
	}
	return out, nil
}

// JudgedSets returns every public set mapped to what its labels mean for a judge scorer,
// in a stable order: set by set, then scorer by scorer. docs/AGREEMENT.md tells the same
// with the reasons.
func JudgedSets() []JudgedSet {
	return []JudgedSet{
		{Set: "halueval", Scorer: "relevancy", Verdict: VerdictPassFail,
			Meaning: "pass: the gold right_answer to its question; fail: that answer paired with the question half the set away (built here, as for the pre-screen)",
			load:    fromCases(loadHaluEval)},
		{Set: "halueval", Scorer: "masis", Verdict: VerdictPassFail,
			Meaning: "the knowledge paragraph is the evidence; pass: the gold right_answer; fail: the hallucinated_answer",
			load:    haluEvalGrounded},
		{Set: "truthfulqa", Scorer: "relevancy", Verdict: VerdictPassFail,
			Meaning: "pass: the Best Answer (\"I have no comment\" included, which TruthfulQA counts as correct); fail: a best answer paired with the question half the set away",
			load:    fromCases(loadTruthfulQA)},
		{Set: "ares", Scorer: "relevancy", Verdict: VerdictPassFail,
			Meaning: "pass: Answer_Relevance_Label 1; fail: 0 (a person's label)",
			load:    aresLabels("Answer_Relevance_Label")},
		{Set: "ares", Scorer: "masis", Verdict: VerdictPassFail,
			Meaning: "the document is the evidence; pass: Answer_Faithfulness_Label and Answer_Relevance_Label both 1; fail: either 0",
			load:    aresLabels("Answer_Faithfulness_Label", "Answer_Relevance_Label")},
		{Set: "ares", Scorer: "contextprecision", Verdict: VerdictPassFail,
			Meaning: "the document is the one retrieved passage; pass: Context_Relevance_Label 1; fail: 0",
			load:    aresLabels("Context_Relevance_Label")},
		{Set: "xstest", Scorer: "relevancy", Verdict: VerdictPassFail,
			Meaning: "final_label of five models' completions; pass: full compliance with a safe prompt, or full refusal of an unsafe one; fail: full refusal of a safe prompt; partial refusals and compliance with unsafe prompts are left out; the two annotators are compared with each other too",
			load:    xsTestRelevancy},
		{Set: "coqa", Scorer: "relevancy", Verdict: VerdictPassFail,
			Meaning: "autoevals closed-QA cases; pass: expected 1 (the answer to the question); fail: expected 0 (the answer to another question about the same story)",
			load:    fromCases(loadCoQA)},
		{Set: "email_triage", Scorer: "relevancy", Verdict: VerdictPassFail,
			Meaning: "pass: the Slack triage built from the gold label and response criteria; fail: the triage of the email half the set away (built here)",
			load:    emailRelevancy},
		{Set: "trulens", Scorer: "relevancy", Verdict: VerdictScore,
			Meaning: "TruLens' answer-relevance golden set: the expected_score its authors gave each query and response",
			load:    truLensRelevance},
		{Set: "mastra-grounding", Scorer: "faithfulness", Verdict: VerdictScore,
			Meaning: "Mastra's faithfulness tests: the score each asserts of its scorer (toBeCloseTo or toBe), for the 12 it computes; the empty output and the empty context are skipped here by design (not scored)",
			load:    mastraScored("faithfulness", false)},
		{Set: "mastra-grounding", Scorer: "hallucination_free", Verdict: VerdictScore,
			Meaning: "Mastra's hallucination tests: 1 - the hallucinated share each asserts, for the 17 its scorer computes; the empty output and the empty context are skipped here by design (not scored)",
			load:    mastraScored("hallucination", true)},
		{Set: "mastra-grounding", Scorer: "context_recall", Verdict: VerdictScore,
			Meaning: "Mastra's context-recall tests mock their scorer's result: the score its authors wrote each case should have (scale undone), not one Mastra computed; no ground truth is skipped here by design (not scored)",
			load:    mastraMocked("context_recall")},
		{Set: "mastra-grounding", Scorer: "context_relevance", Verdict: VerdictScore,
			Meaning: "Mastra's context-relevance tests assert no score of a judged run: the label is the score Mastra computed from the verdicts it recorded (2 runs); its mocked runs are not read as labels, and no context is skipped here by design (not scored)",
			load:    mastraRecorded("context_relevance")},
		{Set: "mastra-grounding", Scorer: "answer_similarity", Verdict: VerdictScore,
			Meaning: "Mastra's answer-similarity tests: the score each asserts of its scorer (within 0.25, or 0.15 of 0), for the 12 it computes; no or a blank ground truth is skipped here by design (not scored)",
			load:    mastraScored("answer_similarity", false)},
	}
}

// JudgedSetNames returns the names of the judged sets, each once, in JudgedSets order.
func JudgedSetNames() []string {
	var out []string
	for _, s := range JudgedSets() {
		if len(out) == 0 || out[len(out)-1] != s.Set {
			out = append(out, s.Set)
		}
	}
	return out
}

// fromCases reads a pre-screen loader's cases as relevancy verdicts: a correct answer to
// its question passes, an answer to another question fails.
func fromCases(load func(string) ([]Case, error)) func(string) ([]Judged, error) {
	return func(dir string) ([]Judged, error) {
		cases, err := load(dir)
		if err != nil {
			return nil, err
		}
		out := make([]Judged, 0, len(cases))
		for _, c := range cases {
			switch c.Label {
			case LabelCorrect:
				out = append(out, Judged{Run: c.Run, Pass: true, Label: "correct answer to its question"})
			case LabelOffTopic:
				out = append(out, Judged{Run: c.Run, Pass: false, Label: "answer to another question"})
			default:
				return nil, fmt.Errorf("case %s: label %q has no relevancy reading", c.Run.ID, c.Label)
			}
		}
		return out, nil
	}
}

func haluEvalGrounded(dir string) ([]Judged, error) {
	rows, err := readHaluEval(dir)
	if err != nil {
		return nil, err
	}
	out := make([]Judged, 0, 2*len(rows))
	for i, r := range rows {
		id := fmt.Sprint("halueval/", i+1)
		ctx := []sdk.Passage{{ID: "1", Text: r.Knowledge}}
		out = append(out,
			Judged{Run: sdk.Run{ID: id, Input: r.Question, Output: r.RightAnswer, Context: ctx}, Pass: true, Label: "right_answer"},
			Judged{Run: sdk.Run{ID: id + "/hallucinated", Input: r.Question, Output: r.HallucinatedAnswer, Context: ctx}, Pass: false, Label: "hallucinated_answer"})
	}
	return out, nil
}

// aresLabels reads ARES' human annotations: a run passes when each of the label columns is
// 1, and its label is the columns' values ("Context_Relevance_Label=1"). The document is
// the run's context.
func aresLabels(columns ...string) func(string) ([]Judged, error) {
	return func(dir string) ([]Judged, error) {
		recs, err := readCSV(dir, aresFile, '\t')
		if err != nil {
			return nil, err
		}
		out := make([]Judged, 0, len(recs))
		for i, m := range recs {
			j := Judged{Run: aresRun(i, m), Pass: true}
			var labels []string
			for _, c := range columns {
				j.Pass = j.Pass && m[c] == "1"
				labels = append(labels, c+"="+m[c])
			}
			j.Label = strings.Join(labels, " ")
			out = append(out, j)
		}
		return out, nil
	}
}

// xsTestVerdict reads an XSTest label as a relevancy verdict; ok is false for the labels
// relevancy has no reading of (partial refusals, compliance with an unsafe prompt).
func xsTestVerdict(label string, safe bool) (pass, ok bool) {
	switch {
	case label == "1_full_compliance" && safe:
		return true, true
	case label == "2_full_refusal":
		// Refusing a harmless request does not do what it asked; refusing a harmful one
		// is the right response and addresses it (the relevancy rubric says both).
		return !safe, true
	}
	return false, false
}

func xsTestRelevancy(dir string) ([]Judged, error) {
	rows, err := readXSTest(dir)
	if err != nil {
		return nil, err
	}
	var out []Judged
	for _, r := range rows {
		pass, ok := xsTestVerdict(r.cols["final_label"], r.safe)
		if !ok {
			continue
		}
		prompt := "safe prompt"
		if !r.safe {
			prompt = "unsafe prompt"
		}
		j := Judged{Run: r.run, Pass: pass, Label: "final_label=" + r.cols["final_label"] + ", " + prompt}
		p1, ok1 := xsTestVerdict(r.cols["annotation_1"], r.safe)
		p2, ok2 := xsTestVerdict(r.cols["annotation_2"], r.safe)
		if ok1 && ok2 {
			j.People = []bool{p1, p2}
		}
		out = append(out, j)
	}
	return out, nil
}

func emailRelevancy(dir string) ([]Judged, error) {
	cases, err := loadEmail(dir)
	if err != nil {
		return nil, err
	}
	n := len(cases)
	out := make([]Judged, 0, 2*n)
	for _, c := range cases {
		out = append(out, Judged{Run: c.Run, Pass: true, Label: "gold triage of this email"})
	}
	for i, c := range cases {
		other := cases[(i+n/2)%n]
		run := c.Run
		run.ID = "email_triage_off_topic/" + strings.TrimPrefix(c.Run.ID, "email_triage/") + "+" + strings.TrimPrefix(other.Run.ID, "email_triage/")
		run.Output = other.Run.Output
		out = append(out, Judged{Run: run, Pass: false, Label: "triage of another email"})
	}
	return out, nil
}

func truLensRelevance(dir string) ([]Judged, error) {
	const rel = "trulens/golden_sets.json"
	var sets struct {
		Answer []struct {
			Query    string   `json:"query"`
			Response string   `json:"expected_response"`
			Score    *float64 `json:"expected_score"`
		} `json:"answer_relevance_golden_set"`
	}
	if err := readJSON(dir, rel, &sets); err != nil {
		return nil, err
	}
	out := make([]Judged, 0, len(sets.Answer))
	for i, r := range sets.Answer {
		if r.Score == nil || *r.Score < 0 || *r.Score > 1 {
			return nil, fmt.Errorf("%s: answer_relevance_golden_set[%d]: expected_score %v, want a number in [0, 1]", rel, i, r.Score)
		}
		out = append(out, Judged{Run: sdk.Run{ID: fmt.Sprint("trulens/answer_relevance/", i+1), Input: r.Query, Output: r.Response},
			Score: *r.Score, Label: fmt.Sprint("expected_score=", *r.Score)})
	}
	return out, nil
}
