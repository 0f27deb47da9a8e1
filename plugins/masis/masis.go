// Package masis is the MASIS evaluator: one strict LLM-as-judge call that grades an answer
// on four dimensions (faithfulness 0.35, relevance 0.25, completeness 0.25, reasoning
// quality 0.15) under the constraints of a deterministic citation audit.
//
// The judge is told to be strict and given three anchors (1 / 0.5 / 0) per dimension; the
// content follows in the order question, answer, evidence. When the call carries a
// citation audit (the run's own, or the one the host computes for scorers with a
// faithfulness dimension), its findings are injected as hard constraints with the caps
// they imply. The judge's numbers are passed on raw: the host, not the evaluator, has the
// last word. It maps a 0-100 answer to 0-1 (its percentage rule), clamps faithfulness by
// the audit, recomputes the overall score as the weighted mean and rounds it to 3
// decimals, and records each change in Result.Adjustments.
//
// # Why
//
//   - A run without evidence is still worth grading: faithfulness is listed in
//     Result.SkippedDimensions (never 0) and the host renormalizes the overall over the
//     other three weights. Citation findings are still shown to the judge.
//   - A judge answer that lacks a dimension is failed, naming it: a guessed 0 or 1 would
//     enter averages as if it were a verdict.
//   - In an answer on the 0-100 scale (some value above 1), a value of at most 1 is read on
//     that scale too (1 means 0.01): the host's percentage rule sees one number at a time
//     and would read a lone 1 as 1.0.
//   - The telemetry node "evaluator" records what the judge said, before the host's
//     adjustments; the adjusted values are the result's dimensions.
//
// The package depends on the standard library, sdk and sdk/verdict only: it also compiles
// to a WASM guest (see plugin/).
package masis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/verdict"
)

// Name is the scorer's name.
const Name = "masis"

// The four dimensions.
const (
	Faithfulness     = "faithfulness"
	Relevance        = "relevance"
	Completeness     = "completeness"
	ReasoningQuality = "reasoning_quality"
)

// Threshold is the normalized overall score at or above which a run passes: every
// dimension at least "mostly" (0.5 anchor) and the weighted whole clearly above it.
const Threshold = 0.7

// dimensions in the order the judge is asked for them.
var dimensions = []sdk.Dimension{
	{Name: Faithfulness, Weight: 0.35, Description: "every claim is supported by the evidence it cites"},
	{Name: Relevance, Weight: 0.25, Description: "the answer does what the question asked"},
	{Name: Completeness, Weight: 0.25, Description: "every part of the question is answered"},
	{Name: ReasoningQuality, Weight: 0.15, Description: "the reasoning is sound and follows from the evidence"},
}

// Scorer is the MASIS evaluator. It holds no state and is safe for concurrent use.
type Scorer struct{}

var _ sdk.Scorer = (*Scorer)(nil)

// New returns the MASIS evaluator.
func New() sdk.Scorer { return &Scorer{} }

// Info describes the evaluator.
func (*Scorer) Info() sdk.Info {
	return sdk.Info{
		Name:       Name,
		Version:    "1.0.0",
		ABIVersion: sdk.ABIVersion,
		Description: "MASIS evaluator: one strict LLM judge call grades faithfulness, relevance, completeness " +
			"and reasoning quality, constrained by a deterministic citation audit.",
		Range:        sdk.Unit,
		Dimensions:   append([]sdk.Dimension(nil), dimensions...),
		Threshold:    Threshold,
		Decimals:     3,
		Capabilities: []sdk.Capability{sdk.CapJudge},
	}
}

// answer is the judge's verdict as decoded.
type answer struct {
	Scores      map[string]float64 `json:"scores"`
	Overall     *float64           `json:"overall_score,omitempty"`
	Suggestions []string           `json:"improvement_suggestions"`
}

// Score grades call.Run with one judge call.
func (*Scorer) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	if call.Judge == nil {
		return sdk.NoJudge(Name), nil
	}
	run := &call.Run
	evidence := len(run.Context) > 0
	system, user := Prompt(run)
	start := time.Now()
	resp, err := sdk.Ask(ctx, call.Judge, system, user)
	elapsed := float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		var e *sdk.Error
		if errors.As(err, &e) {
			return sdk.Failed(e.Code, "masis: the judge call failed: "+e.Message), nil
		}
		if ctx.Err() != nil {
			return sdk.Result{}, err // the host reports its deadline or the caller's cancel
		}
		return sdk.Failed(sdk.CodeJudgeError, "masis: the judge call failed: "+err.Error()), nil
	}
	a, err := parse(resp.Content, evidence)
	if err != nil {
		return sdk.Failed(sdk.CodeJudgeError, "masis: "+err.Error()), nil
	}
	return result(run, a, system+"\n\n"+user, elapsed), nil
}

// result assembles the scorer's raw result from the judge's answer.
func result(run *sdk.Run, a answer, prompt string, elapsed float64) sdk.Result {
	overall := weighted(a.Scores)
	if a.Overall != nil {
		overall = *a.Overall
	}
	res := sdk.Scored(overall, "")
	res.Dimensions = a.Scores
	if _, ok := a.Scores[Faithfulness]; !ok {
		res.SkippedDimensions = map[string]string{Faithfulness: "no evidence: the run has no context passages, " +
			"so faithfulness cannot be judged; the overall is the weighted mean of the other three dimensions"}
		res.Flags = append(res.Flags, "no_evidence")
	}
	res.Suggestions = a.Suggestions
	res.Reason = reason(run, a)
	parsed, _ := json.Marshal(stepOutput(a))
	res.Steps = []sdk.Step{{Name: "evaluate", Prompt: prompt, Output: parsed}}
	node := map[string]any{"node": "evaluator", "overall_score": overall, "relevance": a.Scores[Relevance],
		"completeness": a.Scores[Completeness], "duration_ms": elapsed}
	if f, ok := a.Scores[Faithfulness]; ok {
		node[Faithfulness] = f
	} else {
		node[Faithfulness] = nil
	}
	res.Telemetry.Nodes = []map[string]any{node}
	if au := run.CitationAudit; au != nil {
		if len(au.InvalidCitations) > 0 {
			res.Flags = append(res.Flags, "invalid_citations")
		}
		if au.HallucinationDetected {
			res.Flags = append(res.Flags, "hallucination_detected")
		}
	}
	return res
}

// stepOutput is the parsed answer as the evaluate step records it.
func stepOutput(a answer) map[string]any {
	out := map[string]any{"improvement_suggestions": a.Suggestions}
	for _, d := range dimensions {
		if v, ok := a.Scores[d.Name]; ok {
			out[d.Name] = v
		} else {
			out[d.Name] = nil
		}
	}
	if a.Overall != nil {
		out["overall_score"] = *a.Overall
	}
	return out
}

// weighted is the weighted mean of the scores present, in their raw units.
func weighted(scores map[string]float64) float64 {
	var sum, w float64
	for _, d := range dimensions {
		if v, ok := scores[d.Name]; ok {
			sum += d.Weight * v
			w += d.Weight
		}
	}
	if w == 0 {
		return 0
	}
	return sum / w
}

// reason says what the judge gave, what the audit found and what was skipped.
func reason(run *sdk.Run, a answer) string {
	var parts []string
	for _, d := range dimensions {
		if v, ok := a.Scores[d.Name]; ok {
			parts = append(parts, fmt.Sprintf("%s %s", d.Name, num(v)))
		}
	}
	s := "judge: " + strings.Join(parts, ", ")
	if a.Overall != nil {
		s += fmt.Sprintf(" (judge's overall %s; the host recomputes it from the weights)", num(*a.Overall))
	}
	if _, ok := a.Scores[Faithfulness]; !ok {
		s += "; faithfulness skipped: the run has no evidence, so the overall is renormalized over relevance, completeness and reasoning_quality"
	}
	if au := run.CitationAudit; au != nil {
		if f := findings(au); len(f) > 0 {
			s += "; citation audit: " + strings.Join(f, "; ")
		}
	}
	return s
}

func num(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
}

// aliases maps the normalized keys judges use to the dimension names.
var aliases = map[string]string{
	"faithfulness": Faithfulness, "faithful": Faithfulness, "groundedness": Faithfulness,
	"relevance": Relevance, "relevancy": Relevance, "answerrelevance": Relevance,
	"completeness": Completeness, "complete": Completeness,
	"reasoningquality": ReasoningQuality, "reasoning": ReasoningQuality, "quality": ReasoningQuality,
	"overallscore": "overall_score", "overall": "overall_score", "score": "overall_score",
	"improvementsuggestions": "improvement_suggestions", "suggestions": "improvement_suggestions",
	"improvements": "improvement_suggestions",
}

func canonical(key string) string {
	k := strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == ' ' {
			return -1
		}
		return r
	}, strings.ToLower(key))
	return aliases[k]
}

// parse reads the judge's answer. Every dimension must be present with a number in
// [0, 100] (faithfulness may be null or absent when there is no evidence, and is then
// dropped even if given). An answer on the 0-100 scale has its values <= 1 divided by 100.
func parse(text string, evidence bool) (answer, error) {
	var raw map[string]any
	if err := verdict.Extract(text, &raw); err != nil {
		return answer{}, fmt.Errorf("the judge's answer is not the JSON object asked for: %w", err)
	}
	fields := map[string]any{}
	for k, v := range raw {
		if c := canonical(k); c != "" {
			if _, dup := fields[c]; !dup || k == c {
				fields[c] = v
			}
		}
	}
	a := answer{Scores: map[string]float64{}}
	var missing []string
	for _, d := range dimensions {
		v, ok := fields[d.Name]
		if d.Name == Faithfulness && !evidence {
			continue
		}
		if !ok || v == nil {
			missing = append(missing, d.Name)
			continue
		}
		f, err := value(v)
		if err != nil {
			return answer{}, fmt.Errorf("the judge's %q is unusable: %w (%s)", d.Name, err, clip(text))
		}
		a.Scores[d.Name] = f
	}
	if len(missing) > 0 {
		return answer{}, fmt.Errorf("the judge's answer has no %s score (want %s as numbers from 0 to 1); judge output: %s",
			quoteList(missing), quoteList(dimensionNames(evidence)), clip(text))
	}
	if v, ok := fields["overall_score"]; ok && v != nil {
		if f, err := value(v); err == nil {
			a.Overall = &f
		}
	}
	percent := false
	for _, v := range a.Scores {
		percent = percent || v > 1
	}
	if percent {
		for k, v := range a.Scores {
			if v <= 1 {
				a.Scores[k] = v / 100
			}
		}
		if a.Overall != nil && *a.Overall <= 1 {
			x := *a.Overall / 100
			a.Overall = &x
		}
	}
	a.Suggestions = suggestions(fields["improvement_suggestions"])
	return a, nil
}

// value reads one score: a number, or a string a judge wrote ("0.8", "80%", "8/10").
func value(v any) (float64, error) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, err
		}
	case string:
		var err error
		if f, err = verdict.Number(x); err != nil {
			return 0, err
		}
	default:
		return 0, fmt.Errorf("%v is not a number", v)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 100 {
		return 0, fmt.Errorf("%v is outside 0-1 (and 0-100)", v)
	}
	return f, nil
}

// suggestions accepts a list of strings, a single string, or a list of objects with text.
func suggestions(v any) []string {
	switch x := v.(type) {
	case string:
		if s := strings.TrimSpace(x); s != "" {
			return []string{s}
		}
	case []any:
		var out []string
		for _, e := range x {
			switch y := e.(type) {
			case string:
				if s := strings.TrimSpace(y); s != "" {
					out = append(out, s)
				}
			case map[string]any:
				keys := make([]string, 0, len(y))
				for k := range y {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					if s, ok := y[k].(string); ok && strings.TrimSpace(s) != "" {
						out = append(out, strings.TrimSpace(s))
						break
					}
				}
			}
		}
		return out
	}
	return nil
}

func dimensionNames(evidence bool) []string {
	var out []string
	for _, d := range dimensions {
		if d.Name == Faithfulness && !evidence {
			continue
		}
		out = append(out, d.Name)
	}
	return out
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

func clip(s string) string {
	if len(s) > 500 {
		return s[:500] + "..."
	}
	return s
}
