// Package hallucination is the hallucination_free scorer: how much of what the agent said
// is grounded in the passages it retrieved? It answers to Mastra's hallucination scorer and
// DeepEval's HallucinationMetric, whose scores run the other way (the hallucinated share,
// 0 is best); scorekit's scores are all higher-is-better, so this one is named for what a
// high score means:
//
//	hallucination_free  = 1 - Mastra's (or DeepEval's) hallucination score   (weight 1: the score)
//	hallucinated_share  = Mastra's (or DeepEval's) figure, lower is better    (weight 0: shown, not averaged)
//
// The score, the threshold (0.5), --fail-under and agreement all read hallucination_free;
// hallucinated_share is the peer's own number, kept in the result's dimensions for a
// team comparing figures. The host's citation audit clamps hallucination_free as it clamps
// faithfulness (an output citing a passage that does not exist has hallucinated);
// hallucinated_share is reported as computed from the verdicts.
//
// The config field "method" picks the peer's method:
//
//   - mastra (default): one judge call breaks the output into claims and gives each a
//     verdict: grounded (the passages back it, or allow it: an approximation they allow, a
//     hedge about a fact they state, an omitted detail), contradicted (a passage states
//     something incompatible), unsupported (the passages do not back it: a fact they do not
//     mention, speculation or a judgment such as "the market leader" about what they do not
//     cover). Mastra's yes (hallucinated) is contradicted or unsupported, its no is
//     grounded; hallucination_free = grounded / claims. Mastra makes three calls.
//   - deepeval: no claims. One judge call gives each passage a verdict: does the output
//     contradict it (contradicts) or not (agrees); hallucination_free = 1 - contradicting
//     passages / passages. DeepEval makes two calls and reads its test case's ideal context;
//     this scorer reads the run's passages. Every passage must be answered once, by id.
//
// The passages, the tool-result fallback and the statuses are faithfulness's: no passages
// (Mastra scores every claim hallucinated), an empty output or one with no claim (Mastra
// scores 0 hallucinated), an error message in place of an answer, and a tool-only turn are
// skipped with the reason; an answer that does not match the schema is failed.
//
// The package depends on the standard library, the sdk, internal/grounding and
// internal/judgekit: it compiles to WASM.
package hallucination

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/internal/grounding"
	"github.com/scorekit/scorekit/internal/judgekit"
	"github.com/scorekit/scorekit/internal/textkit"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/verdict"
)

// Name is the scorer's name.
const Name = "hallucination_free"

// dimensionShare is the weight-0 dimension carrying the peer's lower-is-better figure.
const dimensionShare = "hallucinated_share"

// Methods for Config.Method.
const (
	MethodMastra   = "mastra"
	MethodDeepEval = "deepeval"
)

// Verdicts of the mastra method, one per claim.
const (
	grounded     = "grounded"
	contradicted = "contradicted"
	unsupported  = "unsupported"
)

// Verdicts of the deepeval method, one per passage.
const (
	agrees      = "agrees"
	contradicts = "contradicts"
)

var (
	claimLabels   = []string{grounded, contradicted, unsupported}
	passageLabels = []string{agrees, contradicts}
)

// Config is the scorer's config.
type Config struct {
	// Method is mastra or deepeval (see the package doc). Optional. Default is mastra.
	Method string `json:"method"`
	// ContextPath selects the passages from run.metadata by a dotted path (e.g.
	// "retrieval.chunks"). Optional. Default is "": run.context.
	ContextPath string `json:"context_path"`
}

// configSchema is the JSON Schema of Config.
var configSchema = judgekit.ConfigSchema(
	`"method": {"type": "string", "enum": ["mastra", "deepeval"], "default": "mastra",
      "description": "mastra: grounded claims / claims; deepeval: 1 - passages the output contradicts / passages."}`,
	grounding.ContextPathSchema)

const defaults = `{"method": "mastra", "context_path": ""}`

// New returns the hallucination_free scorer with Mastra's method.
func New() sdk.Scorer { return judgekit.NewScorer(Name, info, defaultConfig, check, grade) }

func defaultConfig() Config { return Config{Method: MethodMastra} }

// info describes the scorer.
func info() sdk.Info {
	info := judgekit.Info(Name, "Hallucination-free share: the share of the output's claims grounded in the retrieved passages (1 - Mastra's "+
		"hallucination score), from one judge call. Methods: mastra (default), deepeval (per passage).", configSchema, defaults)
	info.Dimensions = []sdk.Dimension{
		{Name: Name, Weight: 1, Description: "Share of the output grounded in the passages; higher is better; the host's citation audit clamps it."},
		{Name: dimensionShare, Weight: 0, Description: "The peer's hallucination score, 1 - hallucination_free as the verdicts give it: lower is better; weight 0, not in the overall."},
	}
	return info
}

// check refuses a method the scorer does not have.
func check(cfg Config) error {
	return judgekit.OneOf(Name, "method", cfg.Method, MethodMastra, MethodDeepEval)
}

// formula is hallucination_free of verdicts, and false when there are none: grounded /
// verdicts under mastra (claim verdicts), agrees / verdicts under deepeval (passage
// verdicts). The peer's figure is 1 minus it.
func formula(method string, verdicts []string) (float64, bool) {
	good := grounded
	if method == MethodDeepEval {
		good = agrees
	}
	return grounding.Share(verdicts, func(v string) bool { return v == good })
}

// grade scores call.Run under cfg.
func grade(ctx context.Context, cfg Config, call sdk.Call) (sdk.Result, error) {
	ev, res, done := grounding.ReadyOutput(&call, Name, cfg.ContextPath, "hallucination_free checks the output's claims")
	if done {
		return res, nil
	}
	if cfg.Method == MethodDeepEval {
		return perPassage(ctx, call.Judge, &call.Run, ev), nil
	}
	return perClaim(ctx, call.Judge, &call.Run, ev), nil
}

// perClaim is Mastra's method in one call.
func perClaim(ctx context.Context, j sdk.Judge, run *sdk.Run, ev grounding.Evidence) sdk.Result {
	ex, claims, unknown, err := grounding.AskClaims(ctx, j, system, claimPrompt(run, ev.Passages), claimSchema, claimLabels, ev.Passages)
	if err != nil {
		return ex.Fail(Name, err)
	}
	score, ok := formula(MethodMastra, grounding.Verdicts(claims))
	if !ok {
		return grounding.NoClaims(ex, Name, "there is nothing that could be hallucinated", ev.Flags(unknown))
	}
	n := grounding.Count(claims)
	parts := []string{fmt.Sprintf("%d of %d claims grounded in the passages (hallucinated share %s: %d contradicted, %d unsupported)",
		n[grounded], len(claims), share(1-score), n[contradicted], n[unsupported])}
	for _, l := range []string{contradicted, unsupported} {
		if s := grounding.Listed(claims, l); s != "" {
			parts = append(parts, s)
		}
	}
	return result(ex, score, parts, ev, unknown, map[string]any{
		"method": MethodMastra, "formula": "hallucination_free = grounded / claims; hallucinated_share = (contradicted + unsupported) / claims",
		"score": score, dimensionShare: 1 - score, "claims": len(claims),
		grounded: n[grounded], contradicted: n[contradicted], unsupported: n[unsupported],
		"passages_from": ev.Source, "unknown_passages": unknown,
	})
}

// passageVerdict is one passage's verdict in the deepeval method.
type passageVerdict struct {
	ID      string `json:"id"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
}

// perPassage is DeepEval's method in one call: a verdict per passage, every passage once.
func perPassage(ctx context.Context, j sdk.Judge, run *sdk.Run, ev grounding.Evidence) sdk.Result {
	ex, content, err := judgekit.Ask(ctx, j, system, passagePrompt(run, ev.Passages), passageSchema)
	if err != nil {
		return ex.Fail(Name, err)
	}
	vs, err := readPassageVerdicts(content, ev.Passages)
	if err != nil {
		return ex.Fail(Name, err)
	}
	ex.Parsed = map[string]any{"passages": vs}
	verdicts := make([]string, len(vs))
	var against []string
	for i, v := range vs {
		verdicts[i] = v.Verdict
		if v.Verdict == contradicts {
			against = append(against, v.ID)
		}
	}
	score, _ := formula(MethodDeepEval, verdicts)
	parts := []string{fmt.Sprintf("the output agrees with %d of %d passages (hallucinated share %s; deepeval method)",
		len(vs)-len(against), len(vs), share(1-score))}
	if len(against) > 0 {
		parts = append(parts, "it contradicts passage "+strings.Join(against, ", "))
	}
	return result(ex, score, parts, ev, nil, map[string]any{
		"method": MethodDeepEval, "formula": "hallucination_free = 1 - contradicted passages / passages",
		"score": score, dimensionShare: 1 - score, "passages": len(vs), contradicts: len(against),
		"passages_from": ev.Source,
	})
}

// readPassageVerdicts reads {"passages": [...]}: one verdict per passage of ps, by id, in
// ps's order. A missing, repeated or unknown id, or another verdict, is an error naming it.
func readPassageVerdicts(content string, ps []sdk.Passage) ([]passageVerdict, error) {
	var ans struct {
		Passages *[]struct {
			ID      string `json:"id"`
			Verdict any    `json:"verdict"`
			Reason  string `json:"reason"`
		} `json:"passages"`
	}
	if err := verdict.Extract(content, &ans); err != nil {
		return nil, err
	}
	if ans.Passages == nil {
		return nil, fmt.Errorf(`the judge's answer has no "passages" array (judge output: %s)`, textkit.Clip(content, 500))
	}
	ids := grounding.IDs(ps)
	byID := map[string]passageVerdict{}
	var unknown, twice []string
	for _, p := range *ans.Passages {
		id := strings.TrimSpace(p.ID)
		switch {
		case !ids[id]:
			unknown = append(unknown, id)
			continue
		case byID[id].ID != "":
			twice = append(twice, id)
			continue
		}
		label, ok := grounding.Label(p.Verdict, passageLabels)
		if !ok {
			b, _ := json.Marshal(p.Verdict)
			return nil, fmt.Errorf("passage %s: verdict %s is not agrees or contradicts (judge output: %s)", id, b, textkit.Clip(content, 500))
		}
		byID[id] = passageVerdict{ID: id, Verdict: label, Reason: strings.TrimSpace(p.Reason)}
	}
	var missing []string
	out := make([]passageVerdict, 0, len(ps))
	for _, p := range ps {
		v, ok := byID[p.ID]
		if !ok {
			missing = append(missing, p.ID)
			continue
		}
		out = append(out, v)
	}
	var problems []string
	if len(missing) > 0 {
		problems = append(problems, "no verdict for passage "+strings.Join(missing, ", "))
	}
	if len(unknown) > 0 {
		problems = append(problems, fmt.Sprintf("verdicts for passages the run does not have (%s)", strings.Join(unknown, ", ")))
	}
	if len(twice) > 0 {
		problems = append(problems, "more than one verdict for passage "+strings.Join(twice, ", "))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("the judge's answer does not give one verdict per passage: %s (judge output: %s)",
			strings.Join(problems, "; "), textkit.Clip(content, 500))
	}
	return out, nil
}

// result is the scored result: both dimensions, the composed reason, the flags and the
// steps.
func result(ex *judgekit.Exchange, score float64, parts []string, ev grounding.Evidence, unknown []string, step map[string]any) sdk.Result {
	res := ex.Scored(score, strings.Join(append(parts, ev.Notes(unknown)...), "; "), step)
	res.Dimensions = map[string]float64{Name: score, dimensionShare: 1 - score}
	res.Flags = ev.Flags(unknown)
	return res
}

// share writes a share as people read it: 0.33, 1, 0.
func share(x float64) string { return fmt.Sprintf("%.2g", x) }
