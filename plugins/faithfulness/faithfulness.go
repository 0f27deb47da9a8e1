// Package faithfulness is the faithfulness scorer: is every claim of the agent's output
// backed by the passages it retrieved?
//
// One judge call breaks the output into claims and gives each a verdict against the
// passages: supported (the passages state it or it follows from them directly),
// contradicted (a passage states something incompatible), unverifiable (the passages are
// silent on it, say it in part, or the claim hedges or judges what they do not settle).
// Each claim names the passages that back or contradict it, so the result's steps show
// which claim failed against which passage. The reason is composed from the verdicts.
//
// The config field "method" picks the formula over the same verdicts:
//
//	method    score                                       peer
//	mastra    supported / claims                          Mastra's faithfulness (yes / verdicts; no and unsure count 0)
//	ragas     supported / claims                          Ragas' faithfulness (binary verdicts: anything not supported is unfaithful)
//	deepeval  (supported + unverifiable) / claims         DeepEval's FaithfulnessMetric (only a contradiction costs; idk counts as faithful)
//
// Mastra makes three calls (extract, analyze, reason), Ragas two, DeepEval four; this
// scorer makes one. Mastra's yes/no/unsure are supported/contradicted/unverifiable.
//
// The passages are run.context (or the metadata path in "context_path"); a run without
// passages but with tool results is checked against those (flag context_from_tools), as
// Mastra's scorer reads a run's tool results. The result declares one dimension,
// "faithfulness", so the host's citation audit clamps it as it does MASIS's.
//
// Statuses, never a 0 for what is not a grounding fact: no passages, an empty output, an
// output with no claim (a question back, a greeting; flag no_claims), an error message in
// place of an answer (flag error_text) and a turn whose only output is tool calls are
// skipped with the reason (Mastra scores the first three 0, DeepEval an output without
// claims 1, Ragas NaN); a judge answer that does not match the schema is failed with the
// answer quoted.
//
// The package depends on the standard library, the sdk, internal/grounding and
// internal/judgekit: it compiles to WASM.
package faithfulness

import (
	"context"
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/internal/grounding"
	"github.com/scorekit/scorekit/internal/judgekit"
	"github.com/scorekit/scorekit/sdk"
)

// Name is the scorer's name.
const Name = "faithfulness"

// Methods for Config.Method.
const (
	MethodMastra   = "mastra"
	MethodRagas    = "ragas"
	MethodDeepEval = "deepeval"
)

// Verdicts the judge gives each claim.
const (
	supported    = "supported"
	contradicted = "contradicted"
	unverifiable = "unverifiable"
)

var labels = []string{supported, contradicted, unverifiable}

// Config is the scorer's config.
type Config struct {
	// Method is mastra, ragas or deepeval: the formula over the verdicts (see the package
	// doc). Optional. Default is mastra.
	Method string `json:"method"`
	// ContextPath selects the passages from run.metadata by a dotted path (e.g.
	// "retrieval.chunks"). Optional. Default is "": run.context.
	ContextPath string `json:"context_path"`
}

// configSchema is the JSON Schema of Config.
var configSchema = judgekit.ConfigSchema(
	`"method": {"type": "string", "enum": ["mastra", "ragas", "deepeval"], "default": "mastra",
      "description": "mastra and ragas: supported claims / claims; deepeval: claims not contradicted / claims."}`,
	grounding.ContextPathSchema)

const defaults = `{"method": "mastra", "context_path": ""}`

// New returns the faithfulness scorer with Mastra's method.
func New() sdk.Scorer { return judgekit.NewScorer(Name, info, defaultConfig, check, grade) }

func defaultConfig() Config { return Config{Method: MethodMastra} }

// info describes the scorer.
func info() sdk.Info {
	info := judgekit.Info(Name, "Faithfulness: the share of the output's claims that the retrieved passages support, from one judge call "+
		"that extracts the claims and gives each a verdict. Methods: mastra (default), ragas, deepeval.", configSchema, defaults)
	info.Dimensions = []sdk.Dimension{{Name: Name, Weight: 1,
		Description: "Share of the output's claims the passages support; the host's citation audit clamps it."}}
	return info
}

// check refuses a method the scorer does not have.
func check(cfg Config) error {
	return judgekit.OneOf(Name, "method", cfg.Method, MethodMastra, MethodRagas, MethodDeepEval)
}

// formula is the score of verdicts under method, and false when there are none (the
// scorer skips such a run): supported / verdicts for mastra and ragas, (supported +
// unverifiable) / verdicts for deepeval.
func formula(method string, verdicts []string) (float64, bool) {
	return grounding.Share(verdicts, func(v string) bool {
		return v == supported || (method == MethodDeepEval && v == unverifiable)
	})
}

// grade scores call.Run under cfg.
func grade(ctx context.Context, cfg Config, call sdk.Call) (sdk.Result, error) {
	ev, res, done := grounding.ReadyOutput(&call, Name, cfg.ContextPath, "faithfulness checks the output's claims")
	if done {
		return res, nil
	}
	run := &call.Run
	ex, claims, unknown, err := grounding.AskClaims(ctx, call.Judge, system, prompt(run, ev.Passages), schema, labels, ev.Passages)
	if err != nil {
		return ex.Fail(Name, err), nil
	}
	flags := ev.Flags(unknown)
	score, ok := formula(cfg.Method, grounding.Verdicts(claims))
	if !ok {
		return grounding.NoClaims(ex, Name, "there is nothing to ground", flags), nil
	}
	n := grounding.Count(claims)
	formula := "supported / claims"
	if cfg.Method == MethodDeepEval {
		formula = "(supported + unverifiable) / claims"
	}
	res = ex.Scored(score, reason(cfg.Method, claims, n, ev, unknown), map[string]any{
		"method": cfg.Method, "formula": formula, "score": score, "claims": len(claims),
		supported: n[supported], contradicted: n[contradicted], unverifiable: n[unverifiable],
		"passages_from": ev.Source, "unknown_passages": unknown,
	})
	res.Dimensions = map[string]float64{Name: score}
	res.Flags = flags
	return res, nil
}

// reason composes the result's reason from the verdicts.
func reason(method string, claims []grounding.Claim, n map[string]int, ev grounding.Evidence, unknown []string) string {
	head := fmt.Sprintf("%d of %d claims supported by the passages", n[supported], len(claims))
	if method == MethodDeepEval {
		head = fmt.Sprintf("%d of %d claims not contradicted by the passages (%d supported, %d unverifiable; deepeval method)",
			len(claims)-n[contradicted], len(claims), n[supported], n[unverifiable])
	}
	parts := []string{head}
	for _, l := range []string{contradicted, unverifiable} {
		if s := grounding.Listed(claims, l); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(append(parts, ev.Notes(unknown)...), "; ")
}
