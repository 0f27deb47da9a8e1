package corpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// The sets added for the pre-screen's second pass (QUALITY.md), measured with the rules
// frozen before their misses were read: GNOME Help answers in 34 languages, product
// failure and permission messages and null-rendered message templates from Debian
// packages' translation catalogues (internal/corpus/tools/debian_sets.py builds them), a
// second model's refusals in seven languages (gemma-2-9b-it, PolyRefuse) and MT-Bench
// answers of two models (drafted emails with slots, outlines, code, extractions); then
// product failure sentences and scope refusals quoted from public issue threads, complete
// Go and Python code from Debian's sources (internal/corpus/tools/code_sets.py) and the
// same code cut mid-way.

// secondPassSet says which labels a second-pass set's rows may carry and how they load.
type secondPassSet struct {
	set    string
	labels map[string]string // row label -> case label
	kind   string
}

// secondPassSets are the second pass's sets.
var secondPassSets = []secondPassSet{
	{"gnome_help", map[string]string{LabelCorrect: LabelCorrect}, KindStatement},
	{"product_failures", map[string]string{LabelError: LabelProductFailure}, ""},
	{"product_permission", map[string]string{LabelRefusal: LabelPermission}, ""},
	{"null_templates", map[string]string{LabelCorrect: LabelCorrect, LabelPlaceholder: LabelPlaceholder}, KindShort},
	// Refusals of harmful requests: appropriate, failed like every refusal.
	{"gemma_refusals", map[string]string{LabelRefusal: LabelAppropriateRefusal}, ""},
	{"mt_bench", map[string]string{LabelCorrect: LabelCorrect}, KindInstruction},
	{"issue_failures", map[string]string{LabelError: LabelError}, ""},
	{"scope_refusals", map[string]string{LabelRefusal: LabelRefusal}, ""},
	{"go_examples", map[string]string{LabelCorrect: LabelCorrect}, KindCode},
	{"python_examples", map[string]string{LabelCorrect: LabelCorrect}, KindCode},
	{"code_cut", map[string]string{LabelTruncated: LabelTruncated}, ""},
}

func loadSecondPass() ([]Case, error) {
	return shippedCases(secondPassSets, func(s secondPassSet) string { return s.set }, secondPassCase)
}

// secondPassCase is row r of second-pass set s as a case.
func secondPassCase(s secondPassSet, r shippedRow) (Case, error) {
	label, ok := s.labels[r.Label]
	if !ok {
		return Case{}, fmt.Errorf("corpus: %s %s: label %q is not one this set carries; fix the row or secondPassSets", s.set, r.ID, r.Label)
	}
	if r.Lang == "" {
		return Case{}, fmt.Errorf("corpus: %s %s: no lang; every row of this set names its language", s.set, r.ID)
	}
	c := Case{Source: s.set, Label: label, WantPass: label == LabelCorrect, Lang: r.Lang, Run: r.run(s.set)}
	if c.WantPass {
		c.Kind = s.kind
		if strings.Contains(r.Output, "```") {
			c.Kind = KindCode
		}
	}
	if s.set == "null_templates" || s.set == "code_cut" {
		c.Derived = r.ID
	}
	if r.URL != "" {
		c.Run.Metadata = map[string]any{"source_url": r.URL}
	}
	return c, nil
}

// CatalogNeutral returns the neutral program messages of catalog_neutral, one case per
// translation, labelled correct: the register of the product failure and permission sets
// without their meaning. They train and test the notice model's false alarms; Load does
// not return them, since they answer nothing.
func CatalogNeutral() ([]Case, error) {
	b, err := shipped.ReadFile("testdata/catalog_neutral/cases.jsonl")
	if err != nil {
		return nil, fmt.Errorf("corpus: shipped set catalog_neutral: %w", err)
	}
	var out []Case
	for line, raw := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var r struct {
			ID           string            `json:"id"`
			Domain       string            `json:"domain"`
			Translations map[string]string `json:"translations"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("corpus: testdata/catalog_neutral/cases.jsonl line %d: %w", line+1, err)
		}
		langs := make([]string, 0, len(r.Translations))
		for l := range r.Translations {
			langs = append(langs, l)
		}
		sort.Strings(langs)
		for _, l := range langs {
			out = append(out, Case{Source: "catalog_neutral", Label: LabelCorrect, WantPass: true, Lang: l, Kind: KindShort,
				Run: sdk.Run{ID: "catalog_neutral/" + l + "/" + r.ID, Output: r.Translations[l]}})
		}
	}
	return out, nil
}
