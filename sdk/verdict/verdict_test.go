package verdict

import (
	"errors"
	"math"
	"strings"
	"testing"
)

type scoreReply struct {
	Score     any    `json:"score"`
	Reasoning string `json:"reasoning"`
}

type typedReply struct {
	Score   float64  `json:"score"`
	Count   int      `json:"count"`
	Reason  string   `json:"reason"`
	OK      bool     `json:"ok"`
	Results []result `json:"results"`
}

type result struct {
	Result string `json:"result"`
	Reason string `json:"reason"`
}

func TestExtract(t *testing.T) {
	tests := []struct {
		name      string
		text      string
		wantScore float64
		wantWhy   string
	}{
		{"plain", `{"score": 1, "reasoning": "direct answer"}`, 1, "direct answer"},
		{"fenced", "```json\n{\"score\": 95, \"reasoning\": \"ok\"}\n```", 0.95, "ok"},
		{"fence without tag", "```\n{\"score\": 0.5}\n```", 0.5, ""},
		{"prose around", "Sure! Here is my verdict: {\"score\": 0.8, \"reasoning\": \"mostly\"} Hope it helps.", 0.8, "mostly"},
		{"trailing commas", `{"score": 0.7, "reasoning": "x",}`, 0.7, "x"},
		{"number as string", `{"score": "100"}`, 1, ""},
		{"single quotes", `{'score': 0.9, 'reasoning': 'it\'s fine'}`, 0.9, "it's fine"},
		{"python literals", `{"score": 0.4, "reasoning": None}`, 0.4, ""},
		{"stated scale", `{"score": "7/10"}`, 0.7, ""},
		{"percent", `{"score": "95%"}`, 0.95, ""},
		{"braces in prose first", `I weigh {relevance} here. {"score": 0.6}`, 0.6, ""},
		{"braces inside strings", `{"reasoning": "uses } and { freely", "score": 0.3}`, 0.3, "uses } and { freely"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r scoreReply
			if err := Extract(tt.text, &r); err != nil {
				t.Fatalf("Extract: %v", err)
			}
			got, err := Score(r.Score)
			if err != nil {
				t.Fatalf("Score(%v): %v", r.Score, err)
			}
			if math.Abs(got-tt.wantScore) > 1e-9 || r.Reasoning != tt.wantWhy {
				t.Fatalf("got %v %q, want %v %q", got, r.Reasoning, tt.wantScore, tt.wantWhy)
			}
		})
	}
}

func TestExtractCoercesToFieldTypes(t *testing.T) {
	var r typedReply
	text := `{"score": "0.25", "count": "3", "reason": 42, "ok": "true", "results": [{"result": "yes", "reason": 7,}]}`
	if err := Extract(text, &r); err != nil {
		t.Fatal(err)
	}
	if r.Score != 0.25 || r.Count != 3 || r.Reason != "42" || !r.OK || len(r.Results) != 1 || r.Results[0].Reason != "7" {
		t.Fatalf("got %+v", r)
	}
}

func TestExtractErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		want error
	}{
		{"truncated", `{"score": 0.9, "reasoning": "the answer addresses`, ErrTruncated},
		{"truncated in fence", "```json\n{\"results\": [{\"result\": \"yes\"}, {\"result\": \"n", ErrTruncated},
		{"no json", "The answer is relevant. Score: high.", ErrNoJSON},
		{"empty", "", ErrNoJSON},
		{"malformed", `{"score": 0.9 "reasoning": "x"}`, ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r scoreReply
			err := Extract(tt.text, &r)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if tt.text != "" && !strings.Contains(err.Error(), tt.text[:10]) {
				t.Fatalf("error %q does not quote the raw text", err)
			}
		})
	}
}

func TestScore(t *testing.T) {
	tests := []struct {
		name    string
		in      any
		want    float64
		wantErr bool
	}{
		{"one is the top of 0-1", 1, 1, false},
		{"json float", 0.95, 0.95, false},
		{"zero", 0.0, 0, false},
		{"percentage", 95.0, 0.95, false},
		{"string hundred", "100", 1, false},
		{"string fraction", "0.25", 0.25, false},
		{"out of ten", "8 out of 10", 0.8, false},
		{"ambiguous seven", 7.0, 0, true},
		{"ambiguous ten", "10", 0, true},
		{"negative", -0.1, 0, true},
		{"above hundred", 120.0, 0, true},
		{"nan", math.NaN(), 0, true},
		{"missing", nil, 0, true},
		{"word", "high", 0, true},
		{"bool", true, 0, true},
		{"fraction above one", "11/10", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Score(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Score(%v) err = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrScore) {
				t.Fatalf("error %v does not wrap ErrScore", err)
			}
			if err == nil && math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("Score(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestScoreOutOf(t *testing.T) {
	tests := []struct {
		name    string
		in      any
		max     float64
		want    float64
		wantErr bool
	}{
		{"ten point scale", 7.0, 10, 0.7, false},
		{"five point scale", "4", 5, 0.8, false},
		{"stated wins", "50%", 10, 0.5, false},
		{"above max", 11.0, 10, 0, true},
		{"bad max", 1.0, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ScoreOutOf(tt.in, tt.max)
			if (err != nil) != tt.wantErr || (err == nil && math.Abs(got-tt.want) > 1e-9) {
				t.Fatalf("ScoreOutOf(%v, %v) = %v, %v", tt.in, tt.max, got, err)
			}
		})
	}
}

// FuzzExtract holds Extract to its contract on any text: no panic, and an error that
// wraps one of the package's sentinels whenever it fails.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{`{"score": 1}`, "```json\n{'a': [1,2,],}\n```", `{"x": "unterminated`, `[{"result": "yes"}]`, `{"s": True}`, `'}{'`, `{"a":"\'"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var r typedReply
		err := Extract(text, &r)
		if err != nil && !errors.Is(err, ErrNoJSON) && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrMalformed) {
			t.Fatalf("Extract(%q) = %v, not a sentinel", text, err)
		}
	})
}

func TestScores(t *testing.T) {
	tests := []struct {
		name        string
		in          map[string]float64
		want        map[string]float64
		wantPercent bool
		err         string
	}{
		{"0-1 as given", map[string]float64{"a": 0.9, "b": 1, "c": 0}, map[string]float64{"a": 0.9, "b": 1, "c": 0}, false, ""},
		{"0-100 divided together, a 1 beside 90 is 1 percent", map[string]float64{"a": 90, "b": 1, "c": 0}, map[string]float64{"a": 0.9, "b": 0.01, "c": 0}, true, ""},
		{"100 is 1", map[string]float64{"a": 100, "b": 50}, map[string]float64{"a": 1, "b": 0.5}, true, ""},
		{"a 1-10 answer is ambiguous", map[string]float64{"a": 8, "b": 7}, nil, false, "ambiguous"},
		{"above 100", map[string]float64{"a": 101}, nil, false, `"a" is 101`},
		{"negative", map[string]float64{"a": -0.1}, nil, false, `"a" is -0.1`},
		{"NaN", map[string]float64{"a": math.NaN()}, nil, false, "NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, percent, err := Scores(tt.in)
			if tt.err != "" {
				if !errors.Is(err, ErrScore) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want ErrScore containing %q", err, tt.err)
				}
				return
			}
			if err != nil || percent != tt.wantPercent {
				t.Fatalf("err %v percent %v", err, percent)
			}
			for k, v := range tt.want {
				if math.Abs(got[k]-v) > 1e-12 {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
		})
	}
}
