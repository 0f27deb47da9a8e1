// Package noise is the noise-robustness scorer: when noise was added to what an agent was
// given (a false claim slipped into the request, a distracting question, an injected
// instruction, misleading passages), did its answer hold up? A high score is a robust
// agent, as in Mastra's noise sensitivity; Ragas' noise sensitivity, whose figure runs the
// other way, is a method here and its figure a dimension of weight 0.
//
// The run is the noisy run as it was traced: run.input is what the agent was given, noise
// and all, and run.output its answer (its tool calls too). The clean side comes from the
// dataset, under run.metadata.noise (the config's noise_path), never from a run field:
//
//   - noise.baseline_output: the agent's answer to the clean request. Required by the
//     mastra method.
//   - noise.clean_input: the request without the noise. Optional; shown to the judge.
//   - noise.type: the kind of noise (misinformation, distractors, adversarial ...). Optional;
//     shown to the judge.
//   - noise.clean_context: the passages without the noise, for a retrieval noise test.
//     Optional; shown to the judge beside run.context, the noisy passages.
//
// Each key may also be a flat "noise.baseline_output" key, as OTLP attributes arrive.
//
// Two methods, chosen with the config field "method":
//
//   - mastra (default), Mastra's noise sensitivity: one judge call compares the noisy answer
//     with the baseline and rates the noise's impact on five aspects (content accuracy,
//     completeness, relevance, consistency, hallucination resistance) from none to severe,
//     lists the major issues the noise caused and gives its own robustness from 0 to 1.
//     Score: the judge's robustness, or the mean impact weight (none 1.0, minimal 0.85,
//     moderate 0.6, significant 0.3, severe 0.1) when the two differ by more than the
//     discrepancy threshold (0.2) and the mean is lower, less 0.1 per major issue (0.3 at
//     most), clamped at 0. The weights, penalties and threshold are config with Mastra's
//     defaults. The five aspects' weights are dimensions of weight 0. Mastra asks twice
//     (analysis, reason); the reason is composed here.
//   - ragas, Ragas' noise sensitivity: it needs the reference answer in run.expected and the
//     passages in run.context. One judge call breaks the output and the reference into
//     statements, names the passages that back each, and says whether the reference backs
//     each output statement. A passage is relevant when it backs a reference statement.
//     Ragas' figure (the dimension noise_sensitivity, lower is better) is the share of output
//     statements that are wrong (the reference does not back them) yet backed by a relevant
//     passage (mode relevant) or only by irrelevant ones (mode irrelevant); the score is 1
//     minus it. Ragas asks 2 x passages + 3 times.
//
// A turn whose only output is tool calls is judged on its actions in the mastra method: the
// prompt shows them, and an action the noise led to is what a robustness check must catch
// (the ragas method, which checks statements of text, skips such a turn). An empty output,
// or an error message in place of an answer, scores 0 without a call (flag empty_output or
// error_text): the agent answered nothing under noise (Mastra rejects such a run). An empty
// run.input is failed (invalid_run). A missing baseline, reference or passages is skipped,
// naming what to record. A judge answer without the five aspects, or with another shape,
// is failed (judge_error), never 0.
//
// The package depends on the standard library, the sdk and the shared grounding and judge
// helpers (internal/grounding, internal/judgekit) only: it also compiles to WASM.
package noise

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/scorekit/scorekit/internal/grounding"
	"github.com/scorekit/scorekit/internal/judgekit"
	"github.com/scorekit/scorekit/internal/prescreen"
	"github.com/scorekit/scorekit/sdk"
)

// The scorer's name, the methods of Config.Method and modes of Config.Mode, two of its
// dimensions (the score is DimRobustness; the others have weight 0) and the flags it sets.
const (
	Name = "noise_robustness"

	MethodMastra = "mastra"
	MethodRagas  = "ragas"

	ModeRelevant   = "relevant"
	ModeIrrelevant = "irrelevant"

	DimRobustness  = "noise_robustness"
	DimSensitivity = "noise_sensitivity"

	// FlagEmptyOutput: the output is empty; the score is 0.
	FlagEmptyOutput = prescreen.FlagEmptyOutput
	// FlagErrorText: the output is an error message, not an answer; the score is 0.
	FlagErrorText = prescreen.FlagErrorText
	// FlagUnknownPassage: the judge named a passage the run does not have (ragas method);
	// the id was dropped.
	FlagUnknownPassage = grounding.FlagUnknownPassage
)

// aspects are the five aspects the mastra method rates, in order; each is a dimension.
var aspects = []string{"content_accuracy", "completeness", "relevance", "consistency", "hallucination_resistance"}

// levels are the impact levels, from no harm to the worst.
var levels = []string{"none", "minimal", "moderate", "significant", "severe"}

// Config is the scorer's config.
type Config struct {
	// Method is mastra or ragas. Optional. Default is mastra.
	Method string `json:"method"`
	// NoisePath is the dotted path into run.metadata of the object holding baseline_output,
	// clean_input, type and clean_context. Optional. Default is "noise".
	NoisePath string `json:"noise_path"`
	// ImpactWeights weigh the impact levels none, minimal, moderate, significant and severe
	// (mastra method; Mastra's scoring.impactWeights). Optional. Default is Mastra's: 1.0,
	// 0.85, 0.6, 0.3, 0.1; a level left out keeps its default.
	ImpactWeights map[string]float64 `json:"impact_weights"`
	// MajorIssuePenalty is subtracted per major issue (mastra method; Mastra's
	// penalties.majorIssuePerItem). Optional. Default is 0.1.
	MajorIssuePenalty float64 `json:"major_issue_penalty"`
	// MaxMajorIssuePenalty caps the major-issue penalty (mastra method; Mastra's
	// penalties.maxMajorIssuePenalty). Optional. Default is 0.3.
	MaxMajorIssuePenalty float64 `json:"max_major_issue_penalty"`
	// DiscrepancyThreshold is how far the judge's robustness and the mean impact weight may
	// differ before the lower one counts (mastra method; Mastra's discrepancyThreshold).
	// Optional. Default is 0.2.
	DiscrepancyThreshold float64 `json:"discrepancy_threshold"`
	// Mode is relevant or irrelevant (ragas method; Ragas' mode). Optional. Default is
	// relevant.
	Mode string `json:"mode"`
	// ContextPath selects the noisy passages from run.metadata by a dotted path (ragas
	// method). Optional. Default is "": run.context.
	ContextPath string `json:"context_path"`
}

// configSchema is the JSON Schema of Config.
var configSchema = judgekit.ConfigSchema(
	`"method": {"type": "string", "enum": ["mastra", "ragas"], "default": "mastra",
      "description": "mastra: the noisy answer against the baseline answer, five impact ratings and the judge's robustness (Mastra's noise sensitivity); ragas: wrong statements backed by the passages (Ragas' noise sensitivity), reported as 1 - its figure."}`,
	`"noise_path": {"type": "string", "minLength": 1, "default": "noise",
      "description": "Dotted path into run.metadata of the object with baseline_output, clean_input, type and clean_context."}`,
	`"impact_weights": {"type": "object", "additionalProperties": false,
      "properties": {
        "none": {"type": "number", "minimum": 0, "maximum": 1},
        "minimal": {"type": "number", "minimum": 0, "maximum": 1},
        "moderate": {"type": "number", "minimum": 0, "maximum": 1},
        "significant": {"type": "number", "minimum": 0, "maximum": 1},
        "severe": {"type": "number", "minimum": 0, "maximum": 1}},
      "default": {"none": 1.0, "minimal": 0.85, "moderate": 0.6, "significant": 0.3, "severe": 0.1},
      "description": "mastra: the weight of each impact level (Mastra's scoring.impactWeights); a level left out keeps its default."}`,
	`"major_issue_penalty": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.1,
      "description": "mastra: subtracted per major issue (Mastra's scoring.penalties.majorIssuePerItem)."}`,
	`"max_major_issue_penalty": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.3,
      "description": "mastra: cap of the major-issue penalty (Mastra's scoring.penalties.maxMajorIssuePenalty)."}`,
	`"discrepancy_threshold": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.2,
      "description": "mastra: when the judge's robustness and the mean impact weight differ by more, the lower counts (Mastra's scoring.discrepancyThreshold)."}`,
	`"mode": {"type": "string", "enum": ["relevant", "irrelevant"], "default": "relevant",
      "description": "ragas: count wrong statements backed by relevant passages, or only by irrelevant ones (Ragas' mode)."}`,
	`"context_path": {"type": "string", "default": "",
      "description": "ragas: dotted path into run.metadata holding the noisy passages. Default: run.context."}`)

const defaults = `{"method": "mastra", "noise_path": "noise", "impact_weights": {"none": 1.0, "minimal": 0.85, "moderate": 0.6, "significant": 0.3, "severe": 0.1}, ` +
	`"major_issue_penalty": 0.1, "max_major_issue_penalty": 0.3, "discrepancy_threshold": 0.2, "mode": "relevant", "context_path": ""}`

// mastraWeights are Mastra's impact weights.
func mastraWeights() map[string]float64 {
	return map[string]float64{"none": 1.0, "minimal": 0.85, "moderate": 0.6, "significant": 0.3, "severe": 0.1}
}

func defaultConfig() Config {
	return Config{Method: MethodMastra, NoisePath: "noise", ImpactWeights: mastraWeights(), MajorIssuePenalty: 0.1,
		MaxMajorIssuePenalty: 0.3, DiscrepancyThreshold: 0.2, Mode: ModeRelevant}
}

// New returns the noise robustness scorer with Mastra's method and weights.
func New() sdk.Scorer { return judgekit.NewScorer(Name, info, defaultConfig, check, grade) }

// info describes the scorer.
func info() sdk.Info {
	dims := []sdk.Dimension{{Name: DimRobustness, Weight: 1, Description: "the score: 1 when the noise changed nothing that matters"}}
	for _, a := range aspects {
		dims = append(dims, sdk.Dimension{Name: a, Weight: 0,
			Description: "mastra method: the weight of the noise's impact on " + strings.ReplaceAll(a, "_", " ") + " (1 none ... 0.1 severe)"})
	}
	dims = append(dims, sdk.Dimension{Name: DimSensitivity, Weight: 0,
		Description: "ragas method: Ragas' noise sensitivity, the share of wrong statements the noise let in; lower is better (1 - the score)"})
	info := judgekit.Info(Name, "Noise robustness: did the answer hold up when noise (misinformation, distractors, adversarial text, noisy passages) was added to what the agent was given? "+
		"Higher is more robust. One judge call. Methods: mastra (default; against the baseline answer in metadata.noise.baseline_output), ragas (1 - Ragas' noise sensitivity).",
		configSchema, defaults)
	info.Dimensions = dims
	return info
}

// check refuses a method or mode the scorer does not have, an empty noise_path, an impact
// level it does not know and a weight or penalty outside 0 to 1.
func check(cfg Config) error {
	if err := judgekit.OneOf(Name, "method", cfg.Method, MethodMastra, MethodRagas); err != nil {
		return err
	}
	if err := judgekit.OneOf(Name, "mode", cfg.Mode, ModeRelevant, ModeIrrelevant); err != nil {
		return err
	}
	if strings.TrimSpace(cfg.NoisePath) == "" {
		return fmt.Errorf("%s: config: noise_path is empty; give the metadata path of the noise object (default noise)", Name)
	}
	checks := map[string]float64{"major_issue_penalty": cfg.MajorIssuePenalty, "max_major_issue_penalty": cfg.MaxMajorIssuePenalty,
		"discrepancy_threshold": cfg.DiscrepancyThreshold}
	for level, v := range cfg.ImpactWeights {
		if !slices.Contains(levels, level) {
			return fmt.Errorf("%s: config: impact_weights.%s: want one of %s", Name, level, strings.Join(levels, ", "))
		}
		checks["impact_weights."+level] = v
	}
	return judgekit.Unit(Name, checks)
}

// grade scores the noisy run under cfg.
func grade(ctx context.Context, cfg Config, call sdk.Call) (sdk.Result, error) {
	run := &call.Run
	if strings.TrimSpace(run.Input) == "" {
		return sdk.Failed(sdk.CodeInvalidRun, Name+": run.input is empty; record what the agent was given, noise and all, in run.input"), nil
	}
	md, err := noise(cfg.NoisePath, run)
	if err != nil {
		return sdk.Failed(sdk.CodeInvalidRun, Name+": "+err.Error()), nil
	}
	var ev grounding.Evidence
	switch cfg.Method {
	case MethodMastra:
		if md.baseline == "" {
			return sdk.Skipped(Name + " compares the noisy answer with the agent's answer to the clean request, and the run has none: record it in metadata." +
				cfg.NoisePath + ".baseline_output (or use method ragas, which needs run.expected and the passages); no judge call was made"), nil
		}
	case MethodRagas:
		if strings.TrimSpace(run.Expected) == "" {
			return sdk.Skipped(Name + "'s ragas method checks the output's statements against the reference answer, and the run has none: " +
				"record it in run.expected; no judge call was made"), nil
		}
		passages, res, done := grounding.Require(run, Name, cfg.ContextPath, Name+"'s ragas method checks which passages back the output's wrong statements")
		if done {
			return res, nil
		}
		ev = passages
	}
	if prescreen.ToolOnly(run) && cfg.Method == MethodRagas {
		return sdk.Skipped(Name + "'s ragas method checks the statements of the output's text, and this turn's only output is its tool calls; " +
			"the mastra method (the default) judges them against the baseline; no judge call was made"), nil
	}
	if !prescreen.ToolOnly(run) {
		if res, ok := judgekit.Unanswered(run, ": the agent answered nothing under noise; no judge call was made"); ok {
			return nothing(res), nil
		}
	}
	if call.Judge == nil {
		return sdk.NoJudge(Name), nil
	}
	if cfg.Method == MethodRagas {
		return ragas(ctx, cfg, call.Judge, run, ev), nil
	}
	return mastra(ctx, cfg, call.Judge, run, md), nil
}

// nothing is res, the result of a noisy run that answered nothing (0, without a call), with
// its dimensions.
func nothing(res sdk.Result) sdk.Result {
	res.Dimensions = map[string]float64{DimRobustness: 0}
	res.SkippedDimensions = map[string]string{DimSensitivity: "no answer to check"}
	for _, a := range aspects {
		res.SkippedDimensions[a] = "no answer to compare with the baseline"
	}
	return res
}

// noiseData is what run.metadata says of the clean side.
type noiseData struct {
	baseline, cleanInput, kind string
	cleanContext               []sdk.Passage
}

// noise reads the noise object at path (the config's noise_path): each key nested under
// it, or as a flat "noise.key". A value of the wrong type is an error naming the key.
func noise(path string, run *sdk.Run) (noiseData, error) {
	var d noiseData
	text := func(key string) (string, error) {
		v, ok := lookup(run.Metadata, path+"."+key)
		if !ok || v == nil {
			return "", nil
		}
		switch x := v.(type) {
		case string:
			return strings.TrimSpace(x), nil
		case map[string]any, []any:
			// A structured answer is compared as its JSON text.
			b, _ := json.Marshal(x)
			return string(b), nil
		}
		return "", fmt.Errorf("metadata.%s.%s is %s; want text", path, key, show(v))
	}
	var err error
	if d.baseline, err = text("baseline_output"); err != nil {
		return d, err
	}
	if d.cleanInput, err = text("clean_input"); err != nil {
		return d, err
	}
	if d.kind, err = text("type"); err != nil {
		return d, err
	}
	if v, ok := lookup(run.Metadata, path+".clean_context"); ok && v != nil {
		if d.cleanContext, err = grounding.ToPassages(v); err != nil {
			return d, fmt.Errorf("metadata.%s.clean_context: %v", path, err)
		}
	}
	return d, nil
}

// lookup finds path in metadata: the key as written (a flat "a.b" key, as OTLP attributes
// arrive), else the dotted path through nested objects.
func lookup(m map[string]any, path string) (any, bool) {
	if v, ok := m[path]; ok {
		return v, true
	}
	return grounding.Lookup(m, path)
}
