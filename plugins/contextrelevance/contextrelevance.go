// Package contextrelevance grades what a retriever brought an agent: is each passage
// relevant to the request, and did the answer draw on the relevant ones? Where
// contextprecision grades the ranking (were the useful passages first), this scorer grades
// the content of the whole set, whatever its order.
//
// One judge call rates every passage by its id and, in the default method, names what
// retrieval failed to bring. Two methods, chosen with the config field "method":
//
//   - mastra (default), Mastra's context relevance: each passage gets a relevance level
//     (high 1.0, medium 0.7, low 0.3, none 0) and a used flag (the answer drew on it), and
//     the judge lists missing information. Score = max(0, mean level weight - 0.1 per
//     high-relevance passage the answer did not use - min(0.15 per missing item, 0.5)); the
//     three penalties are config with Mastra's defaults. Mastra asks twice (analysis, then a
//     reason); here the reason is composed from the verdicts.
//   - deepeval, DeepEval's contextual relevancy: each passage is split into statements, each
//     marked relevant to the input or not; score = relevant statements / all statements.
//     DeepEval asks once per passage and once more for a reason; here one call covers every
//     passage.
//
// Every run passage must come back once, by its id: a missing, unknown or repeated id is a
// failed result (judge_error) naming it, never a guess. A run without passages is skipped
// (Mastra scores it 1.0) with the reason and the fix; so is one without a judge. An empty
// input is failed (invalid_run): relevance is relevance to the request. When the agent
// gave no answer (an empty output, or an error message in place of one), the passages are
// still rated, but not their use: the unused-passage penalty is not applied, and the
// result carries the pre-screen's flag (empty_output or error_text). A turn that answered
// through tool calls is judged on them: the prompt shows its actions beside its text.
//
// The package depends on the standard library, the sdk, the pre-screen's checks and the
// shared grounding and judge helpers (internal/grounding, internal/judgekit) only: it also
// compiles to WASM.
package contextrelevance

import (
	"context"
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/internal/grounding"
	"github.com/scorekit/scorekit/internal/judgekit"
	"github.com/scorekit/scorekit/internal/prescreen"
	"github.com/scorekit/scorekit/sdk"
)

// The scorer's name, and the methods of Config.Method.
const (
	Name = "context_relevance"

	MethodMastra   = "mastra"
	MethodDeepEval = "deepeval"
)

// Limits of one judge call: every passage is rated in one answer, so a run with more
// passages, or more passage text, than this is failed (limit_exceeded) rather than cut.
const (
	maxPassages     = 100
	maxPassageBytes = 256 << 10
)

// Config is the scorer's config.
type Config struct {
	// Method is mastra or deepeval. Optional. Default is mastra.
	Method string `json:"method"`
	// ContextPath selects the passages from run.metadata by a dotted path (e.g.
	// "retrieval.chunks"), like Mastra's contextExtractor. Optional. Default is "":
	// run.context.
	ContextPath string `json:"context_path"`
	// UnusedHighRelevancePenalty is subtracted per high-relevance passage the answer did not
	// use (mastra method; Mastra's penalties.unusedHighRelevanceContext). Optional. Default
	// is 0.1.
	UnusedHighRelevancePenalty float64 `json:"unused_high_relevance_penalty"`
	// MissingContextPenalty is subtracted per item of missing information (mastra method;
	// Mastra's penalties.missingContextPerItem). Optional. Default is 0.15.
	MissingContextPenalty float64 `json:"missing_context_penalty"`
	// MaxMissingContextPenalty caps the missing-information penalty (mastra method;
	// Mastra's penalties.maxMissingContextPenalty). Optional. Default is 0.5.
	MaxMissingContextPenalty float64 `json:"max_missing_context_penalty"`
}

// configSchema is the JSON Schema of Config.
var configSchema = judgekit.ConfigSchema(
	`"method": {"type": "string", "enum": ["mastra", "deepeval"], "default": "mastra",
      "description": "mastra: a relevance level and a used flag per passage, and missing information (Mastra's context relevance); deepeval: relevant statements / all statements (DeepEval's contextual relevancy)."}`,
	`"context_path": {"type": "string", "default": "",
      "description": "Dotted path into run.metadata holding the passages (strings or {id, text} objects). Default: run.context."}`,
	`"unused_high_relevance_penalty": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.1,
      "description": "mastra: subtracted per high-relevance passage the answer did not use (Mastra's penalties.unusedHighRelevanceContext)."}`,
	`"missing_context_penalty": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.15,
      "description": "mastra: subtracted per item of missing information (Mastra's penalties.missingContextPerItem)."}`,
	`"max_missing_context_penalty": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5,
      "description": "mastra: cap of the missing-information penalty (Mastra's penalties.maxMissingContextPenalty)."}`)

const defaults = `{"method": "mastra", "context_path": "", "unused_high_relevance_penalty": 0.1, "missing_context_penalty": 0.15, "max_missing_context_penalty": 0.5}`

func defaultConfig() Config {
	return Config{Method: MethodMastra, UnusedHighRelevancePenalty: 0.1, MissingContextPenalty: 0.15, MaxMissingContextPenalty: 0.5}
}

// New returns the context relevance scorer with Mastra's method and penalties.
func New() sdk.Scorer { return judgekit.NewScorer(Name, info, defaultConfig, check, grade) }

// info describes the scorer.
func info() sdk.Info {
	return judgekit.Info(Name, "Context relevance: are the retrieved passages relevant to the request, and did the answer use the relevant ones? "+
		"One judge call. Methods: mastra (default; relevance levels, usage and missing information), deepeval (share of relevant statements).",
		configSchema, defaults)
}

// check refuses a method the scorer does not have and a penalty outside 0 to 1.
func check(cfg Config) error {
	if err := judgekit.OneOf(Name, "method", cfg.Method, MethodMastra, MethodDeepEval); err != nil {
		return err
	}
	return judgekit.Unit(Name, map[string]float64{
		"unused_high_relevance_penalty": cfg.UnusedHighRelevancePenalty,
		"missing_context_penalty":       cfg.MissingContextPenalty,
		"max_missing_context_penalty":   cfg.MaxMissingContextPenalty,
	})
}

// grade rates the run's passages in one judge call.
func grade(ctx context.Context, cfg Config, call sdk.Call) (sdk.Result, error) {
	run := &call.Run
	ev, err := grounding.Gather(run, cfg.ContextPath)
	if err != nil {
		return sdk.Failed(sdk.CodeInvalidRun, Name+": "+err.Error()), nil
	}
	ps := ev.Passages
	if ev.FromTools || len(ps) == 0 {
		// Unlike faithfulness, a tool's result does not stand in for a passage: grading
		// retrieval needs what retrieval returned.
		return sdk.Skipped(Name + " rates the passages retrieved for the request, and the run has none in " + source(cfg) +
			"; record the retrieved passages in run.context (or point context_path at them); no judge call was made"), nil
	}
	if id, ok := repeatedID(ps); ok {
		return sdk.Failed(sdk.CodeInvalidRun, fmt.Sprintf("%s: two passages in %s have the id %q, and the judge rates passages by id; give each passage its own id", Name, source(cfg), id)), nil
	}
	if strings.TrimSpace(run.Input) == "" {
		return sdk.Failed(sdk.CodeInvalidRun, Name+": run.input is empty, and relevance is relevance to the request; record the user's request in run.input"), nil
	}
	if err := withinLimits(ps); err != nil {
		return sdk.Failed(sdk.CodeLimitExceeded, Name+": "+err.Error()), nil
	}
	if call.Judge == nil {
		return sdk.NoJudge(Name), nil
	}
	// Without an answer there is no use to judge; the passages can still be rated.
	var noAnswer, why string
	if flag, detail, ok := prescreen.Unanswered(run); ok && !prescreen.ToolOnly(run) {
		noAnswer, why = flag, detail
	}
	if cfg.Method == MethodDeepEval {
		return deepEval(ctx, call.Judge, run, ps, noAnswer), nil
	}
	return mastra(ctx, cfg, call.Judge, run, ps, noAnswer, why), nil
}

// withinLimits refuses a set of passages one judge answer cannot rate.
func withinLimits(ps []sdk.Passage) error {
	if len(ps) > maxPassages {
		return fmt.Errorf("the run has %d passages and one judge call rates at most %d; score the passages the agent was given "+
			"(context_path can select them) or split the retrieval into runs", len(ps), maxPassages)
	}
	n := 0
	for _, p := range ps {
		n += len(p.Text)
	}
	if n > maxPassageBytes {
		return fmt.Errorf("the passages hold %d KiB of text and one judge call takes at most %d KiB; score the passages the agent was given "+
			"(context_path can select them) or split the retrieval into runs", n>>10, maxPassageBytes>>10)
	}
	return nil
}

// repeatedID returns the first id two passages share.
func repeatedID(ps []sdk.Passage) (string, bool) {
	seen := make(map[string]bool, len(ps))
	for _, p := range ps {
		if seen[p.ID] {
			return p.ID, true
		}
		seen[p.ID] = true
	}
	return "", false
}

// source names where the passages are read from.
func source(cfg Config) string {
	if cfg.ContextPath != "" {
		return "metadata." + cfg.ContextPath
	}
	return "run.context"
}
