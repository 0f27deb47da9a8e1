package judgekit

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/sdk"
)

type testConfig struct {
	Method  string             `json:"method"`
	Weights map[string]float64 `json:"weights"`
}

// TestScorer holds Scorer to what each judge scorer's own methods did: Info as given,
// the defaults until configured, a config decoded over fresh defaults (unknown fields and
// the scorer's checks refused, the config kept as it was), the grading under the config.
func TestScorer(t *testing.T) {
	defaults := func() testConfig { return testConfig{Method: "a", Weights: map[string]float64{"x": 1, "y": 2}} }
	check := func(c testConfig) error { return OneOf("test", "method", c.Method, "a", "b") }
	var got []testConfig
	grade := func(_ context.Context, c testConfig, call sdk.Call) (sdk.Result, error) {
		got = append(got, c)
		return sdk.Scored(1, call.Run.Input), nil
	}
	s := NewScorer("test", func() sdk.Info { return Info("test", "a test scorer", ConfigSchema(), "{}") }, defaults, check, grade)
	if s.Info().Name != "test" || !s.ObservesContext() {
		t.Fatalf("Info %+v, ObservesContext %v", s.Info(), s.ObservesContext())
	}
	score := func() testConfig {
		t.Helper()
		res, err := s.Score(context.Background(), sdk.Call{Run: sdk.Run{Input: "in"}})
		if err != nil || res.Reason != "in" {
			t.Fatalf("Score = %+v, %v", res, err)
		}
		return got[len(got)-1]
	}
	if c := score(); c.Method != "a" || c.Weights["y"] != 2 {
		t.Errorf("before Configure the config is %+v; want the defaults", c)
	}
	if err := s.Configure(json.RawMessage(`{"method": "b", "weights": {"y": 3}}`)); err != nil {
		t.Fatal(err)
	}
	if c := score(); c.Method != "b" || c.Weights["x"] != 1 || c.Weights["y"] != 3 {
		t.Errorf("configured %+v; want method b over the defaults (x 1, y 3)", c)
	}
	if d := defaults(); d.Weights["y"] != 2 {
		t.Errorf("Configure changed the defaults: %+v", d)
	}
	for raw, want := range map[string]string{
		`{"method": "c"}`: `test: config: method "c": want a or b`,
		`{"other": 1}`:    `test: config: json: unknown field "other"`,
	} {
		err := s.Configure(json.RawMessage(raw))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Configure(%s) = %v; want %q", raw, err, want)
		}
	}
	if c := score(); c.Method != "b" || c.Weights["y"] != 3 {
		t.Errorf("a refused config changed the config to %+v", c)
	}
	if err := s.Configure(nil); err != nil {
		t.Fatal(err)
	}
	if c := score(); c.Method != "a" || c.Weights["y"] != 2 {
		t.Errorf("an empty config left %+v; want the defaults", c)
	}
}
