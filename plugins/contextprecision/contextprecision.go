// Package contextprecision grades a retriever: did it put the passages that were useful for
// the answer first? The score is Mean Average Precision (MAP) over per-passage verdicts:
//
//	MAP = sum over relevant positions k of (relevant in the first k / k), divided by the
//	      number of relevant passages; 0 when none is relevant.
//
// Three modes produce the verdicts:
//   - judge (default, Mastra-compatible): one judge call returns a verdict per passage;
//   - per_passage (Ragas-compatible): one judge request per passage, sent as one batch the
//     host runs concurrently; Ragas divides by (relevant + 1e-10), which rounds the same;
//   - similarity (Ragas' non-LLM context precision): a passage is relevant when its
//     normalized Levenshtein similarity to some reference passage is >= threshold (0.5).
//     It needs no judge.
//
// The reference the passages are judged against is run.expected when present, otherwise the
// output (Ragas calls that context utilization); the result says which was used. Edge cases
// are statuses, never zeros: no context is skipped, a judge that returns the wrong number of
// verdicts gets one repair prompt and is then failed naming the mismatch.
package contextprecision

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/internal/grounding"
	"github.com/scorekit/scorekit/internal/judgekit"
	"github.com/scorekit/scorekit/internal/prescreen"
	"github.com/scorekit/scorekit/sdk"
)

// Name is the scorer's name.
const Name = "contextprecision"

// Modes.
const (
	ModeJudge      = "judge"
	ModePerPassage = "per_passage"
	ModeSimilarity = "similarity"
)

// Config is the scorer's configuration.
type Config struct {
	// Mode is judge, per_passage or similarity. Optional. Default is judge.
	Mode string `json:"mode"`
	// ContextPath selects the passages from run.metadata by a dotted path (e.g.
	// "retrieval.chunks"), like Mastra's contextExtractor. Optional. Default is "":
	// run.context.
	ContextPath string `json:"context_path"`
	// ReferencePath selects reference passages from run.metadata for similarity mode.
	// Optional. Default is "reference_contexts"; when absent, run.expected is the one
	// reference passage.
	ReferencePath string `json:"reference_path"`
	// Threshold is the similarity at or above which a passage counts as relevant in
	// similarity mode. Optional. Default is 0.5.
	Threshold float64 `json:"threshold"`
	// Repair allows one re-prompt when the judge returns the wrong verdicts. Optional.
	// Default is true.
	Repair bool `json:"repair"`
}

// configSchema is the JSON Schema of Config.
var configSchema = judgekit.ConfigSchema(
	`"mode": {"enum": ["judge", "per_passage", "similarity"], "description": "Where verdicts come from. Default judge."}`,
	grounding.ContextPathSchema,
	`"reference_path": {"type": "string", "description": "Dotted path into run.metadata holding reference passages (similarity mode). Default reference_contexts."}`,
	`"threshold": {"type": "number", "minimum": 0, "maximum": 1, "description": "Similarity threshold (similarity mode). Default 0.5."}`,
	`"repair": {"type": "boolean", "description": "One re-prompt on a verdict-count mismatch. Default true."}`)

const defaults = `{"mode": "judge", "context_path": "", "reference_path": "reference_contexts", "threshold": 0.5, "repair": true}`

// scorer is the context precision scorer.
type scorer struct {
	cfg Config
}

var (
	_ sdk.Scorer     = (*scorer)(nil)
	_ sdk.Configurer = (*scorer)(nil)
)

// New returns a context precision scorer with the default config.
func New() sdk.Scorer {
	s := &scorer{}
	if err := json.Unmarshal([]byte(defaults), &s.cfg); err != nil {
		panic(err) // the defaults are a constant
	}
	return s
}

// ObservesContext reports true: the scorer's time is spent waiting on the judge, whose calls
// end with their context, and its own work between them is short. A host
// (host.ContextObserver) then does not count its calls against the few it allows native
// code that cannot be stopped, which would cap a worker's judge calls at one per core.
func (*scorer) ObservesContext() bool { return true }

// Info describes the scorer.
func (s *scorer) Info() sdk.Info {
	return sdk.Info{
		Name:         Name,
		Version:      "1.0.0",
		ABIVersion:   sdk.ABIVersion,
		Description:  "Mean Average Precision of the retrieved passages: were the passages useful for the answer ranked first? Modes: judge (Mastra), per_passage (Ragas), similarity (no LLM).",
		Range:        sdk.Unit,
		Threshold:    0.5,
		ConfigSchema: json.RawMessage(configSchema),
		Defaults:     json.RawMessage(defaults),
		Capabilities: []sdk.Capability{sdk.CapJudge},
	}
}

// Configure takes the validated config.
func (s *scorer) Configure(raw json.RawMessage) error {
	cfg := s.cfg
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return fmt.Errorf("configure %s: %w", Name, err)
		}
	}
	switch cfg.Mode {
	case ModeJudge, ModePerPassage, ModeSimilarity:
	default:
		return fmt.Errorf("configure %s: mode %q: want judge, per_passage or similarity", Name, cfg.Mode)
	}
	s.cfg = cfg
	return nil
}

// Score grades the ranking of the run's passages.
func (s *scorer) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	run := &call.Run
	passages, source, err := s.passages(run)
	if err != nil {
		return sdk.Failed(sdk.CodeInvalidRun, err.Error()), nil
	}
	if len(passages) == 0 {
		return sdk.Skipped("no context to grade: the run has no " + source + "; context precision needs the retrieved passages"), nil
	}
	var (
		res      sdk.Result
		verdicts []bool
		refNote  string
	)
	switch s.cfg.Mode {
	case ModeSimilarity:
		refs, from := s.references(run)
		if len(refs) == 0 {
			return sdk.Skipped("similarity mode needs reference passages: set run.expected or metadata." + s.cfg.ReferencePath), nil
		}
		refNote = "reference passages from " + from
		verdicts, res.Steps = similarityVerdicts(passages, refs, s.cfg.Threshold)
	default:
		if res, ok := noReference(run); ok {
			return res, nil
		}
		if call.Judge == nil {
			return sdk.NoJudge(Name), nil
		}
		reference, from := referenceText(run)
		refNote = "reference: " + from
		var r sdk.Result
		if s.cfg.Mode == ModeJudge {
			verdicts, r = s.judgeVerdicts(ctx, call.Judge, run.Input, reference, passages)
		} else {
			verdicts, r = perPassageVerdicts(ctx, call.Judge, run.Input, reference, passages)
		}
		if r.Status == sdk.StatusFailed {
			return r, nil
		}
		res.Steps = r.Steps
	}
	score := MAP(verdicts)
	res.Status = sdk.StatusScored
	res.Score = &score
	relevant := 0
	for _, v := range verdicts {
		if v {
			relevant++
		}
	}
	res.Reason = fmt.Sprintf("%d of %d passages useful (%s, %s mode); MAP %.4f", relevant, len(verdicts), refNote, s.cfg.Mode, score)
	if run.Expected == "" && s.cfg.Mode != ModeSimilarity {
		res.Flags = append(res.Flags, "reference_from_output")
	}
	if d := duplicates(passages); len(d) > 0 {
		res.Flags = append(res.Flags, "duplicate_passages")
		res.Reason += "; duplicate passages: " + strings.Join(d, ", ")
	}
	return res, nil
}

// MAP is Mean Average Precision over verdicts in ranking order: for each relevant position
// k (1-based), the share of relevant passages among the first k, averaged over the relevant
// passages. It is 0 when no passage is relevant.
func MAP(verdicts []bool) float64 {
	var sum float64
	relevant := 0
	for i, v := range verdicts {
		if v {
			relevant++
			sum += float64(relevant) / float64(i+1)
		}
	}
	if relevant == 0 {
		return 0
	}
	return sum / float64(relevant)
}

// referenceText is what the passages are judged against: the expected answer when the run
// has one, else the output.
func referenceText(run *sdk.Run) (text, from string) {
	if run.Expected != "" {
		return run.Expected, "expected"
	}
	return run.Output, "output (no expected answer: context utilization)"
}

// noReference skips a run whose output would be the reference but answers nothing, or
// answers only through tool calls.
func noReference(run *sdk.Run) (sdk.Result, bool) {
	if run.Expected != "" {
		return sdk.Result{}, false
	}
	if prescreen.ToolOnly(run) {
		return sdk.Skipped("no reference to grade the passages against: the run has no expected answer and its only output " +
			"is tool calls, no text that used the passages (set run.expected to grade the retriever anyway); no judge call was made"), true
	}
	flag, why, ok := prescreen.Unanswered(run)
	if !ok {
		return sdk.Result{}, false
	}
	res := sdk.Skipped("no reference to grade the passages against: the run has no expected answer and " + why +
		"; whether the passages were useful cannot be judged without an answer (set run.expected to grade the retriever anyway); no judge call was made")
	res.Flags = []string{flag}
	return res, true
}

// passages returns the passages to grade and names where they came from.
func (s *scorer) passages(run *sdk.Run) ([]sdk.Passage, string, error) {
	if s.cfg.ContextPath == "" {
		return run.Context, "context", nil
	}
	where := "metadata." + s.cfg.ContextPath
	v, ok := grounding.Lookup(run.Metadata, s.cfg.ContextPath)
	if !ok {
		return nil, where, nil
	}
	ps, err := grounding.ToPassages(v)
	if err != nil {
		return nil, where, fmt.Errorf("%s: %w", where, err)
	}
	return ps, where, nil
}

// references returns the reference passages for similarity mode and names their source.
func (s *scorer) references(run *sdk.Run) ([]string, string) {
	if s.cfg.ReferencePath != "" {
		if v, ok := grounding.Lookup(run.Metadata, s.cfg.ReferencePath); ok {
			if ps, err := grounding.ToPassages(v); err == nil && len(ps) > 0 {
				out := make([]string, len(ps))
				for i, p := range ps {
					out[i] = p.Text
				}
				return out, "metadata." + s.cfg.ReferencePath
			}
		}
	}
	if run.Expected != "" {
		return []string{run.Expected}, "expected"
	}
	return nil, ""
}

// duplicates lists the ids of passages whose text repeats an earlier passage's.
func duplicates(ps []sdk.Passage) []string {
	seen := make(map[string]string, len(ps))
	var out []string
	for _, p := range ps {
		key := strings.Join(strings.Fields(strings.ToLower(p.Text)), " ")
		if first, ok := seen[key]; ok {
			out = append(out, p.ID+" = "+first)
			continue
		}
		seen[key] = p.ID
	}
	return out
}

func step(name, prompt string, output any) sdk.Step {
	b, _ := json.Marshal(output)
	return sdk.Step{Name: name, Prompt: prompt, Output: b}
}
