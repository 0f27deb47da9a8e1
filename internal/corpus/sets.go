package corpus

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

type qa struct{ id, question, answer string }

// offTopic pairs every answer with the question half the set away, so the pairing is
// deterministic and never pairs a row with itself. Answers that occur more than once in the
// set ("I have no comment", "yes") are left out: they fit many questions. The expectation is
// a flag, not a failure (see Case.WantFlag).
func offTopic(source string, rows []qa) []Case {
	count := map[string]int{}
	for _, r := range rows {
		count[strings.ToLower(strings.TrimSpace(r.answer))]++
	}
	n := len(rows)
	var out []Case
	for i, r := range rows {
		if count[strings.ToLower(strings.TrimSpace(r.answer))] > 1 {
			continue
		}
		q := rows[(i+n/2)%n]
		out = append(out, Case{
			Source:   source + "_off_topic",
			Run:      sdk.Run{ID: fmt.Sprintf("%s_off_topic/%s+%s", source, r.id, q.id), Input: q.question, Output: r.answer},
			Label:    LabelOffTopic,
			WantFlag: LabelOffTopic,
		})
	}
	return out
}

// haluRow is one line of HaluEval's QA set.
type haluRow struct {
	Knowledge          string `json:"knowledge"`
	Question           string `json:"question"`
	RightAnswer        string `json:"right_answer"`
	HallucinatedAnswer string `json:"hallucinated_answer"`
}

func readHaluEval(dir string) ([]haluRow, error) {
	const rel = "halueval/qa_one-turn_data.jsonl"
	f, err := open(dir, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []haluRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		var r haluRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("corpus: %s line %d: %w", rel, line, err)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("corpus: %s: %w", rel, err)
	}
	return rows, nil
}

func loadHaluEval(dir string) ([]Case, error) {
	halu, err := readHaluEval(dir)
	if err != nil {
		return nil, err
	}
	rows := make([]qa, len(halu))
	out := make([]Case, 0, 2*len(halu))
	for i, h := range halu {
		r := qa{id: fmt.Sprint(i + 1), question: h.Question, answer: h.RightAnswer}
		rows[i] = r
		out = append(out, Case{Source: "halueval", Label: LabelCorrect, WantPass: true,
			Run: sdk.Run{ID: "halueval/" + r.id, Input: r.question, Output: r.answer}})
	}
	return append(out, offTopic("halueval", rows)...), nil
}

func readCSV(dir, rel string, comma rune) ([]map[string]string, error) {
	f, err := open(dir, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma = comma
	r.LazyQuotes = true
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("corpus: %s: %w", rel, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("corpus: %s: no header", rel)
	}
	head := recs[0]
	out := make([]map[string]string, 0, len(recs)-1)
	for _, rec := range recs[1:] {
		m := make(map[string]string, len(head))
		for i, h := range head {
			if i < len(rec) {
				m[h] = rec[i]
			}
		}
		out = append(out, m)
	}
	return out, nil
}

func loadTruthfulQA(dir string) ([]Case, error) {
	recs, err := readCSV(dir, "truthfulqa/TruthfulQA.csv", ',')
	if err != nil {
		return nil, err
	}
	rows := make([]qa, 0, len(recs))
	out := make([]Case, 0, 2*len(recs))
	for i, m := range recs {
		r := qa{id: fmt.Sprint(i + 1), question: m["Question"], answer: m["Best Answer"]}
		rows = append(rows, r)
		out = append(out, Case{Source: "truthfulqa", Label: LabelCorrect, WantPass: true,
			Run: sdk.Run{ID: "truthfulqa/" + r.id, Input: r.question, Output: r.answer}})
	}
	return append(out, offTopic("truthfulqa", rows)...), nil
}

// aresFile holds ARES' human annotations.
const aresFile = "ares/LLM_Judge_Test_Set_Human_Annotations.tsv"

// aresRun is row i of the ARES annotations as a run: the document is its one passage.
func aresRun(i int, m map[string]string) sdk.Run {
	return sdk.Run{ID: fmt.Sprint("ares/", i+1), Input: m["Question"], Output: m["Answer"],
		Context: []sdk.Passage{{ID: "1", Text: m["Document"]}}}
}

func loadARES(dir string) ([]Case, error) {
	recs, err := readCSV(dir, aresFile, '\t')
	if err != nil {
		return nil, err
	}
	var rows []qa
	var out []Case
	for i, m := range recs {
		run := aresRun(i, m)
		switch m["Answer_Relevance_Label"] {
		case "1":
			out = append(out, Case{Source: "ares", Label: LabelCorrect, WantPass: true, Run: run})
			rows = append(rows, qa{id: fmt.Sprint(i + 1), question: m["Question"], answer: m["Answer"]})
		case "0":
			out = append(out, Case{Source: "ares", Label: LabelIrrelevant, WantPass: false, Run: run})
		}
	}
	return append(out, offTopic("ares", rows)...), nil
}

// xsTestModels are the five models of the v2 completions; the streval file repeats gpt4's
// completions.
var xsTestModels = []string{"gpt4", "llama2new", "llama2orig", "mistralguard", "mistralinstruct"}

// xsTestRow is one completion of XSTest: its columns, whether its prompt is safe (not a
// contrast prompt) and the run.
type xsTestRow struct {
	cols map[string]string
	safe bool
	run  sdk.Run
}

func readXSTest(dir string) ([]xsTestRow, error) {
	var out []xsTestRow
	for _, model := range xsTestModels {
		recs, err := readCSV(dir, "xstest/xstest_v2_completions_"+model+".csv", ',')
		if err != nil {
			return nil, err
		}
		for _, m := range recs {
			out = append(out, xsTestRow{cols: m, safe: !strings.HasPrefix(m["type"], "contrast_"),
				run: sdk.Run{ID: "xstest/" + model + "/" + m["id"], Input: m["prompt"], Output: m["completion"]}})
		}
	}
	return out, nil
}

func loadXSTest(dir string) ([]Case, error) {
	rows, err := readXSTest(dir)
	if err != nil {
		return nil, err
	}
	var out []Case
	for _, r := range rows {
		c := Case{Source: "xstest", Run: r.run}
		label := r.cols["final_label"]
		switch {
		case r.safe && label == "1_full_compliance":
			c.Label, c.WantPass = LabelCorrect, true
		case r.safe && label == "2_full_refusal":
			c.Source, c.Label, c.WantPass = "xstest_refusal", LabelRefusal, false
		case !r.safe && label == "2_full_refusal":
			// Refused, and rightly; the pre-screen fails every refusal and leaves
			// "was declining right?" to a judge, so it should not pass.
			c.Source, c.Label, c.WantPass = "xstest_unsafe_refusal", LabelAppropriateRefusal, false
		default:
			// Partial refusals are neither clearly right nor clearly wrong, and
			// compliance with an unsafe prompt is a safety question, not a pre-screen's.
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

func loadSupportTriage(dir string) ([]Case, error) {
	recs, err := readCSV(dir, "ragas/support_triage.csv", ',')
	if err != nil {
		return nil, err
	}
	purpose := "Classify each support ticket: labels from Billing, Account, ProductIssue, HowTo, Feature, RefundCancel (joined with ';') and a priority P0-P2."
	var out []Case
	for _, m := range recs {
		for _, k := range []string{"labels", "priority"} {
			out = append(out, Case{Source: "ragas_triage", Label: LabelTriage, WantPass: true, Run: sdk.Run{
				ID: "ragas_triage/" + m["id"] + "/" + k, Agent: "ticket-" + k, Input: m["text"], Output: m[k],
				Metadata: map[string]any{"purpose": purpose},
			}})
		}
	}
	return out, nil
}

// loadCoQA reads autoevals' closed-QA cases: a story and a question in, a one-word answer
// out, either the right answer (expected 1) or the answer to another question about the
// same story (expected 0).
func loadCoQA(dir string) ([]Case, error) {
	var rows []struct {
		Input struct {
			Input  string `json:"input"`
			Output string `json:"output"`
		} `json:"input"`
		Expected float64 `json:"expected"`
	}
	if err := readJSON(dir, "autoevals/coqa-closed-qa.json", &rows); err != nil {
		return nil, err
	}
	out := make([]Case, 0, len(rows))
	for i, r := range rows {
		c := Case{Source: "coqa", Label: LabelCorrect, WantPass: true, Run: sdk.Run{
			ID: fmt.Sprintf("coqa/%d", i+1), Input: r.Input.Input, Output: r.Input.Output}}
		if r.Expected == 0 {
			c.Source, c.Label, c.WantPass, c.WantFlag = "coqa_off_topic", LabelOffTopic, false, LabelOffTopic
		}
		out = append(out, c)
	}
	return out, nil
}
