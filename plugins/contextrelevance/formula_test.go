package contextrelevance

import (
	"encoding/json"
	"math"
	"testing"
)

var mastraPenalties = penalties{unusedHigh: 0.1, missingPerItem: 0.15, maxMissing: 0.5}

// TestMastraFormula holds mastraScore to Mastra's generateScore on specified ratings,
// edges included.
func TestMastraFormula(t *testing.T) {
	r := func(level string, used bool) rating { return rating{Relevance: level, Used: used} }
	tests := []struct {
		name    string
		ratings []rating
		missing int
		p       penalties
		usage   bool
		want    float64
	}{
		{"one high passage, used", []rating{r("high", true)}, 0, mastraPenalties, true, 1},
		{"every level once, all used", []rating{r("high", true), r("medium", true), r("low", true), r("none", true)}, 0, mastraPenalties, true, 0.5},
		{"all irrelevant", []rating{r("none", false), r("none", false)}, 0, mastraPenalties, true, 0},
		{"a high passage unused costs 0.1", []rating{r("high", true), r("high", false)}, 0, mastraPenalties, true, 0.9},
		{"unused medium costs nothing", []rating{r("high", true), r("medium", false)}, 0, mastraPenalties, true, 0.85},
		{"one missing item costs 0.15", []rating{r("high", true)}, 1, mastraPenalties, true, 0.85},
		{"the missing penalty is capped at 0.5", []rating{r("high", true)}, 5, mastraPenalties, true, 0.5},
		{"penalties past the base clamp at 0", []rating{r("low", false), r("high", false), r("none", false)}, 4, mastraPenalties, true, 0},
		{"no answer: use is not judged", []rating{r("high", false), r("high", false)}, 0, mastraPenalties, false, 1},
		{"custom penalties", []rating{r("high", false), r("medium", true)}, 2, penalties{unusedHigh: 0.2, missingPerItem: 0.05, maxMissing: 0.08}, true, 0.85 - 0.2 - 0.08},
		{"penalties off", []rating{r("high", false)}, 3, penalties{}, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mastraScore(tt.ratings, tt.missing, tt.p, tt.usage)
			if math.Abs(got.Score-tt.want) > 1e-9 {
				t.Fatalf("score %v (%+v), want %v", got.Score, got, tt.want)
			}
		})
	}
}

// TestSchemasAreJSON: the answer schemas the requests carry are valid JSON objects.
func TestSchemasAreJSON(t *testing.T) {
	for _, s := range []string{mastraSchema, deepEvalSchema} {
		var v map[string]any
		if err := json.Unmarshal(compact(s), &v); err != nil || v["type"] != "object" {
			t.Fatalf("%v: %s", err, s)
		}
	}
}
