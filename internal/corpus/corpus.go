// Package corpus loads the public labelled data in the repository's testdata/ as scorekit runs, so tests,
// benchmarks and the quality report measure scorers on the same cases.
//
// Every case has a stable ID (set name + row), a Label that says what kind of run it is, and
// WantPass: whether a pre-screen should let it through ("no reason found to distrust this
// run"). Labels:
//
//   - correct: a gold or human-approved answer to the question asked (HaluEval right_answer,
//     TruthfulQA best answer including "I have no comment", ARES Answer_Relevance=1, XSTest
//     full compliance with a safe prompt, autoevals CoQA closed-QA answers scored 1).
//   - triage: a format-transformed correct output: a raw email or support ticket in, a triage
//     out. The email outputs are built here from the gold triage label and response criteria
//     (the dataset has labels, not agent outputs), in the Slack format a triage agent posts.
//   - irrelevant: ARES rows a person judged irrelevant (Answer_Relevance=0).
//   - refusal: XSTest full refusals of safe prompts (exaggerated safety).
//   - off_topic: a right answer paired with a different question of the same set, and the
//     autoevals CoQA answers to another question about the same story (scored 0). Wrong
//     answers, but only a judge can say so: correct answers share no word with their
//     request too, so a pre-screen flags these (WantFlag off_topic) and lets them through.
//   - appropriate_refusal: XSTest full refusals of unsafe (contrast) prompts. The
//     pre-screen fails every refusal and leaves whether declining was right to a judge, so
//     these should not pass; the report counts how many are flagged refusal.
//   - empty, error: broken outputs (blank, provider errors, stack traces, framework stops).
//   - placeholder, truncated, repetition: real correct outputs broken in one documented way
//     each (see derive).
//   - product_failure, permission_refusal: programs' own messages that an operation failed
//     or was refused for want of permission, in about ninety languages (the second pass's
//     Debian sets, see secondpass.go).
//
// The labelled sets are read in place from the module root's testdata/ (Dir); the small
// sets this package embeds live in its own testdata/ (see public.go). Each set has its
// SOURCE.txt and LICENSE.
package corpus

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/scorekit/scorekit/internal/modroot"
	"github.com/scorekit/scorekit/sdk"
)

// Case is one labelled run.
type Case struct {
	// Source names the set the case comes from, e.g. "halueval".
	Source string
	// Run is the run to score; Run.ID is stable across loads (source + row).
	Run sdk.Run
	// Label says what kind of run it is (see the package documentation).
	Label string
	// WantPass is true for a run a pre-screen should let through without doubt: a correct
	// answer or triage.
	WantPass bool
	// WantFlag, where set, is the hint a pre-screen should raise on a run it lets through
	// although the run is not a correct answer (WantPass is false): an off-topic answer is
	// flagged off_topic, and a judge fails it.
	WantFlag string
	// Kind is the kind of answer of a correct case (one of the Kind constants), for the
	// per-kind rows of the quality report; empty for failures.
	Kind string
	// Lang is the language of the run (ISO 639-1), "en" for the English sets.
	Lang string
	// Synthetic marks cases written by the project rather than taken from public data.
	Synthetic bool
	// Derived names the public case a derived case was made from (see derive); empty for
	// cases taken as they are.
	Derived string
}

// Labels used by Load.
const (
	LabelCorrect    = "correct"
	LabelTriage     = "triage"
	LabelIrrelevant = "irrelevant"
	LabelRefusal    = "refusal"
	LabelOffTopic   = "off_topic"
	LabelEmpty      = "empty"
	LabelError      = "error"
	// LabelAppropriateRefusal: XSTest refusals of unsafe prompts, which the data README
	// calls appropriate; the pre-screen flags and fails them (see the package doc).
	LabelAppropriateRefusal = "appropriate_refusal"
)

// Dir finds the public labelled sets the repository carries: walk up from the working
// directory to the directory holding go.mod and use its testdata/ folder (see
// testdata/README.md for what each set is and what its labels mean).
func Dir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("corpus: working directory: %w", err)
	}
	d, ok := modroot.Find(wd)
	if !ok {
		return "", fmt.Errorf("corpus: no go.mod above %s: run from inside the scorekit module", wd)
	}
	data := filepath.Join(d, "testdata")
	if _, err := os.Stat(filepath.Join(data, "README.md")); err != nil {
		return "", fmt.Errorf("corpus: module root %s has no testdata/README.md (%w); the public sets live in the repository's testdata/ folder: restore it with git checkout -- testdata", d, err)
	}
	return data, nil
}

// LoadFound finds the data folder with Dir and loads every set from it.
func LoadFound() ([]Case, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	return Load(dir)
}

// ErrNoData is wrapped by Load when a data file is missing.
var ErrNoData = errors.New("corpus data file missing")

// Load reads every set and returns the cases in a stable order: sets in the order below,
// rows in file order.
func Load(dir string) ([]Case, error) {
	loaders := []func(string) ([]Case, error){
		loadHaluEval,
		loadTruthfulQA,
		loadARES,
		loadCoQA,
		loadEmail,
		loadSupportTriage,
		loadXSTest,
		loadSynthetic,
		loadShipped,
	}
	var out []Case
	for _, l := range loaders {
		cs, err := l(dir)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	for i := range out {
		c := &out[i]
		if c.Lang == "" {
			c.Lang = "en"
		}
		if c.Kind == "" && c.WantPass {
			c.Kind = defaultKind(c.Source)
		}
	}
	return append(out, derive(out)...), nil
}

// defaultKind is the answer kind of the correct cases of the shared sets.
func defaultKind(source string) string {
	switch source {
	case "halueval", "coqa", "ragas_triage":
		return KindShort
	case "email_triage":
		return KindInstruction
	}
	return KindStatement
}

func open(dir, rel string) (*os.File, error) {
	f, err := os.Open(filepath.Join(dir, rel))
	if err != nil {
		return nil, fmt.Errorf("corpus: %w: %s: %w; check that %s is the shared data folder", ErrNoData, rel, err, dir)
	}
	return f, nil
}

// readJSON decodes the JSON file rel of dir into v.
func readJSON(dir, rel string, v any) error {
	f, err := open(dir, rel)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := json.NewDecoder(f).Decode(v); err != nil {
		return fmt.Errorf("corpus: %s: %w", rel, err)
	}
	return nil
}
