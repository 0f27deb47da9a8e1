package host

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/citation"
	"github.com/scorekit/scorekit/sdk"
)

var run = sdk.Run{Input: "What is the capital of France?", Output: "Paris"}

// check compares what every pipeline test cares about.
type want struct {
	status sdk.Status
	score  *float64 // nil: no score
	passed *bool
	code   string   // error code of a failed result
	msg    string   // substring of the error message
	rules  []string // Adjustments as rule:target, in order; nil means none
	flags  []string // flags that must be present
	dims   map[string]float64
}

func (w want) check(t *testing.T, got sdk.Result) {
	t.Helper()
	if got.Status != w.status {
		t.Fatalf("status %q, want %q (error %v, reason %q)", got.Status, w.status, got.Error, got.Reason)
	}
	switch {
	case w.score == nil && got.Score != nil:
		t.Errorf("score %v, want none", *got.Score)
	case w.score != nil && got.Score == nil:
		t.Errorf("no score, want %v", *w.score)
	case w.score != nil && *got.Score != *w.score:
		t.Errorf("score %v, want %v", *got.Score, *w.score)
	}
	switch {
	case w.passed == nil && got.Passed != nil:
		t.Errorf("passed %v, want none", *got.Passed)
	case w.passed != nil && got.Passed == nil:
		t.Errorf("no passed, want %v", *w.passed)
	case w.passed != nil && *got.Passed != *w.passed:
		t.Errorf("passed %v, want %v", *got.Passed, *w.passed)
	}
	if w.code != "" {
		if got.Error == nil || got.Error.Code != w.code {
			t.Errorf("error %v, want code %q", got.Error, w.code)
		}
	}
	if w.msg != "" && (got.Error == nil || !strings.Contains(got.Error.Message, w.msg)) {
		t.Errorf("error %v, want a message containing %q", got.Error, w.msg)
	}
	if r := rules(got.Adjustments); !slices.Equal(r, w.rules) && (len(r) > 0 || len(w.rules) > 0) {
		t.Errorf("adjustments %v, want %v", r, w.rules)
	}
	for _, f := range w.flags {
		if !got.HasFlag(f) {
			t.Errorf("flags %v, want %q", got.Flags, f)
		}
	}
	if w.dims != nil {
		if len(got.Dimensions) != len(w.dims) {
			t.Errorf("dimensions %v, want %v", got.Dimensions, w.dims)
		}
		for k, v := range w.dims {
			if got.Dimensions[k] != v {
				t.Errorf("dimension %s = %v, want %v (all %v)", k, got.Dimensions[k], v, got.Dimensions)
			}
		}
	}
	if got.Telemetry.Runtime != RuntimeNative {
		t.Errorf("telemetry runtime %q, want %q", got.Telemetry.Runtime, RuntimeNative)
	}
	if got.Telemetry.DurationMS < 0 {
		t.Errorf("telemetry duration %v ms", got.Telemetry.DurationMS)
	}
}

func scored(v float64) sdk.Result { return sdk.Scored(v, "because") }

func withDims(v float64, dims map[string]float64) sdk.Result {
	r := scored(v)
	r.Dimensions = dims
	return r
}

func TestScoreNormalize(t *testing.T) {
	unit := sdk.Range{}
	pct := sdk.Range{Min: 0, Max: 100}
	likert := sdk.Range{Min: 1, Max: 5}
	cases := []struct {
		name string
		rng  sdk.Range
		res  sdk.Result
		want want
	}{
		{"unit in range is untouched", unit, scored(0.73), want{status: sdk.StatusScored, score: ptr(0.73), passed: ptr(true)}},
		{"explicit 0-1 range is the unit range", sdk.Unit, scored(0.2), want{status: sdk.StatusScored, score: ptr(0.2), passed: ptr(false)}},
		{"exactly 1 is not a percentage", unit, scored(1), want{status: sdk.StatusScored, score: ptr(1.0), passed: ptr(true)}},
		{"float noise above 1 is 1", unit, scored(1 + 1e-12), want{status: sdk.StatusScored, score: ptr(1.0), passed: ptr(true), rules: []string{"normalize_range:score"}}},
		// No percentage rule in the host: a plugin's own score outside its range is wrong, not a
		// percentage. Reading a judge's 0-100 answer is the judge scorer's job (sdk/verdict).
		{"2 on a declared 0-1 range fails, no percentage", sdk.Unit, scored(2), want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult,
			msg: "score is 2, outside its declared range [0, 1]; fix the scorer"}},
		{"85 on a declared 0-1 range fails", sdk.Unit, scored(85), want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: "score is 85"}},
		{"a dimension of 90 on a 0-1 range fails naming it", sdk.Unit, withDims(0.5, map[string]float64{"a": 90, "b": 0.2}),
			want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: `dimension "a" is 90`}},
		{"a 1-5 score without a declared range says to declare it", unit, scored(3), want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult,
			msg: `score is 3, outside the range [0, 1] the host assumes when a scorer declares none; if the scorer scores on another scale, declare its range (Info.Range, "range" in its info: e.g. {"min": 1, "max": 5})`}},
		{"negative fails", unit, scored(-0.1), want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: "score is -0.1, outside the range [0, 1]"}},
		{"negative on a declared 0-1 range fails", sdk.Unit, scored(-0.1), want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: "score is -0.1, outside its declared range [0, 1]"}},
		{"NaN fails", unit, scored(math.NaN()), want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: "NaN"}},
		{"+Inf fails", unit, scored(math.Inf(1)), want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: "Inf"}},
		{"-Inf dimension fails", unit, withDims(0.5, map[string]float64{"a": math.Inf(-1)}), want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: `dimension "a"`}},
		{"negative dimension fails naming it", unit, withDims(0.5, map[string]float64{"tone": -2}), want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: `dimension "tone" is -2`}},
		{"0-100 range maps 73 to 0.73", pct, scored(73), want{status: sdk.StatusScored, score: ptr(0.73), passed: ptr(true), rules: []string{"normalize_range:score"}}},
		{"0-100 range has no percentage flag", pct, scored(40), want{status: sdk.StatusScored, score: ptr(0.4), passed: ptr(false), rules: []string{"normalize_range:score"}}},
		{"0-100 range rejects 150", pct, scored(150), want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: "outside its declared range [0, 100]"}},
		{"1-5 range maps 4 to 0.75", likert, scored(4), want{status: sdk.StatusScored, score: ptr(0.75), passed: ptr(true), rules: []string{"normalize_range:score"}}},
		{"1-5 range maps 1 to 0", likert, scored(1), want{status: sdk.StatusScored, score: ptr(0.0), passed: ptr(false), rules: []string{"normalize_range:score"}}},
		{"1-5 range rejects 0.5", likert, scored(0.5), want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: "outside its declared range [1, 5]"}},
		{"1-5 range rejects 50", likert, scored(50), want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: "score is 50"}},
		{"1-5 range maps dimensions too", likert, withDims(3, map[string]float64{"clarity": 5}),
			want{status: sdk.StatusScored, score: ptr(0.5), passed: ptr(true), rules: []string{"normalize_range:score", "normalize_range:clarity"}, dims: map[string]float64{"clarity": 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inf := info("norm")
			inf.Range = c.rng
			r := newRig(t, inf, fixed(c.res))
			c.want.check(t, r.open(t, OpenOptions{}).Score(context.Background(), run))
		})
	}
}

// masis declares MASIS's four dimensions with their weights.
func masis() sdk.Info {
	inf := info("masis")
	inf.Threshold = 0.7
	inf.Dimensions = []sdk.Dimension{
		{Name: "faithfulness", Weight: 0.35},
		{Name: "relevance", Weight: 0.25},
		{Name: "completeness", Weight: 0.25},
		{Name: "reasoning", Weight: 0.15},
	}
	return inf
}

func TestScoreCitationClamps(t *testing.T) {
	high := map[string]float64{"faithfulness": 0.9, "relevance": 0.9, "completeness": 0.9, "reasoning": 0.9}
	cases := []struct {
		name  string
		audit *sdk.CitationAudit
		faith float64 // the scorer's faithfulness
		want  float64 // faithfulness after the clamps
		rules []string
		// overall is 0.35*faithfulness + 0.65*0.9, rounded half away from zero
		overall float64
	}{
		{"clean audit clamps nothing", &sdk.CitationAudit{Citations: 3, Sentences: 3}, 0.9, 0.9, nil, 0.9},
		{"hallucination caps at 0.4", &sdk.CitationAudit{HallucinationDetected: true}, 0.9, 0.4, []string{RuleClampHallucination}, 0.73},
		{"invalid citation caps at 0.4", &sdk.CitationAudit{InvalidCitations: []string{"7"}}, 0.9, 0.4, []string{RuleClampInvalidCitations}, 0.73},
		{"both 0.4 rules fire", &sdk.CitationAudit{HallucinationDetected: true, InvalidCitations: []string{"7"}}, 0.9, 0.4, []string{RuleClampHallucination, RuleClampInvalidCitations}, 0.73},
		{"4 uncited sentences clamp nothing", &sdk.CitationAudit{UncitedSentences: 4}, 0.9, 0.9, nil, 0.9},
		{"5 uncited sentences cap at 0.5", &sdk.CitationAudit{UncitedSentences: 5}, 0.9, 0.5, []string{RuleClampUncited5}, 0.76},
		{"10 uncited sentences cap at 0.3", &sdk.CitationAudit{UncitedSentences: 10}, 0.9, 0.3, []string{RuleClampUncited5, RuleClampUncited10}, 0.69},
		{"strictest cap wins over hallucination", &sdk.CitationAudit{UncitedSentences: 12, HallucinationDetected: true}, 0.9, 0.3, []string{RuleClampUncited5, RuleClampHallucination, RuleClampUncited10}, 0.69},
		{"hallucination with 6 uncited ends at 0.4", &sdk.CitationAudit{UncitedSentences: 6, HallucinationDetected: true}, 0.9, 0.4, []string{RuleClampUncited5, RuleClampHallucination}, 0.73},
		{"a value under the cap is left alone", &sdk.CitationAudit{HallucinationDetected: true}, 0.2, 0.2, nil, 0.66},
		{"a value between caps meets only the lower one", &sdk.CitationAudit{UncitedSentences: 10}, 0.45, 0.3, []string{RuleClampUncited10}, 0.69},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dims := map[string]float64{}
			for k, v := range high {
				dims[k] = v
			}
			dims["faithfulness"] = c.faith
			var got sdk.Call
			r := newRig(t, masis(), func(_ context.Context, call sdk.Call) (sdk.Result, error) {
				got = call
				return withDims(0.9, dims), nil
			})
			in := run
			in.CitationAudit = c.audit
			res := r.open(t, OpenOptions{}).Score(context.Background(), in)
			if res.Status != sdk.StatusScored {
				t.Fatalf("status %q: %v", res.Status, res.Error)
			}
			if got.Run.CitationAudit != c.audit {
				t.Errorf("the scorer saw audit %v, want the run's %v", got.Run.CitationAudit, c.audit)
			}
			if f := res.Dimensions["faithfulness"]; f != c.want {
				t.Errorf("faithfulness %v, want %v", f, c.want)
			}
			var clamps []string
			for _, a := range res.Adjustments {
				if strings.HasPrefix(a.Rule, "clamp_") {
					clamps = append(clamps, a.Rule)
					if a.Target != "faithfulness" || a.To > a.From {
						t.Errorf("adjustment %+v: want faithfulness lowered", a)
					}
				}
			}
			if !slices.Equal(clamps, c.rules) {
				t.Errorf("clamps %v, want %v", clamps, c.rules)
			}
			if res.CitationAudit == nil || res.CitationAudit.UncitedSentences != c.audit.UncitedSentences {
				t.Errorf("result citation audit %v, want the applied %v", res.CitationAudit, c.audit)
			}
			// The overall score follows the clamped faithfulness.
			if *res.Score != c.overall {
				t.Errorf("score %v, want weighted %v", *res.Score, c.overall)
			}
		})
	}
}

func TestScoreCitationAuditSource(t *testing.T) {
	passages := []sdk.Passage{{Text: "Paris is the capital of France."}}
	cases := []struct {
		name   string
		info   sdk.Info
		output string
	}{
		{"faithfulness scorer gets the computed audit", masis(), "Paris is the capital [1]. It is in Europe [9]."},
		{"output without citations", masis(), "Paris is the capital."},
		{"scorer without faithfulness gets none", info("plain"), "Paris is the capital [1]."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var seen *sdk.CitationAudit
			r := newRig(t, c.info, func(_ context.Context, call sdk.Call) (sdk.Result, error) {
				seen = call.Run.CitationAudit
				res := scored(0.9)
				if len(c.info.Dimensions) > 0 {
					res.Dimensions = map[string]float64{"faithfulness": 0.9, "relevance": 0.9, "completeness": 0.9, "reasoning": 0.9}
				}
				return res, nil
			})
			in := sdk.Run{Input: "capital?", Output: c.output, Context: passages}
			res := r.open(t, OpenOptions{}).Score(context.Background(), in)
			numbered := []sdk.Passage{{ID: "1", Text: passages[0].Text}}
			want, ok := citation.Audit(c.output, numbered)
			if c.info.Name == "plain" || !ok {
				if seen != nil || res.CitationAudit != nil {
					t.Fatalf("audit %v / %v, want none", seen, res.CitationAudit)
				}
				return
			}
			if seen == nil || fmt.Sprint(*seen) != fmt.Sprint(want) {
				t.Errorf("scorer saw %v, want citation.Audit's %v", seen, want)
			}
			if res.CitationAudit == nil || fmt.Sprint(*res.CitationAudit) != fmt.Sprint(want) {
				t.Errorf("result audit %v, want %v", res.CitationAudit, want)
			}
		})
	}
}

func TestScoreWeightedOverall(t *testing.T) {
	cases := []struct {
		name string
		info sdk.Info
		res  sdk.Result
		want want
	}{
		{
			// 0.35*0.8 + 0.25*0.9 + 0.25*0.6 + 0.15*0.7 = 0.28 + 0.225 + 0.15 + 0.105 = 0.76
			name: "MASIS weights", info: masis(),
			res: withDims(0.5, map[string]float64{"faithfulness": 0.8, "relevance": 0.9, "completeness": 0.6, "reasoning": 0.7}),
			want: want{status: sdk.StatusScored, score: ptr(0.76), passed: ptr(true), rules: []string{"overall_weighted:score"},
				dims: map[string]float64{"faithfulness": 0.8, "relevance": 0.9, "completeness": 0.6, "reasoning": 0.7}},
		},
		{
			name: "a score that is already the weighted mean is not adjusted", info: masis(),
			res:  withDims(0.76, map[string]float64{"faithfulness": 0.8, "relevance": 0.9, "completeness": 0.6, "reasoning": 0.7}),
			want: want{status: sdk.StatusScored, score: ptr(0.76), passed: ptr(true)},
		},
		{
			// (0.25*0.9 + 0.25*0.6 + 0.15*0.7) / 0.65 = 0.48 / 0.65 = 0.7384...
			name: "a skipped dimension renormalizes the weights", info: masis(),
			res: func() sdk.Result {
				r := withDims(0.5, map[string]float64{"relevance": 0.9, "completeness": 0.6, "reasoning": 0.7})
				r.SkippedDimensions = map[string]string{"faithfulness": "no context to be faithful to"}
				return r
			}(),
			want: want{status: sdk.StatusScored, score: ptr(0.74), passed: ptr(true), rules: []string{"overall_weighted:score"},
				dims: map[string]float64{"relevance": 0.9, "completeness": 0.6, "reasoning": 0.7}},
		},
		{
			name: "a skipped dimension with a value is left out too", info: masis(),
			res: func() sdk.Result {
				r := withDims(0.5, map[string]float64{"faithfulness": 0, "relevance": 0.9, "completeness": 0.6, "reasoning": 0.7})
				r.SkippedDimensions = map[string]string{"faithfulness": "no context"}
				return r
			}(),
			want: want{status: sdk.StatusScored, score: ptr(0.74), passed: ptr(true), rules: []string{"overall_weighted:score"}},
		},
		{
			name: "missing declared dimension fails naming it", info: masis(),
			res:  withDims(0.5, map[string]float64{"faithfulness": 0.8, "relevance": 0.9, "completeness": 0.6}),
			want: want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: `missing declared dimension "reasoning"`},
		},
		{
			name: "undeclared dimension fails naming it", info: masis(),
			res:  withDims(0.5, map[string]float64{"faithfulness": 0.8, "relevance": 0.9, "completeness": 0.6, "reasoning": 0.7, "tone": 1}),
			want: want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: `dimension "tone" is not declared`},
		},
		{
			name: "of several undeclared dimensions the first by name is named", info: masis(),
			res:  withDims(0.5, map[string]float64{"faithfulness": 0.8, "relevance": 0.9, "completeness": 0.6, "reasoning": 0.7, "zeta": 1, "alpha": 1, "mid": 1}),
			want: want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: `dimension "alpha" is not declared`},
		},
		{
			name: "undeclared skipped dimension fails", info: masis(),
			res: func() sdk.Result {
				r := withDims(0.5, map[string]float64{"faithfulness": 0.8, "relevance": 0.9, "completeness": 0.6, "reasoning": 0.7})
				r.SkippedDimensions = map[string]string{"tone": "n/a"}
				return r
			}(),
			want: want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: `dimension "tone" is not declared`},
		},
		{
			name: "every dimension skipped is skipped", info: masis(),
			res: func() sdk.Result {
				r := scored(0.5)
				r.SkippedDimensions = map[string]string{"faithfulness": "a", "relevance": "b", "completeness": "c", "reasoning": "d"}
				return r
			}(),
			want: want{status: sdk.StatusSkipped},
		},
		{
			// 1-5 dims: faithfulness 5 -> 1, relevance 3 -> 0.5, completeness 1 -> 0, reasoning 5 -> 1
			// 0.35*1 + 0.25*0.5 + 0 + 0.15*1 = 0.625 -> 0.63 (round half away from zero)
			name: "dimensions are normalized before weighting",
			info: func() sdk.Info { i := masis(); i.Range = sdk.Range{Min: 1, Max: 5}; return i }(),
			res:  withDims(3, map[string]float64{"faithfulness": 5, "relevance": 3, "completeness": 1, "reasoning": 5}),
			want: want{status: sdk.StatusScored, score: ptr(0.63), passed: ptr(false),
				rules: []string{"normalize_range:score", "normalize_range:faithfulness", "normalize_range:relevance", "normalize_range:completeness", "normalize_range:reasoning", "overall_weighted:score"},
				dims:  map[string]float64{"faithfulness": 1, "relevance": 0.5, "completeness": 0, "reasoning": 1}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.info, fixed(c.res))
			c.want.check(t, r.open(t, OpenOptions{}).Score(context.Background(), run))
		})
	}
}

func TestScoreScaleAndRounding(t *testing.T) {
	dims := map[string]float64{"faithfulness": 0.8, "relevance": 0.9, "completeness": 0.6, "reasoning": 0.7}
	cases := []struct {
		name     string
		scale    *float64
		decimals int
		res      sdk.Result
		info     sdk.Info
		want     want
	}{
		{"nil scale is 1", nil, 0, scored(0.123456), info("s"), want{status: sdk.StatusScored, score: ptr(0.12), passed: ptr(false)}},
		{"scale 0 is honoured; passed uses the unscaled score", ptr(0.0), 0, scored(0.9), info("s"), want{status: sdk.StatusScored, score: ptr(0.0), passed: ptr(true)}},
		{"scale 10", ptr(10.0), 0, scored(0.123456), info("s"), want{status: sdk.StatusScored, score: ptr(1.23), passed: ptr(false)}},
		{"scale 10 scales dimensions", ptr(10.0), 0, withDims(0, dims), masis(),
			want{status: sdk.StatusScored, score: ptr(7.6), passed: ptr(true), rules: []string{"overall_weighted:score"},
				dims: map[string]float64{"faithfulness": 8, "relevance": 9, "completeness": 6, "reasoning": 7}}},
		{"decimals 4", nil, 4, scored(0.123456), info("s"), want{status: sdk.StatusScored, score: ptr(0.1235), passed: ptr(false)}},
		{"scale 100 with decimals 1", ptr(100.0), 1, scored(0.123456), info("s"), want{status: sdk.StatusScored, score: ptr(12.3), passed: ptr(false)}},
		{"threshold reached exactly passes", nil, 0, scored(0.5), info("s"), want{status: sdk.StatusScored, score: ptr(0.5), passed: ptr(true)}},
		{"just under the threshold fails although it rounds to it", nil, 0, scored(0.4999), info("s"), want{status: sdk.StatusScored, score: ptr(0.5), passed: ptr(false)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.info.Decimals = c.decimals
			r := newRig(t, c.info, fixed(c.res))
			c.want.check(t, r.open(t, OpenOptions{Scale: c.scale}).Score(context.Background(), run))
		})
	}
}

func TestScoreStatus(t *testing.T) {
	skippedWithDims := sdk.Skipped("no context")
	skippedWithDims.Dimensions = map[string]float64{"a": 3}
	scoredPassed := scored(0.2)
	scoredPassed.Passed = ptr(true)
	scoredPassed.Adjustments = []sdk.Adjustment{{Rule: "made_up"}}
	skippedScore := sdk.Skipped("x")
	skippedScore.Score = ptr(0.5)
	cases := []struct {
		name string
		res  sdk.Result
		err  error
		want want
	}{
		{"skipped keeps no score or passed", sdk.Skipped("no context"), nil, want{status: sdk.StatusSkipped}},
		{"skipped drops native dimensions", skippedWithDims, nil, want{status: sdk.StatusSkipped, dims: map[string]float64{}}},
		{"failed passes through with its code", sdk.Failed(sdk.CodeJudgeError, "judge said 500"), nil, want{status: sdk.StatusFailed, code: sdk.CodeJudgeError, msg: "judge said 500"}},
		{"failed with an unknown code becomes scorer_error", sdk.Failed("oops", "bad"), nil, want{status: sdk.StatusFailed, code: sdk.CodeScorerError, msg: `unknown error code "oops"`}},
		{"the host decides passed and adjustments", scoredPassed, nil, want{status: sdk.StatusScored, score: ptr(0.2), passed: ptr(false)}},
		{"scored without a score is invalid", sdk.Result{Status: sdk.StatusScored}, nil, want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: "without a score"}},
		{"skipped with a score is invalid", skippedScore, nil, want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: "skipped with a score"}},
		{"missing status is invalid", sdk.Result{}, nil, want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult, msg: "missing status"}},
		{"failed without a message is invalid", sdk.Result{Status: sdk.StatusFailed}, nil, want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult}},
		{"backend *sdk.Error keeps its code", sdk.Result{}, &sdk.Error{Code: sdk.CodeLimitExceeded, Message: "budget"}, want{status: sdk.StatusFailed, code: sdk.CodeLimitExceeded, msg: "budget"}},
		{"wrapped *sdk.Error keeps its code", sdk.Result{}, fmt.Errorf("call: %w", &sdk.Error{Code: sdk.CodeTrap, Message: "unreachable"}), want{status: sdk.StatusFailed, code: sdk.CodeTrap}},
		{"plain error is scorer_error", sdk.Result{}, errors.New("boom"), want{status: sdk.StatusFailed, code: sdk.CodeScorerError, msg: "boom"}},
		{"error wrapping ErrInvalidResult is invalid_result", sdk.Result{}, fmt.Errorf("result: %w", sdk.ErrInvalidResult), want{status: sdk.StatusFailed, code: sdk.CodeInvalidResult}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, info("st"), func(context.Context, sdk.Call) (sdk.Result, error) { return c.res, c.err })
			c.want.check(t, r.open(t, OpenOptions{}).Score(context.Background(), run))
		})
	}
}

func TestScoreInvalidRun(t *testing.T) {
	cases := []struct {
		name string
		run  sdk.Run
		msg  string
	}{
		{"empty passage text", sdk.Run{Output: "x", Context: []sdk.Passage{{Text: "a"}, {ID: "d", Text: ""}}}, `context[1] (id "d") has empty text`},
		{"negative audit counts", sdk.Run{Output: "x", CitationAudit: &sdk.CitationAudit{UncitedSentences: -1}}, "citation_audit counts must be >= 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, info("ir"), fixed(scored(1)))
			res := r.open(t, OpenOptions{}).Score(context.Background(), c.run)
			want{status: sdk.StatusFailed, code: sdk.CodeInvalidRun, msg: c.msg}.check(t, res)
			if n := r.calls.Load(); n != 0 {
				t.Errorf("scorer called %d times for an invalid run, want 0", n)
			}
		})
	}
}

func TestScoreNumbersContextOnACopy(t *testing.T) {
	var seen []sdk.Passage
	r := newRig(t, info("num"), func(_ context.Context, call sdk.Call) (sdk.Result, error) {
		seen = call.Run.Context
		return scored(1), nil
	})
	in := sdk.Run{Output: "x", Context: []sdk.Passage{{Text: "a"}, {ID: "doc-2", Text: "b"}, {Text: "c"}}}
	r.open(t, OpenOptions{}).Score(context.Background(), in)
	var ids []string
	for _, p := range seen {
		ids = append(ids, p.ID)
	}
	if want := []string{"1", "doc-2", "3"}; !slices.Equal(ids, want) {
		t.Errorf("scorer saw ids %v, want %v", ids, want)
	}
	if in.Context[0].ID != "" {
		t.Errorf("the caller's passage was numbered in place: %q", in.Context[0].ID)
	}
}

func TestScoreDeadlines(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	cases := []struct {
		name   string
		ctx    func() (context.Context, context.CancelFunc)
		scorer func(ctx context.Context, _ sdk.Call) (sdk.Result, error)
		code   string
		msg    string
		calls  int32
	}{
		{
			name: "scorer honouring its context times out at the host limit",
			ctx:  func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			scorer: func(ctx context.Context, _ sdk.Call) (sdk.Result, error) {
				<-ctx.Done()
				return sdk.Result{}, ctx.Err()
			},
			code: sdk.CodeTimeout, msg: "within the host's 20ms limit", calls: 1,
		},
		{
			name: "scorer ignoring its context still times out",
			ctx:  func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			scorer: func(context.Context, sdk.Call) (sdk.Result, error) {
				<-block
				return scored(1), nil
			},
			code: sdk.CodeTimeout, msg: "20ms", calls: 1,
		},
		{
			name: "a call canceled before it starts is canceled and never reaches the scorer",
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			},
			scorer: func(ctx context.Context, _ sdk.Call) (sdk.Result, error) {
				<-ctx.Done()
				return sdk.Result{}, ctx.Err()
			},
			code: sdk.CodeCanceled, msg: "caller canceled",
		},
		{
			name: "a caller deadline already passed is a timeout that says whose",
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			},
			scorer: func(ctx context.Context, _ sdk.Call) (sdk.Result, error) {
				<-ctx.Done()
				return sdk.Result{}, ctx.Err()
			},
			code: sdk.CodeTimeout, msg: "caller's deadline",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, info("slow"), c.scorer, WithTimeout(20*time.Millisecond))
			ctx, cancel := c.ctx()
			defer cancel()
			want{status: sdk.StatusFailed, code: c.code, msg: c.msg}.check(t, r.open(t, OpenOptions{}).Score(ctx, run))
			if n := r.calls.Load(); n != c.calls {
				t.Errorf("scorer called %d times, want %d", n, c.calls)
			}
		})
	}
}

func TestScorePanic(t *testing.T) {
	cases := []struct {
		name  string
		panic any
		msg   string
	}{
		{"string panic", "index out of range", "scorer boom panicked: index out of range"},
		{"error panic", errors.New("nil map"), "panicked: nil map"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, info("boom"), func(context.Context, sdk.Call) (sdk.Result, error) { panic(c.panic) })
			s := r.open(t, OpenOptions{})
			want{status: sdk.StatusFailed, code: sdk.CodeScorerError, msg: c.msg}.check(t, s.Score(context.Background(), run))
			// The host survives and the scorer can be called again.
			want{status: sdk.StatusFailed, code: sdk.CodeScorerError}.check(t, s.Score(context.Background(), run))
		})
	}
}

type stubJudge struct{ sdk.Judge }

func TestScoreJudgeCapability(t *testing.T) {
	j := stubJudge{}
	cases := []struct {
		name string
		caps []sdk.Capability
		want bool
	}{
		{"judge capability gets the host judge", []sdk.Capability{sdk.CapJudge}, true},
		{"embed capability gets the host judge", []sdk.Capability{sdk.CapEmbed}, true},
		{"no capability gets none", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inf := info("judged")
			inf.Capabilities = c.caps
			var got sdk.Judge
			r := newRig(t, inf, func(_ context.Context, call sdk.Call) (sdk.Result, error) {
				got = call.Judge
				return scored(1), nil
			}, WithJudge(j))
			r.open(t, OpenOptions{}).Score(context.Background(), run)
			if (got != nil) != c.want {
				t.Errorf("scorer judge %v, want present=%v", got, c.want)
			}
		})
	}
}

func TestScoreCanceledMidCall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := newRig(t, info("mid"), func(sctx context.Context, _ sdk.Call) (sdk.Result, error) {
		cancel() // the caller gives up while the scorer works
		<-sctx.Done()
		return sdk.Result{}, sctx.Err()
	})
	want{status: sdk.StatusFailed, code: sdk.CodeCanceled, msg: "caller canceled"}.check(t, r.open(t, OpenOptions{}).Score(ctx, run))
}
