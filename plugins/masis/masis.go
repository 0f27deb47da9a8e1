// Package masis is the MASIS evaluator: one strict LLM-as-judge call that grades an answer
// on four dimensions (faithfulness 0.35, relevance 0.25, completeness 0.25, reasoning
// quality 0.15) under the constraints of a deterministic citation audit.
//
// The judge is told to be strict and given three anchors (1 / 0.5 / 0) per dimension; the
// content follows in the order question, answer, evidence. When the call carries a
// citation audit (the run's own, or the one the host computes for scorers with a
// faithfulness dimension), its findings are injected as hard constraints with the caps
// they imply. The evaluator reads the judge's answer onto 0-1 (an answer on 0-100 is
// divided by 100 as a whole, see sdk/verdict.Scores, and flagged percentage_scale); the
// host, not the evaluator, has the last word on the rest: it clamps faithfulness by the
// audit, recomputes the overall score as the weighted mean and rounds it to 3 decimals,
// and records each change in Result.Adjustments.
//
// An empty output, or one that is an error message, a stack trace or a provider failure, or
// a run whose caller recorded an error (the pre-screen's checks, plugins/prescreen.Unanswered),
// is graded without a judge call: scored 0 (relevance, completeness and reasoning quality 0; faithfulness
// skipped, as there is no claim to check), flagged empty_output or error_text; so is a turn
// whose only output is tool calls that all failed (tool_error). Such an output is the
// agent's failure, which the evaluator can see for certain, not a run it could not judge;
// a lenient judge scored an empty output 0.715 and passed it. A turn that acted through
// tools is not empty: the judge sees its calls and their results as part of the answer.
//
// # Why
//
//   - A run without evidence is still worth grading: faithfulness is listed in
//     Result.SkippedDimensions (never 0) and the host renormalizes the overall over the
//     other three weights. Citation findings are still shown to the judge.
//   - A judge answer that lacks a dimension is failed, naming it: a guessed 0 or 1 would
//     enter averages as if it were a verdict.
//   - The scale is read from the answer as a whole: in an answer on 0-100 (its largest
//     value above 10), a value of at most 1 is on that scale too (1 means 0.01); an answer
//     whose largest value is in (1, 10] could be 0-10 or 0-100 and is failed. The host
//     reads no scorer's numbers as percentages.
//   - The telemetry node "evaluator" and the evaluate step record what the judge said, as
//     it said it; the result's dimensions are the values on 0-1 after the host.
//
// The package depends on the standard library, sdk, sdk/verdict and the pre-screen's
// error check only: it also compiles to a WASM guest (see plugin/).
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

	"github.com/scorekit/scorekit/internal/prescreen"
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

// scorer is the MASIS evaluator. It holds no state and is safe for concurrent use.
type scorer struct{}

var _ sdk.Scorer = (*scorer)(nil)

// New returns the MASIS evaluator.
func New() sdk.Scorer { return &scorer{} }

// ObservesContext reports true: the scorer's time is spent waiting on the judge, whose calls
// end with their context, and its own work between them is short. A host
// (host.ContextObserver) then does not count its calls against the few it allows native
// code that cannot be stopped, which would cap a worker's judge calls at one per core.
func (*scorer) ObservesContext() bool { return true }

// Info describes the evaluator.
func (*scorer) Info() sdk.Info {
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
	// Scores are on 0-1; Raw are the same as the judge wrote them.
	Scores      map[string]float64 `json:"scores"`
	Raw         map[string]float64 `json:"raw,omitempty"`
	Percent     bool               `json:"percent,omitempty"`
	Overall     *float64           `json:"overall_score,omitempty"`
	Suggestions []string           `json:"improvement_suggestions"`
}

// Flags the evaluator sets on outputs it grades without the judge.
const (
	// FlagEmptyOutput: the output is empty or white space.
	FlagEmptyOutput = prescreen.FlagEmptyOutput
	// FlagErrorText: the output is an error message, a stack trace or a provider failure.
	FlagErrorText = prescreen.FlagErrorText
)

// Score grades call.Run with one judge call, or with none when the output is empty or an
// error (see the package documentation).
func (*scorer) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	run := &call.Run
	if res, ok := unanswered(run); ok {
		return res, nil
	}
	if call.Judge == nil {
		return sdk.NoJudge(Name), nil
	}
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

// unanswered grades an output that answers nothing (empty, or an error in place of an
// answer) without the judge: 0 on every dimension the judge would grade, faithfulness
// skipped since there is no claim to check.
func unanswered(run *sdk.Run) (sdk.Result, bool) {
	flag, why, ok := prescreen.Unanswered(run)
	if !ok {
		return sdk.Result{}, false
	}
	res := sdk.Scored(0, why+": it answers nothing, so relevance, completeness and reasoning_quality are 0 "+
		"and faithfulness is skipped; no judge call was made")
	res.Dimensions = map[string]float64{Relevance: 0, Completeness: 0, ReasoningQuality: 0}
	res.SkippedDimensions = map[string]string{Faithfulness: why + ", so there is no claim to check against the evidence"}
	res.Flags = []string{flag}
	return res, true
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
	if a.Percent {
		res.Flags = append(res.Flags, verdict.FlagPercentageScale)
	}
	res.Suggestions = a.Suggestions
	res.Reason = reason(run, a)
	parsed, _ := json.Marshal(stepOutput(a))
	res.Steps = []sdk.Step{{Name: "evaluate", Prompt: prompt, Output: parsed}}
	rawOverall := overall
	if a.Percent {
		rawOverall = overall * 100
	}
	node := map[string]any{"node": "evaluator", "overall_score": rawOverall, "relevance": a.Raw[Relevance],
		"completeness": a.Raw[Completeness], "duration_ms": elapsed}
	if f, ok := a.Raw[Faithfulness]; ok {
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

// stepOutput is the parsed answer as the evaluate step records it: the judge's numbers as
// it wrote them, and the scale they were read on.
func stepOutput(a answer) map[string]any {
	out := map[string]any{"improvement_suggestions": a.Suggestions, "scale": "0-1"}
	if a.Percent {
		out["scale"] = "0-100"
	}
	for _, d := range dimensions {
		if v, ok := a.Raw[d.Name]; ok {
			out[d.Name] = v
		} else {
			out[d.Name] = nil
		}
	}
	if a.Overall != nil {
		v := *a.Overall
		if a.Percent {
			v *= 100
		}
		out["overall_score"] = v
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
	if a.Percent {
		s += " (it answered on a 0-100 scale, read as percentages)"
	}
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
// dropped even if given). The scores are read onto 0-1 together (verdict.Scores): an
// answer on 0-100 is divided by 100 as a whole, one whose scale is ambiguous fails. The
// judge's own overall score is read on the same scale and dropped when it does not fit it
// (the host recomputes the overall from the weights anyway).
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
	scores, percent, err := verdict.Scores(a.Scores)
	if err != nil {
		return answer{}, fmt.Errorf("the judge's scores are unusable: %w (%s)", err, clip(text))
	}
	a.Raw, a.Scores, a.Percent = a.Scores, scores, percent
	if v, ok := fields["overall_score"]; ok && v != nil {
		if f, err := value(v); err == nil {
			if percent {
				f /= 100
			}
			if f <= 1 {
				a.Overall = &f
			}
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
