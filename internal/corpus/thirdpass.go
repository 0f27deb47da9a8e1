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
var thirdPassSets = []struct{ set, kind string }{
	{"go_stdlib", KindCode},
	{"python_stdlib", KindCode},
	{"python_faq", KindStatement},
	{"debian_faq", KindStatement},
	{"trivia_people", KindShort},
}

// ThirdPassSources are the sources of correct answers the third pass held out.
func ThirdPassSources() []string {
	out := make([]string, len(thirdPassSets))
	for i, s := range thirdPassSets {
		out[i] = s.set
	}
	return out
}

func loadThirdPass() ([]Case, error) {
	var out []Case
	for _, s := range thirdPassSets {
		rows, err := readShipped(s.set)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if r.Label != LabelCorrect || r.Lang == "" {
				return nil, fmt.Errorf("corpus: %s %s: label %q, lang %q; every row of this set is a correct answer that names its language", s.set, r.ID, r.Label, r.Lang)
			}
			c := Case{Source: s.set, Label: LabelCorrect, WantPass: true, Kind: s.kind, Lang: r.Lang, Run: r.run(s.set)}
			if strings.Contains(r.Output, "```") {
				c.Kind = KindCode
			}
			out = append(out, c)
		}
	}
	return out, nil
}
