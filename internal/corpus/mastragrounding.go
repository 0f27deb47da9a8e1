package corpus

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/scorekit/scorekit/sdk"
)

// MastraGroundingDir is the folder of testdata/ holding Mastra's own cases for its grounding
// scorers, one JSON file per scorer (see its README).
const MastraGroundingDir = "mastra-grounding"

// MastraCase is one case of testdata/mastra-grounding, as its README describes it.
type MastraCase struct {
	// ID is the stable id, "<scorer>-NN".
	ID string `json:"id"`
	// Test is the name of Mastra's test; nil for a recording no stored test asserts.
	Test *string `json:"test"`
	// Edge is what makes the case an edge (empty_output, empty_context, no_expected ...),
	// or "".
	Edge string `json:"edge"`
	// Run is the case as a scorekit run, its ID set to the case's; nil when the test
	// builds no run (a constructor error).
	Run *sdk.Run `json:"run"`
	// Mastra is what the test passes to Mastra's scorer and what it asserts.
	Mastra struct {
		Options     map[string]any `json:"options"`
		GroundTruth any            `json:"ground_truth"`
		Expected    MastraExpected `json:"expected"`
	} `json:"mastra"`
	// Given is the analyze result a step_function case hands to generateScore.
	Given json.RawMessage `json:"given"`
	// Recorded is the judge's answers Mastra recorded, verbatim, or null; read the
	// faithfulness and hallucination shape with [MastraCase.Claims].
	Recorded json.RawMessage `json:"recorded"`
}

// MastraExpected is what a Mastra test asserts.
type MastraExpected struct {
	// Kind is scorer, step_function, mocked_run, throws or none.
	Kind string `json:"kind"`
	// Score is the asserted score, in Mastra's direction and scale; nil when none.
	Score *float64 `json:"score"`
	// Assert is the assertion as written.
	Assert string `json:"assert"`
	// AbsTolerance is what the assertion allows.
	AbsTolerance float64 `json:"abs_tolerance"`
	// Error is the error a throws case expects.
	Error string `json:"error"`
}

// MastraClaims is the recording of a claim-based scorer (faithfulness, hallucination):
// the claims Mastra's extract call returned, the analyze call's verdicts, the score Mastra
// computed from them, and the judge calls with their token counts.
type MastraClaims struct {
	Claims   []string        `json:"claims"`
	Verdicts []MastraVerdict `json:"verdicts"`
	Score    *float64        `json:"score"`
	Reason   string          `json:"reason"`
	Calls    []MastraCall    `json:"calls"`
}

// MastraVerdict is one verdict of Mastra's analyze step: faithfulness names the claim
// "claim", hallucination "statement".
type MastraVerdict struct {
	Claim     string `json:"claim"`
	Statement string `json:"statement"`
	Verdict   string `json:"verdict"`
	Reason    string `json:"reason"`
}

// Text is the claim the verdict is about.
func (v MastraVerdict) Text() string {
	if v.Claim != "" {
		return v.Claim
	}
	return v.Statement
}

// MastraCall is one recorded judge call: its step and the tokens the judge reported
// (none when the recorder replayed an identical earlier request).
type MastraCall struct {
	Step             string `json:"step"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens"`
	Replayed         bool   `json:"replayed"`
}

// Claims reads the case's recording in the claim-based shape; nil when it has none.
func (c MastraCase) Claims() (*MastraClaims, error) {
	if len(c.Recorded) == 0 || string(c.Recorded) == "null" {
		return nil, nil
	}
	var out MastraClaims
	if err := json.Unmarshal(c.Recorded, &out); err != nil {
		return nil, fmt.Errorf("case %s: recorded: %w", c.ID, err)
	}
	return &out, nil
}

// LoadMastraGrounding reads the cases of one scorer's file of testdata/mastra-grounding
// ("faithfulness", "hallucination", "context_recall" ...), in file order. Each run's ID is
// its case's. The noise-sensitivity cases' runs are read as noise_robustness reads a run
// (see noiseRun).
func LoadMastraGrounding(dir, scorer string) ([]MastraCase, error) {
	var set struct {
		Scorer string       `json:"scorer"`
		Cases  []MastraCase `json:"cases"`
	}
	rel := MastraGroundingDir + "/" + scorer + ".json"
	if err := readJSON(dir, rel, &set); err != nil {
		return nil, err
	}
	if set.Scorer != scorer || len(set.Cases) == 0 {
		return nil, fmt.Errorf("corpus: %s: scorer %q with %d cases, want %q with some", rel, set.Scorer, len(set.Cases), scorer)
	}
	for i := range set.Cases {
		if r := set.Cases[i].Run; r != nil {
			r.ID = set.Cases[i].ID
			if scorer == "noise_sensitivity" {
				noiseRun(r, set.Cases[i].Mastra.Options)
			}
		}
	}
	return set.Cases, nil
}

// noiseRun moves a noise-sensitivity case onto the fields noise_robustness reads: the run
// is the noisy run, so Mastra's noisyQuery option, what the agent was given, is run.input;
// Mastra's run.input, its "original query", is the clean request (metadata.noise.clean_input)
// where it is given and differs; the baseline answer and the noise type go under
// metadata.noise (baseline_output, type). The judge is then shown what Mastra's prompt
// shows: the original query, the noisy query, the baseline and the noisy answer.
func noiseRun(r *sdk.Run, options map[string]any) {
	noisy, _ := options["noisyQuery"].(string)
	md := map[string]any{}
	if b, _ := options["baselineResponse"].(string); b != "" {
		md["baseline_output"] = b
	}
	if t, _ := options["noiseType"].(string); t != "" {
		md["type"] = t
	}
	if r.Input != "" && r.Input != noisy {
		md["clean_input"] = r.Input
	}
	r.Input = noisy
	if r.Metadata == nil {
		r.Metadata = map[string]any{}
	}
	r.Metadata["noise"] = md
}

// mastraCases reads the cases of file as score verdicts, each by verdict (ok false leaves
// the case out), its score clamped to [0, 1].
func mastraCases(file string, verdict func(MastraCase) (j Judged, ok bool, err error)) func(string) ([]Judged, error) {
	return func(dir string) ([]Judged, error) {
		cases, err := LoadMastraGrounding(dir, file)
		if err != nil {
			return nil, err
		}
		var out []Judged
		for _, c := range cases {
			j, ok, err := verdict(c)
			if err != nil {
				return nil, err
			}
			if ok {
				j.Score = clampUnit(j.Score)
				out = append(out, j)
			}
		}
		return out, nil
	}
}

// mastraScored reads the cases of file whose test asserts the score Mastra's scorer computed
// (kind scorer, with a score) as score verdicts. Mastra's scale option and, for a
// lower-is-better file, its direction are undone: the label is the score in [0, 1],
// higher is better.
func mastraScored(file string, lowerIsBetter bool) func(string) ([]Judged, error) {
	return mastraCases(file, func(c MastraCase) (Judged, bool, error) {
		e := c.Mastra.Expected
		if e.Kind != "scorer" || e.Score == nil || c.Run == nil {
			return Judged{}, false, nil
		}
		score := *e.Score / mastraScale(c)
		label := fmt.Sprintf("Mastra's test asserts %v (%s)", *e.Score, e.Assert)
		if lowerIsBetter {
			score = 1 - score
			label = fmt.Sprintf("Mastra's test asserts %v hallucinated, %.2f free (%s)", *e.Score, score, e.Assert)
		}
		return Judged{Run: *c.Run, Score: score, Label: label}, true, nil
	})
}

// mastraMocked reads the cases of file whose test mocks the scorer's result (kind
// mocked_run) as score verdicts: the score Mastra's authors wrote the case should have,
// not one Mastra's scorer computed.
func mastraMocked(file string) func(string) ([]Judged, error) {
	return mastraCases(file, func(c MastraCase) (Judged, bool, error) {
		e := c.Mastra.Expected
		if e.Kind != "mocked_run" || e.Score == nil || c.Run == nil {
			return Judged{}, false, nil
		}
		return Judged{Run: *c.Run, Score: *e.Score / mastraScale(c),
			Label: fmt.Sprintf("Mastra's test mocks %v (%s)", *e.Score, e.Assert)}, true, nil
	})
}

// mastraRecorded reads the cases of file that reach Mastra's judge with passages and whose
// recording holds the score Mastra computed from its judge's verdicts, as score verdicts:
// for a scorer whose tests assert no computed score, that is the nearest to a label Mastra
// gives. Mastra's scale is undone.
func mastraRecorded(file string) func(string) ([]Judged, error) {
	return mastraCases(file, func(c MastraCase) (Judged, bool, error) {
		var rec struct {
			Score *float64 `json:"score"`
		}
		if len(c.Recorded) > 0 && string(c.Recorded) != "null" {
			if err := json.Unmarshal(c.Recorded, &rec); err != nil {
				return Judged{}, false, fmt.Errorf("case %s: recorded: %w", c.ID, err)
			}
		}
		if rec.Score == nil || c.Run == nil || len(c.Run.Context) == 0 {
			return Judged{}, false, nil
		}
		return Judged{Run: *c.Run, Score: *rec.Score / mastraScale(c),
			Label: fmt.Sprintf("Mastra computed %v from its recorded verdicts (its test asserts %s)", *rec.Score, c.Mastra.Expected.Assert)}, true, nil
	})
}

// mastraScale is the case's scale option (1 when absent or 0, where Mastra's score is 0
// whatever the verdicts).
func mastraScale(c MastraCase) float64 {
	if s, ok := c.Mastra.Options["scale"].(float64); ok && s > 0 {
		return s
	}
	return 1
}

func clampUnit(x float64) float64 { return math.Min(math.Max(x, 0), 1) }
