// Package contextrecall is the context recall scorer: did retrieval bring what the answer
// needed? It breaks the reference answer (run.expected) into claims and checks, for each,
// whether the retrieved passages hold it; the score is the share that they do. It grades
// the retriever, not the agent's output, which it does not read.
//
// One judge call returns the claims of the reference answer, each with a verdict
// (attributed: a passage states it or it follows from them directly; not_attributed: no
// passage holds it) and the ids of the passages that hold it, so the result's steps show
// which piece of the reference the retriever missed. The reason is composed from the
// verdicts.
//
// The config field "method" picks the peer's unit; the formula is the same in all three:
//
//	method    unit of the reference answer                       score                     peer
//	mastra    atomic claims, extracted by the judge              attributed / claims       Mastra's context recall (3 calls)
//	ragas     the same                                           attributed / claims       Ragas' context_recall (1 call; the question is shown, as Ragas does)
//	deepeval  its sentences, split by the scorer and numbered    attributed / sentences    DeepEval's ContextualRecallMetric (2 calls)
//
// Mastra's and Ragas' methods are one computation here (Ragas' formula is Mastra's; the
// prompt shows the question for both); ragas is accepted so that a config names the peer it
// follows. With deepeval the judge must answer every sentence, in order.
//
// Statuses, never a 0 for what is not a retrieval fact: a run without a reference answer
// (run.expected missing or blank) or without passages is skipped with the reason (Mastra
// scores a missing reference 0 and refuses to build without passages); a reference answer
// the judge finds no claim in is failed (it states something; the judge missed it). The
// passages are run.context, or the metadata path in "context_path", or the run's tool
// results when it has neither (flag context_from_tools).
//
// The package depends on the standard library, the sdk, internal/grounding and
// internal/judgekit: it compiles to WASM.
package contextrecall

import (
	"context"
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/internal/grounding"
	"github.com/scorekit/scorekit/internal/judgekit"
	"github.com/scorekit/scorekit/internal/textkit"
	"github.com/scorekit/scorekit/sdk"
)

// Name is the scorer's name.
const Name = "context_recall"

// Methods for Config.Method.
const (
	MethodMastra   = "mastra"
	MethodRagas    = "ragas"
	MethodDeepEval = "deepeval"
)

// Verdicts the judge gives each claim of the reference answer.
const (
	attributed    = "attributed"
	notAttributed = "not_attributed"
)

var labels = []string{attributed, notAttributed}

// Config is the scorer's config.
type Config struct {
	// Method is mastra, ragas or deepeval (see the package doc). Optional. Default is
	// mastra.
	Method string `json:"method"`
	// ContextPath selects the passages from run.metadata by a dotted path (e.g.
	// "retrieval.chunks"). Optional. Default is "": run.context.
	ContextPath string `json:"context_path"`
}

// configSchema is the JSON Schema of Config.
var configSchema = judgekit.ConfigSchema(
	`"method": {"type": "string", "enum": ["mastra", "ragas", "deepeval"], "default": "mastra",
      "description": "mastra and ragas: the judge splits the reference answer into claims; deepeval: the scorer splits it into sentences. Score: attributed / units."}`,
	grounding.ContextPathSchema)

const defaults = `{"method": "mastra", "context_path": ""}`

// New returns the context recall scorer with Mastra's method.
func New() sdk.Scorer { return judgekit.NewScorer(Name, info, defaultConfig, check, grade) }

func defaultConfig() Config { return Config{Method: MethodMastra} }

// info describes the scorer.
func info() sdk.Info {
	return judgekit.Info(Name, "Context recall: the share of the reference answer's claims (run.expected) that the retrieved passages hold, "+
		"from one judge call. Methods: mastra (default), ragas, deepeval (per sentence).", configSchema, defaults)
}

// check refuses a method the scorer does not have.
func check(cfg Config) error {
	return judgekit.OneOf(Name, "method", cfg.Method, MethodMastra, MethodRagas, MethodDeepEval)
}

// formula is attributed / verdicts, and false when there are none.
func formula(verdicts []string) (float64, bool) {
	return grounding.Share(verdicts, func(v string) bool { return v == attributed })
}

// grade scores call.Run under cfg.
func grade(ctx context.Context, cfg Config, call sdk.Call) (sdk.Result, error) {
	run := &call.Run
	if strings.TrimSpace(run.Expected) == "" {
		return sdk.Skipped(Name + " checks the reference answer's claims against the retrieved passages, and the run has " +
			"no reference answer: put it in run.expected (what a correct answer says); no judge call was made"), nil
	}
	ev, res, done := grounding.Ready(&call, Name, cfg.ContextPath, "context_recall checks the reference answer's claims")
	if done {
		return res, nil
	}
	var sentences []string
	if cfg.Method == MethodDeepEval {
		sentences = grounding.Sentences(run.Expected)
	}
	ex, claims, unknown, err := grounding.AskClaims(ctx, call.Judge, system, prompt(run, ev.Passages, sentences), schema, labels, ev.Passages)
	if err != nil {
		return ex.Fail(Name, err), nil
	}
	switch {
	case sentences != nil && len(claims) != len(sentences):
		return ex.Fail(Name, fmt.Errorf("the judge gave %d verdicts for the %d sentences of the reference answer (deepeval method: one per sentence, in order)",
			len(claims), len(sentences))), nil
	case len(claims) == 0:
		return ex.Fail(Name, fmt.Errorf("the judge found no claim in the reference answer, which is not blank (judge output: %s)",
			textkit.Clip(*ex.Raw, 500))), nil
	}
	score, _ := formula(grounding.Verdicts(claims))
	n := grounding.Count(claims)
	unit := "claims"
	if sentences != nil {
		unit = "sentences"
	}
	parts := []string{fmt.Sprintf("the passages hold %d of the reference answer's %d %s", n[attributed], len(claims), unit)}
	if l := grounding.Listed(claims, notAttributed); l != "" {
		parts = append(parts, strings.Replace(l, "not attributed: ", "missing from the passages: ", 1))
	}
	res = ex.Scored(score, strings.Join(append(parts, ev.Notes(unknown)...), "; "), map[string]any{
		"method": cfg.Method, "formula": "attributed / " + unit, "score": score, unit: len(claims),
		attributed: n[attributed], notAttributed: n[notAttributed], "passages_from": ev.Source, "unknown_passages": unknown,
	})
	res.Flags = ev.Flags(unknown)
	return res, nil
}
