package corpus

import (
	"fmt"
	"strings"
)

// The sets added for the pre-screen's third pass (issue 32), measured with the rules frozen
// before their misses were read: complete functions of the Go and Python standard libraries,
// the Python FAQ and the Debian FAQ in four languages (internal/corpus/tools/third_pass_sets.py
// builds them), and short trivia answers, names most of them. derive repeats the functions
// and the other sources' correct answers back to back for the held-out loops.
var thirdPassSets = []thirdPassSet{
	{"go_stdlib", KindCode},
	{"python_stdlib", KindCode},
	{"python_faq", KindStatement},
	{"debian_faq", KindStatement},
	{"trivia_people", KindShort},
}

// thirdPassSet is a third-pass set of correct answers and their kind.
type thirdPassSet struct{ set, kind string }

// ThirdPassSources are the sources of correct answers the third pass held out.
func ThirdPassSources() []string {
	out := make([]string, len(thirdPassSets))
	for i, s := range thirdPassSets {
		out[i] = s.set
	}
	return out
}

func loadThirdPass() ([]Case, error) {
	return shippedCases(thirdPassSets, func(s thirdPassSet) string { return s.set }, thirdPassCase)
}

// thirdPassCase is row r of third-pass set s as a case.
func thirdPassCase(s thirdPassSet, r shippedRow) (Case, error) {
	if r.Label != LabelCorrect || r.Lang == "" {
		return Case{}, fmt.Errorf("corpus: %s %s: label %q, lang %q; every row of this set is a correct answer that names its language", s.set, r.ID, r.Label, r.Lang)
	}
	c := Case{Source: s.set, Label: LabelCorrect, WantPass: true, Kind: s.kind, Lang: r.Lang, Run: r.run(s.set)}
	if strings.Contains(r.Output, "```") {
		c.Kind = KindCode
	}
	return c, nil
}
