package similarity

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/scorekit/scorekit/plugins/relevancy"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/scorertest"
)

// mastraSet is testdata/mastra-grounding/answer_similarity.json: Mastra's own test cases
// for its answer similarity scorer, with the judge's answers Mastra recorded.
const mastraSet = "../../testdata/mastra-grounding/answer_similarity.json"

type mastraCase struct {
	ID   string `json:"id"`
	Edge string `json:"edge"`
	Run  struct {
		Input    string `json:"input"`
		Output   string `json:"output"`
		Expected string `json:"expected"`
	} `json:"run"`
	Mastra struct {
		Options  map[string]float64 `json:"-"`
		Expected struct {
			Kind  string   `json:"kind"`
			Score *float64 `json:"score"`
		} `json:"expected"`
	} `json:"mastra"`
	Recorded *struct {
		Analysis struct {
			Matches []struct {
				GroundTruthUnit string `json:"groundTruthUnit"`
				OutputUnit      any    `json:"outputUnit"`
				MatchType       string `json:"matchType"`
				Explanation     string `json:"explanation"`
			} `json:"matches"`
			ExtraInOutput  []string `json:"extraInOutput"`
			Contradictions []struct {
				OutputUnit      string `json:"outputUnit"`
				GroundTruthUnit string `json:"groundTruthUnit"`
				Explanation     string `json:"explanation"`
			} `json:"contradictions"`
		} `json:"analysis"`
		Score float64 `json:"score"`
	} `json:"recorded"`
}

func loadMastra(t *testing.T) []mastraCase {
	t.Helper()
	b, err := os.ReadFile(mastraSet)
	if err != nil {
		t.Fatalf("%v: the labelled set is committed under testdata/mastra-grounding", err)
	}
	var f struct {
		Cases []json.RawMessage `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	out := make([]mastraCase, len(f.Cases))
	for i, raw := range f.Cases {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			t.Fatal(err)
		}
		// Options mix booleans and numbers; the weights are the numbers.
		var o struct {
			Mastra struct {
				Options map[string]any `json:"options"`
			} `json:"mastra"`
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			t.Fatal(err)
		}
		out[i].Mastra.Options = map[string]float64{}
		for k, v := range o.Mastra.Options {
			if f, ok := v.(float64); ok {
				out[i].Mastra.Options[k] = f
			}
		}
	}
	return out
}

// analysisOf is the analysis Mastra recorded, as this scorer reads its own judge's answer.
func (c mastraCase) analysisOf() analysis {
	var a analysis
	for _, m := range c.Recorded.Analysis.Matches {
		a.Units = append(a.Units, unit{Unit: m.GroundTruthUnit, Match: m.MatchType, Output: outputUnit(m.OutputUnit), Note: m.Explanation})
	}
	for _, x := range c.Recorded.Analysis.Contradictions {
		a.Contradictions = append(a.Contradictions, contradiction{x.OutputUnit, x.GroundTruthUnit, x.Explanation})
	}
	a.Extra = c.Recorded.Analysis.ExtraInOutput
	return a
}

// answer is the recorded analysis as this scorer's judge answers it.
func (c mastraCase) answer() string {
	type u struct {
		Unit   string `json:"unit"`
		Match  string `json:"match"`
		Output any    `json:"output_unit"`
		Note   string `json:"note"`
	}
	out := map[string]any{"contradictions": []any{}, "extra_output_units": c.Recorded.Analysis.ExtraInOutput}
	var units []u
	for _, m := range c.Recorded.Analysis.Matches {
		units = append(units, u{m.GroundTruthUnit, m.MatchType, m.OutputUnit, m.Explanation})
	}
	out["expected_units"] = units
	var cs []map[string]string
	for _, x := range c.Recorded.Analysis.Contradictions {
		cs = append(cs, map[string]string{"output_unit": x.OutputUnit, "expected_unit": x.GroundTruthUnit, "note": x.Explanation})
	}
	if cs != nil {
		out["contradictions"] = cs
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// weightsOf are Mastra's options of a case over its defaults, and its scale.
func (c mastraCase) weightsOf() (weights, float64) {
	w, scale := mastraWeights, 1.0
	for k, v := range c.Mastra.Options {
		switch k {
		case "semanticThreshold":
			w.SemanticThreshold = v
		case "exactMatchBonus":
			w.ExactMatchBonus = v
		case "missingPenalty":
			w.MissingPenalty = v
		case "contradictionPenalty":
			w.ContradictionPenalty = v
		case "extraInfoPenalty":
			w.ExtraInfoPenalty = v
		case "scale":
			scale = v
		}
	}
	return w, scale
}

// TestMastraCases holds the scorer to every case of Mastra's answer similarity tests:
//   - each of the 14 recorded runs: the formula on the recorded matches reproduces the
//     score Mastra computed from them (its options and scale included), and the scorer,
//     its judge answering the recorded matches in one call, gives that score to two
//     decimals (Mastra made three calls);
//   - the deliberate differences: a run without a reference (11, 12) or with a blank one
//     (15) is skipped without a call, where Mastra throws (11) or scores 0 after three calls
//     (12: no unit; 15: the formula on a "missing" match for an empty unit).
func TestMastraCases(t *testing.T) {
	cases := loadMastra(t)
	if len(cases) != 15 {
		t.Fatalf("%d cases, want Mastra's 15", len(cases))
	}
	recorded := 0
	for _, c := range cases {
		t.Run(c.ID, func(t *testing.T) {
			run := sdk.Run{ID: c.ID, Input: c.Run.Input, Output: c.Run.Output, Expected: c.Run.Expected}
			calls := 0
			j := scorertest.JudgeFunc(func(context.Context, sdk.CompletionRequest) (string, error) {
				calls++
				return c.answer(), nil
			})
			res := scorertest.New(t, New, scorertest.WithJudge(j)).Score(run)
			if c.Edge == "no_expected" || c.Edge == "blank_expected" {
				if res.Status != sdk.StatusSkipped || calls != 0 {
					t.Fatalf("%s after %d calls, want skipped without a call (Mastra: %s %v)", res.Status, calls, c.Mastra.Expected.Kind, c.Mastra.Expected.Score)
				}
				// Where Mastra recorded such a run, its 0 is the score of no units at all (12), or
				// its formula on the one "missing" match its judge made up (15).
				if r := c.Recorded; r != nil {
					want := 0.0
					if len(r.Analysis.Matches) > 0 {
						want = relevancy.RoundMastra(score(c.analysisOf(), mastraWeights).Score)
					}
					if r.Score != want {
						t.Fatalf("Mastra recorded %v from %d matches, the formula gives %v", r.Score, len(r.Analysis.Matches), want)
					}
				}
				return
			}
			if c.Recorded == nil {
				t.Fatalf("case %s has no recording and no check", c.ID)
			}
			recorded++
			w, scale := c.weightsOf()
			if got := relevancy.RoundMastra(score(c.analysisOf(), w).Score * scale); got != c.Recorded.Score {
				t.Fatalf("formula %v, Mastra computed %v", got, c.Recorded.Score)
			}
			if w != mastraWeights || scale != 1 {
				return // the scorer runs with Mastra's defaults below
			}
			if res.Status != sdk.StatusScored || math.Abs(*res.Score-c.Recorded.Score) > 0.005+1e-9 || calls != 1 {
				t.Fatalf("%s %v after %d calls (%v), Mastra computed %v in 3", res.Status, res.Value(), calls, res.Error, c.Recorded.Score)
			}
		})
	}
	if recorded != 12 {
		t.Fatalf("%d recorded runs scored, want the 12 with a reference (14 recordings, 2 without a reference)", recorded)
	}
}

// TestFormula holds the formula to Mastra's on specified matches, edges included.
func TestFormula(t *testing.T) {
	units := func(matches ...string) []unit {
		out := make([]unit, len(matches))
		for i, m := range matches {
			out[i] = unit{Unit: "u", Match: m}
		}
		return out
	}
	tests := []struct {
		name string
		a    analysis
		w    weights
		want float64
	}{
		{"all exact", analysis{Units: units("exact", "exact")}, mastraWeights, 1},
		{"all semantic", analysis{Units: units("semantic", "semantic")}, mastraWeights, 0.8 / 1.2},
		{"all partial", analysis{Units: units("partial")}, mastraWeights, 0.4 / 1.2},
		{"all missing clamps at 0", analysis{Units: units("missing", "missing")}, mastraWeights, 0},
		{"mixed", analysis{Units: units("exact", "semantic", "missing")}, mastraWeights, (1.2 + 0.8 - 0.15) / 3.6},
		{"one contradiction at Mastra's 1.0 zeroes it", analysis{Units: units("exact", "missing"), Contradictions: []contradiction{{}}}, mastraWeights, 0},
		{"one contradiction at 0.3", analysis{Units: units("exact", "exact"), Contradictions: []contradiction{{}}}, weights{0.8, 0.2, 0.15, 0.3, 0.05}, 0.7},
		{"extra units", analysis{Units: units("exact"), Extra: []string{"a", "b"}}, mastraWeights, 0.9},
		{"the extra penalty is capped at 0.2", analysis{Units: units("exact"), Extra: make([]string, 9)}, mastraWeights, 0.8},
		{"custom weights", analysis{Units: units("exact", "semantic")}, weights{0.7, 0.3, 0.2, 0.5, 0.05}, (1.3 + 0.7) / 2.6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := score(tt.a, tt.w).Score; math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("score %v, want %v", got, tt.want)
			}
		})
	}
}
