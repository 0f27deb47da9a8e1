// Package similarity is the answer-similarity scorer: does the agent's output say what the
// reference answer in run.expected says?
//
// Two methods, chosen with the config field "method":
//
//   - judge (default), Mastra's answer similarity: the judge breaks the reference into units
//     of meaning and matches each against the output (exact, semantic, partial or missing),
//     and lists the output's contradictions of the reference and its extra units, all in one
//     structured answer. Score = (sum over reference units of exact 1 + exact_match_bonus,
//     semantic semantic_threshold, partial semantic_threshold / 2, missing -missing_penalty)
//     / (units x (1 + exact_match_bonus)) - contradictions x contradiction_penalty -
//     min(extra units x extra_info_penalty, 0.2), clamped to [0, 1]. The weights are config
//     with Mastra's defaults, contradiction_penalty 1.0 included (the value its code has,
//     though its comment says 0.3). Mastra asks three times (extract, match, reason); here
//     the reason is composed from the matches.
//   - embeddings, Ragas' semantic similarity: the cosine of the embeddings of the reference
//     and the output, one embeddings request through the host's broker and no judge call.
//     A negative cosine counts 0 (flag negative_cosine); with "threshold" set the score is 1
//     at or above it and 0 below, as Ragas' threshold does. A judge without an embeddings
//     endpoint skips the run, saying how to configure one.
//
// A run without a reference (run.expected empty or white space) is skipped with the fix
// (Mastra scores 0, or throws when it requires one). An empty output, or an error message
// in place of one, scores 0 without a call (flag empty_output or error_text): it says none
// of what the reference says. A turn whose only output is tool calls is skipped: there is
// no text to compare, and tool_calls grades actions against expected_tool_calls. A judge
// that finds no unit in a non-blank reference, or answers with another shape, fails the
// result (judge_error), never 0.
//
// The package depends on the standard library, the sdk and the shared grounding and judge
// helpers (internal/grounding, internal/judgekit) only: it also compiles to WASM.
package similarity

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/internal/judgekit"
	"github.com/scorekit/scorekit/internal/prescreen"
	"github.com/scorekit/scorekit/sdk"
)

// The scorer's name, the methods of Config.Method, and the flags the scorer sets.
const (
	Name = "answer_similarity"

	MethodJudge      = "judge"
	MethodEmbeddings = "embeddings"

	// FlagEmptyOutput: the output is empty; the score is 0.
	FlagEmptyOutput = prescreen.FlagEmptyOutput
	// FlagErrorText: the output is an error message, not an answer; the score is 0.
	FlagErrorText = prescreen.FlagErrorText
	// FlagNegativeCosine: the embeddings point away from each other; the cosine counts 0.
	FlagNegativeCosine = "negative_cosine"
)

// noEmbeddingModel is how the host's broker says it has no embeddings endpoint (its
// ErrNoEmbeddingModel, which crosses into a plugin as the message of an unavailable error).
const noEmbeddingModel = "no embedding model configured"

// Config is the scorer's config.
type Config struct {
	// Method is judge or embeddings. Optional. Default is judge.
	Method string `json:"method"`
	// SemanticThreshold is the credit of a semantic match, and twice that of a partial one
	// (judge method; Mastra's semanticThreshold). Optional. Default is 0.8.
	SemanticThreshold float64 `json:"semantic_threshold"`
	// ExactMatchBonus is added to an exact match's credit of 1 (judge method; Mastra's
	// exactMatchBonus). Optional. Default is 0.2.
	ExactMatchBonus float64 `json:"exact_match_bonus"`
	// MissingPenalty is subtracted per reference unit the output lacks (judge method;
	// Mastra's missingPenalty). Optional. Default is 0.15.
	MissingPenalty float64 `json:"missing_penalty"`
	// ContradictionPenalty is subtracted per contradiction, after normalization (judge
	// method; Mastra's contradictionPenalty). Optional. Default is 1.0.
	ContradictionPenalty float64 `json:"contradiction_penalty"`
	// ExtraInfoPenalty is subtracted per output unit the reference lacks, at most 0.2 in all
	// (judge method; Mastra's extraInfoPenalty). Optional. Default is 0.05.
	ExtraInfoPenalty float64 `json:"extra_info_penalty"`
	// Threshold turns the cosine into 1 (at or above) or 0 (embeddings method; Ragas'
	// threshold). Optional. Default is none: the score is the cosine.
	Threshold *float64 `json:"threshold"`
}

// configSchema is the JSON Schema of Config.
var configSchema = judgekit.ConfigSchema(
	`"method": {"type": "string", "enum": ["judge", "embeddings"], "default": "judge",
      "description": "judge: one call matching the reference's units against the output (Mastra's answer similarity); embeddings: the cosine of the two texts' embeddings (Ragas' semantic similarity), no judge call."}`,
	`"semantic_threshold": {"type": "number", "minimum": 0, "maximum": 2, "default": 0.8,
      "description": "judge: credit of a semantic match; a partial match gets half (Mastra's semanticThreshold)."}`,
	`"exact_match_bonus": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.2,
      "description": "judge: added to an exact match's credit of 1 (Mastra's exactMatchBonus)."}`,
	`"missing_penalty": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.15,
      "description": "judge: subtracted per reference unit the output lacks (Mastra's missingPenalty)."}`,
	`"contradiction_penalty": {"type": "number", "minimum": 0, "maximum": 1, "default": 1.0,
      "description": "judge: subtracted per contradiction of the reference (Mastra's contradictionPenalty)."}`,
	`"extra_info_penalty": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.05,
      "description": "judge: subtracted per output unit the reference lacks, 0.2 at most (Mastra's extraInfoPenalty)."}`,
	`"threshold": {"type": ["number", "null"], "minimum": 0, "maximum": 1, "default": null,
      "description": "embeddings: score 1 when the cosine is at or above it, else 0 (Ragas' threshold). Default: the cosine itself."}`)

const defaults = `{"method": "judge", "semantic_threshold": 0.8, "exact_match_bonus": 0.2, "missing_penalty": 0.15, "contradiction_penalty": 1.0, "extra_info_penalty": 0.05, "threshold": null}`

func defaultConfig() Config {
	w := mastraWeights
	return Config{Method: MethodJudge, SemanticThreshold: w.SemanticThreshold, ExactMatchBonus: w.ExactMatchBonus,
		MissingPenalty: w.MissingPenalty, ContradictionPenalty: w.ContradictionPenalty, ExtraInfoPenalty: w.ExtraInfoPenalty}
}

// New returns the answer similarity scorer with the judge method and Mastra's weights.
func New() sdk.Scorer { return judgekit.NewScorer(Name, info, defaultConfig, check, grade) }

// info describes the scorer.
func info() sdk.Info {
	info := judgekit.Info(Name, "Answer similarity: does the output say what the reference answer in run.expected says? "+
		"Methods: judge (default; Mastra's unit matching, one call), embeddings (Ragas' semantic similarity, one embeddings request).",
		configSchema, defaults)
	info.Capabilities = append(info.Capabilities, sdk.CapEmbed)
	return info
}

// check refuses a method the scorer does not have and a weight, penalty or threshold
// out of its range.
func check(cfg Config) error {
	if err := judgekit.OneOf(Name, "method", cfg.Method, MethodJudge, MethodEmbeddings); err != nil {
		return err
	}
	if err := judgekit.Unit(Name, map[string]float64{"exact_match_bonus": cfg.ExactMatchBonus, "missing_penalty": cfg.MissingPenalty,
		"contradiction_penalty": cfg.ContradictionPenalty, "extra_info_penalty": cfg.ExtraInfoPenalty}); err != nil {
		return err
	}
	if cfg.SemanticThreshold < 0 || cfg.SemanticThreshold > 2 {
		return fmt.Errorf("%s: config: semantic_threshold %v: want a number from 0 to 2", Name, cfg.SemanticThreshold)
	}
	if t := cfg.Threshold; t != nil && (*t < 0 || *t > 1) {
		return fmt.Errorf("%s: config: threshold %v: want a number from 0 to 1", Name, *t)
	}
	return nil
}

// grade compares the output with run.expected.
func grade(ctx context.Context, cfg Config, call sdk.Call) (sdk.Result, error) {
	run := &call.Run
	if strings.TrimSpace(run.Expected) == "" {
		return sdk.Skipped(Name + " compares the output with a reference answer, and the run has none; " +
			"record the reference answer in run.expected; no judge call was made"), nil
	}
	if prescreen.ToolOnly(run) {
		return sdk.Skipped(Name + " compares the output's text with run.expected, and this turn's only output is its tool calls: " +
			"there is no text to compare (tool_calls grades actions against expected_tool_calls); no judge call was made"), nil
	}
	if res, ok := judgekit.Unanswered(run, ", so it says none of what the reference says; no judge call was made"); ok {
		return res, nil
	}
	if call.Judge == nil {
		return sdk.NoJudge(Name), nil
	}
	if cfg.Method == MethodEmbeddings {
		return embeddings(ctx, cfg, call.Judge, run), nil
	}
	return judge(ctx, cfg, call.Judge, run), nil
}

// embeddings scores the cosine of the reference's and the output's embeddings.
func embeddings(ctx context.Context, cfg Config, j sdk.Judge, run *sdk.Run) sdk.Result {
	texts := []string{run.Expected, run.Output}
	vecs, err := j.Embed(ctx, texts)
	if err != nil {
		var e *sdk.Error
		if errors.As(err, &e) && e.Code == sdk.CodeUnavailable && strings.Contains(e.Message, noEmbeddingModel) {
			return sdk.Skipped(Name + "'s embeddings method needs an embeddings endpoint, and the judge has none: set the judge's " +
				"embedding model (judge.embedding_model in the config file, e.g. text-embedding-3-small), or use method judge")
		}
		return failEmbed(err)
	}
	if len(vecs) != len(texts) {
		return failEmbed(fmt.Errorf("the judge returned %d embeddings for %d texts", len(vecs), len(texts)))
	}
	c, ok := judgekit.Cosine(vecs[0], vecs[1])
	if !ok {
		return failEmbed(fmt.Errorf("the embeddings are empty, zero or of different lengths (%d and %d dimensions)", len(vecs[0]), len(vecs[1])))
	}
	value, why := max(c, 0), fmt.Sprintf("cosine similarity %.2f between the embeddings of the reference and the output", c)
	var flags []string
	if c < 0 {
		flags = append(flags, FlagNegativeCosine)
		why += " (negative: counted 0)"
	}
	if t := cfg.Threshold; t != nil {
		if c >= *t {
			value, why = 1, why+fmt.Sprintf(", at or above the threshold %.2f", *t)
		} else {
			value, why = 0, why+fmt.Sprintf(", below the threshold %.2f", *t)
		}
	}
	res := sdk.Scored(value, why)
	res.Flags = flags
	step := map[string]any{"method": MethodEmbeddings, "dimensions": len(vecs[0]), "cosine": c, "score": value}
	if cfg.Threshold != nil {
		step["threshold"] = *cfg.Threshold
	}
	res.Steps = []sdk.Step{judgekit.ScoreStep(step)}
	return res
}

// failEmbed is the failed result of the embeddings request: its code when it carries one,
// judge_error otherwise.
func failEmbed(err error) sdk.Result {
	code, msg := judgekit.Code(err)
	return sdk.Failed(code, Name+": embeddings: "+msg)
}
