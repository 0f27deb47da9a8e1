package heuristic

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/scorekit/scorekit/internal/prescreen"
	"github.com/scorekit/scorekit/sdk"
)

// Flags the pre-screen raises. FlagNonCommittal, FlagWrongShape and FlagOffTopic are hints
// that do not fail the run (see [NewPrescreen]); every other flag fails it.
const (
	FlagEmptyOutput  = prescreen.FlagEmptyOutput
	FlagErrorText    = prescreen.FlagErrorText
	FlagPlaceholder  = prescreen.FlagPlaceholder
	FlagRefusal      = prescreen.FlagRefusal
	FlagTruncated    = prescreen.FlagTruncated
	FlagRepetition   = prescreen.FlagRepetition
	FlagFiller       = prescreen.FlagFiller
	FlagOffTopic     = prescreen.FlagOffTopic
	FlagEcho         = prescreen.FlagEcho
	FlagWrongShape   = prescreen.FlagWrongShape
	FlagNonCommittal = prescreen.FlagNonCommittal
	// FlagToolError: every tool call of a turn failed and the turn says nothing of it.
	FlagToolError = prescreen.FlagToolError
)

// NewPrescreen returns "prescreen", the tier-1 pre-screen: a check that needs no LLM, runs
// in microseconds and finds reasons to distrust a run before anyone pays for a judge. Passed
// means "no reason found to distrust this run"; it does not mean the answer is right.
//
// It scores two dimensions with equal weight:
//   - integrity: the output is a real, whole answer: not empty (empty_output), not an error
//     message, stack trace, framework stop or failure notice (error_text), not a template
//     slot or null left unfilled (placeholder), not cut off (truncated), not a degenerate
//     loop (repetition), not pleasantries with no content (filler), and not a refusal
//     (refusal);
//   - relevance: the output is not an echo of the input (echo); a statement that shares no
//     word with the input is noted (off_topic) and not failed.
//
// # Precision first
//
// A flag fails a run only on evidence that holds across languages, answer kinds and
// domains. Weak evidence is recorded and does not fail the run: a short answer without the
// shape its question asks for ("How many ...?" answered without a number) is flagged
// wrong_shape, and a statement of 6 content words or more (configurable:
// off_topic_min_words) that shares none with the input is flagged off_topic, with relevance
// 0.5 ("passed with notes"). Word overlap never fails a run: answer spans, recipes, code,
// answers in other languages and plain correct answers ("a horror film's opening scene" for
// "a creative opening scene for a horror movie") share no word with their request. Whether
// an output answers what was asked is the judge's question; a tiered evaluation asks it of
// every run the pre-screen passes, and reads the hints.
//
// # What the caller knows
//
// How the run ended, when the caller recorded it in metadata (finish_reason, stop_reason,
// finishReason, stopReason, error, status; see sdk.Run), is definitive: a model stopped at
// its token limit is truncated, a provider's safety stop is a refusal, a recorded error is
// error_text, and a model that ended its answer itself ("stop", "end_turn") was not cut off,
// whatever the output says.
//
// # Refusals
//
// A refusal is an output that declines to do what was asked, in any wording ("That's not
// something I can help with", "I'd rather not", "Lo siento, pero no puedo ayudarte",
// "申し訳ありませんが、お答えできません"); it is recognised in English and about fifty
// other languages. Every refusal fails the pre-screen and is flagged refusal, in every language
// alike: passed means the run did what was asked, and a refusal did not. Whether declining
// was right (a harmful request) cannot be read from keywords ("bomb calorimeter", resetting
// one's own password), so the pre-screen does not try: a judge scorer settles it, and a
// dashboard that counts appropriate refusals reads the flag. Quoting the input, correcting a
// false premise ("Goofy is fictional") and a disclaimer followed by the answer are not
// refusals.
//
// # Actions
//
// A turn that does its job through tools is judged on what it did. A run with tool calls
// and no text is not empty: it passes unless the caller recorded a bad end (an error, a
// refusal, a cut-off) or every call failed. A turn whose calls all failed and that says
// nothing of it, by silence or by an answer that claims success, is flagged tool_error and
// fails; a failed call followed by a retry that worked, or an answer that reports the
// failure to the user, is not. A call failed when the result recorded for it says so (an
// "error" field, is_error true, success false) or is an error message. Only a turn that neither said nor did anything is empty_output.
//
// # Non-committal answers
//
// "I have no comment" is a correct TruthfulQA answer and "the context does not say" can be
// the honest answer of a RAG agent, so non-committal answers are flagged "non_committal"
// but not failed: whether abstaining was right needs the facts, which a pre-screen lacks.
func NewPrescreen() sdk.Scorer { return &prescreenScorer{params: prescreen.DefaultParams} }

const prescreenSchema = `{"type": "object", "additionalProperties": false, "properties": {
	"off_topic_min_words": {"type": "integer", "minimum": 1, "description": "Content words an output needs before sharing none with the input raises the off_topic flag. It decides the flag only: word overlap never fails a run. Optional. Default is 6."},
	"cutoff_min_words": {"type": "integer", "minimum": 1, "description": "Words an output needs before its last word alone can mark it cut off. Optional. Default is 25."}}}`

const prescreenDefaults = `{"off_topic_min_words": 6, "cutoff_min_words": 25}`

// prescreenScorer is the pre-screen as a scorer; its checks are internal/prescreen's.
type prescreenScorer struct {
	params prescreen.Params
}

var (
	_ sdk.Scorer     = (*prescreenScorer)(nil)
	_ sdk.Configurer = (*prescreenScorer)(nil)
)

func (*prescreenScorer) Info() sdk.Info {
	return sdk.Info{
		Name:        "prescreen",
		Version:     "0.3.0",
		ABIVersion:  sdk.ABIVersion,
		Description: "Tier-1 pre-screen without an LLM: flags empty, error, placeholder, refused, truncated, looping, filler and off-topic outputs and turns whose tool calls all failed unreported; reads tool calls as output; fails a run only on evidence that holds across languages.",
		Range:       sdk.Unit,
		Dimensions: []sdk.Dimension{
			{Name: prescreen.DimIntegrity, Weight: 0.5, Description: "The output is a whole, genuine answer or action: not empty, an error, a placeholder, truncated, a loop, filler, a refusal or tool calls that all failed unreported."},
			{Name: prescreen.DimRelevance, Weight: 0.5, Description: "The output is not an echo or an off-topic statement; 0.5 records a hint (wrong shape, no shared word) without failing the run."},
		},
		Threshold:    prescreen.Threshold,
		ConfigSchema: json.RawMessage(prescreenSchema),
		Defaults:     json.RawMessage(prescreenDefaults),
	}
}

// Configure sets the thresholds; see the config schema.
func (p *prescreenScorer) Configure(raw json.RawMessage) error {
	params := prescreen.DefaultParams
	if err := decodeConfig("prescreen", json.RawMessage(prescreenDefaults), raw, &params); err != nil {
		return err
	}
	if params.OffTopicMinWords < 1 || params.CutoffMinWords < 1 {
		return fmt.Errorf("configure prescreen: off_topic_min_words and cutoff_min_words must be 1 or more, got %d and %d",
			params.OffTopicMinWords, params.CutoffMinWords)
	}
	params.WordsShared = p.params.WordsShared
	p.params = params
	return nil
}

func (p *prescreenScorer) Score(_ context.Context, call sdk.Call) (sdk.Result, error) {
	return prescreen.Screen(&call.Run, p.params), nil
}
