package corpus

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// The sets the project ships (testdata/<set>/cases.jsonl, each with SOURCE.txt and LICENSE)
// are small excerpts of public data the shared folder lacks: extractive answer spans in
// several languages (German among them), open-domain short answers, math, code,
// instruction-following outputs of two models and human-written responses, error outputs
// quoted from public issue threads, one model's refusals in nine languages, and one
// labelled synthetic set of multilingual refusals; then the second pass's sets (secondpass.go).
// They are embedded, so they load from anywhere.
//
//go:embed testdata
var shipped embed.FS

// Answer kinds of the correct answers, for the per-kind rows of the quality report.
const (
	KindShort       = "short answer"
	KindSpan        = "extractive span"
	KindMath        = "math"
	KindCode        = "code"
	KindInstruction = "instruction following"
	KindStatement   = "statement"
)

// Labels of the failure classes the shipped and derived sets add.
const (
	LabelPlaceholder = "placeholder"
	LabelTruncated   = "truncated"
	LabelRepetition  = "repetition"
	// LabelPermission: a product declined the request for want of permission ("You are
	// not allowed to access the device", "Operation not permitted"). A pre-screen catches
	// it by failing the run as a refusal or as an error message.
	LabelPermission = "permission_refusal"
	// LabelProductFailure: a program's own message that an operation failed ("Der Server
	// ist nicht erreichbar; Versuchen Sie es später erneut"), in any language, where an
	// answer should be. A pre-screen catches it as error_text, as it does LabelError; the
	// label is separate because these messages measure the reading of other languages, not
	// the output of an agent that breaks (the insight simulations draw LabelError only).
	LabelProductFailure = "product_failure"
)

// shippedRow is one line of a shipped cases.jsonl.
type shippedRow struct {
	ID       string         `json:"id"`
	Input    string         `json:"input"`
	Output   string         `json:"output"`
	Label    string         `json:"label"`
	Lang     string         `json:"lang"`
	Model    string         `json:"model"`
	URL      string         `json:"url"`
	Metadata map[string]any `json:"metadata"`
	// Split is "held-out" for rows added after the rules they measure were frozen.
	Split string `json:"split"`
}

// run is the row as a run of set: its ID is set/ID.
func (r shippedRow) run(set string) sdk.Run {
	return sdk.Run{ID: set + "/" + r.ID, Input: r.Input, Output: r.Output}
}

func readShipped(set string) ([]shippedRow, error) {
	b, err := shipped.ReadFile("testdata/" + set + "/cases.jsonl")
	if err != nil {
		return nil, fmt.Errorf("corpus: shipped set %s: %w", set, err)
	}
	var rows []shippedRow
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		var r shippedRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("corpus: testdata/%s/cases.jsonl line %d: %w", set, line, err)
		}
		if r.ID == "" || r.Output == "" {
			return nil, fmt.Errorf("corpus: testdata/%s/cases.jsonl line %d: want id and output", set, line)
		}
		rows = append(rows, r)
	}
	return rows, sc.Err()
}

// shippedCases reads the shipped sets of a table in its order (set names an entry's set)
// and makes a case of each row with toCase, which says what is wrong with a row it cannot
// take.
func shippedCases[S any](sets []S, set func(S) string, toCase func(S, shippedRow) (Case, error)) ([]Case, error) {
	var out []Case
	for _, s := range sets {
		rows, err := readShipped(set(s))
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			c, err := toCase(s, r)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// calculatorNotes are GSM8K's calculator annotations, <<48/2=24>>, which a model does not write.
var calculatorNotes = regexp.MustCompile(`<<[^>]*>>`)

// answerSet is a shipped set of correct answers: their kind and language ("": each row's).
type answerSet struct{ set, kind, lang string }

// answerSets are the shipped sets of correct answers loadShipped reads first.
var answerSets = []answerSet{
	{"nq_open", KindShort, "en"},
	{"squad_es", KindSpan, "es"},
	{"jaquad", KindSpan, "ja"},
	{"mbpp", KindCode, "en"},
	{"alpaca_eval", KindInstruction, "en"},
	{"germanquad", KindSpan, "de"},
	{"dolly", KindInstruction, "en"},
	{"tydiqa", KindSpan, ""},
}

// loadShipped reads every shipped set.
func loadShipped(string) ([]Case, error) {
	out, err := shippedCases(answerSets, func(s answerSet) string { return s.set }, func(s answerSet, r shippedRow) (Case, error) {
		c := Case{Source: s.set, Label: LabelCorrect, WantPass: true, Kind: s.kind, Lang: s.lang, Run: r.run(s.set)}
		if s.lang == "" {
			c.Lang = r.Lang
		}
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	rows, err := readShipped("gsm8k")
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		solution := strings.TrimSpace(calculatorNotes.ReplaceAllString(r.Output, ""))
		_, final, _ := strings.Cut(solution, "####")
		out = append(out,
			Case{Source: "gsm8k", Label: LabelCorrect, WantPass: true, Kind: KindMath, Lang: "en",
				Run: sdk.Run{ID: "gsm8k/" + r.ID, Input: r.Input, Output: solution}},
			Case{Source: "gsm8k", Label: LabelCorrect, WantPass: true, Kind: KindShort, Lang: "en",
				Run: sdk.Run{ID: "gsm8k/" + r.ID + "/final", Input: r.Input, Output: strings.TrimSpace(final)}})
	}
	rows, err = readShipped("errors_public")
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := Case{Source: "errors_public", Label: LabelError, Lang: "en", Run: r.run("errors_public")}
		c.Run.Metadata = map[string]any{"source_url": r.URL}
		out = append(out, c)
	}
	rows, err = readShipped("polyrefuse")
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.Label != LabelRefusal {
			return nil, fmt.Errorf("corpus: polyrefuse %s: label %q, want refusal", r.ID, r.Label)
		}
		// Refusals of harmful requests: appropriate, and failed by the pre-screen like every
		// refusal (see the package doc).
		src := "polyrefuse"
		if r.Split == "held-out" {
			src = "polyrefuse_heldout"
		}
		out = append(out, Case{Source: src, Label: LabelAppropriateRefusal, Lang: r.Lang, Run: r.run(src)})
	}
	second, err := loadSecondPass()
	if err != nil {
		return nil, err
	}
	out = append(out, second...)
	third, err := loadThirdPass()
	if err != nil {
		return nil, err
	}
	out = append(out, third...)
	rows, err = readShipped("refusals_multilingual")
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := Case{Source: "refusals_multilingual", Label: r.Label, Lang: r.Lang, Synthetic: true, Run: r.run("refusals_multilingual")}
		switch r.Label {
		case LabelCorrect:
			c.WantPass, c.Kind = true, KindStatement
		case LabelRefusal:
		default:
			return nil, fmt.Errorf("corpus: refusals_multilingual %s: label %q, want correct or refusal", r.ID, r.Label)
		}
		out = append(out, c)
	}
	return out, nil
}
