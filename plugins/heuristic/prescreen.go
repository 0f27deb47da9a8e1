package heuristic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/scorekit/scorekit/sdk"
)

// Flags the pre-screen raises. FlagNonCommittal, FlagWrongShape and FlagOffTopic are hints
// that do not fail the run (see [NewPrescreen]); every other flag fails it.
const (
	FlagEmptyOutput  = "empty_output"
	FlagErrorText    = "error_text"
	FlagPlaceholder  = "placeholder"
	FlagRefusal      = "refusal"
	FlagTruncated    = "truncated"
	FlagRepetition   = "repetition"
	FlagFiller       = "filler"
	FlagOffTopic     = "off_topic"
	FlagEcho         = "echo"
	FlagWrongShape   = "wrong_shape"
	FlagNonCommittal = "non_committal"
)

// Dimensions of the pre-screen and their weights; the host's weighted mean of the two is the
// overall score.
const (
	dimIntegrity = "integrity"
	dimRelevance = "relevance"
	// prescreenThreshold sits above 0.5, so a single dimension at 0 (a hard failure) fails
	// the run whatever the other says, while a soft doubt (relevance 0.5) alone does not.
	prescreenThreshold = 0.6
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
// wrong_shape, and a statement of OffTopicMinWords content words or more (configurable:
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
// failure to the user, is not. [ToolCallFailed] says what counts as a failed call. Only a
// turn that neither said nor did anything is empty_output.
//
// # Non-committal answers
//
// "I have no comment" is a correct TruthfulQA answer and "the context does not say" can be
// the honest answer of a RAG agent, so non-committal answers are flagged "non_committal"
// but not failed: whether abstaining was right needs the facts, which a pre-screen lacks.
func NewPrescreen() sdk.Scorer { return &prescreen{params: defaultScreenParams} }

// OffTopicMinWords is the default of the prescreen's off_topic_min_words: how many content
// words an output needs before sharing none with the input raises the off_topic flag. It
// decides the flag only, never the verdict (QUALITY.md: at 6, 0.6% of TruthfulQA's best
// answers share no content word with their question, against 29% of the same answers
// paired with another question).
const OffTopicMinWords = 6

// CutoffMinWords is the default of the prescreen's cutoff_min_words: an output of fewer
// words is never called cut off by its last word alone (the caller's stop reason and an
// unclosed code fence still count).
const CutoffMinWords = 25

// screenParams are the prescreen's tunable thresholds.
type screenParams struct {
	OffTopicMinWords int `json:"off_topic_min_words"`
	CutoffMinWords   int `json:"cutoff_min_words"`
	// wordsShared forces the word-overlap signal to "the output shares words with the
	// input" (tests only: no verdict may depend on that signal).
	wordsShared bool
}

var defaultScreenParams = screenParams{OffTopicMinWords: OffTopicMinWords, CutoffMinWords: CutoffMinWords}

const prescreenSchema = `{"type": "object", "additionalProperties": false, "properties": {
	"off_topic_min_words": {"type": "integer", "minimum": 1, "description": "Content words an output needs before sharing none with the input raises the off_topic flag. It decides the flag only: word overlap never fails a run. Optional. Default is 6."},
	"cutoff_min_words": {"type": "integer", "minimum": 1, "description": "Words an output needs before its last word alone can mark it cut off. Optional. Default is 25."}}}`

const prescreenDefaults = `{"off_topic_min_words": 6, "cutoff_min_words": 25}`

type prescreen struct {
	params screenParams
}

var (
	_ sdk.Scorer     = (*prescreen)(nil)
	_ sdk.Configurer = (*prescreen)(nil)
)

func (*prescreen) Info() sdk.Info {
	return sdk.Info{
		Name:        "prescreen",
		Version:     "0.3.0",
		ABIVersion:  sdk.ABIVersion,
		Description: "Tier-1 pre-screen without an LLM: flags empty, error, placeholder, refused, truncated, looping, filler and off-topic outputs and turns whose tool calls all failed unreported; reads tool calls as output; fails a run only on evidence that holds across languages.",
		Range:       sdk.Unit,
		Dimensions: []sdk.Dimension{
			{Name: dimIntegrity, Weight: 0.5, Description: "The output is a whole, genuine answer or action: not empty, an error, a placeholder, truncated, a loop, filler, a refusal or tool calls that all failed unreported."},
			{Name: dimRelevance, Weight: 0.5, Description: "The output is not an echo or an off-topic statement; 0.5 records a hint (wrong shape, no shared word) without failing the run."},
		},
		Threshold:    prescreenThreshold,
		ConfigSchema: json.RawMessage(prescreenSchema),
		Defaults:     json.RawMessage(prescreenDefaults),
	}
}

// Configure sets the thresholds; see the config schema.
func (p *prescreen) Configure(raw json.RawMessage) error {
	params := defaultScreenParams
	if err := decodeConfig("prescreen", json.RawMessage(prescreenDefaults), raw, &params); err != nil {
		return err
	}
	if params.OffTopicMinWords < 1 || params.CutoffMinWords < 1 {
		return fmt.Errorf("configure prescreen: off_topic_min_words and cutoff_min_words must be 1 or more, got %d and %d",
			params.OffTopicMinWords, params.CutoffMinWords)
	}
	params.wordsShared = p.params.wordsShared
	p.params = params
	return nil
}

// screenFinding is one reason to distrust a run.
type screenFinding struct {
	flag   string
	detail string
}

func (p *prescreen) Score(_ context.Context, call sdk.Call) (sdk.Result, error) {
	return screen(&call.Run, p.params), nil
}

// screen runs every check and returns the result with both dimensions and the overall
// score already computed as their weighted mean, so a caller without a host reads the
// same number the host recomputes.
func screen(run *sdk.Run, params screenParams) sdk.Result {
	integrity, relevance := 1.0, 1.0
	var found []screenFinding
	out := strings.TrimSpace(run.Output)
	if out == "" {
		return screenNoText(run)
	}
	// The prepared run stays on the stack.
	var st screenText
	st.fill(run.Input, out, run.Purpose())
	st.toolFailed = anyToolCallFailed(run)
	st.outWords = splitWords(st.outLow)
	st.wordsShared = params.wordsShared
	t := &st
	end, endDetail := readCallerEnd(run.Metadata)
	hard := func(f screenFinding) {
		integrity = 0
		found = append(found, f)
	}
	if end == endErrored {
		hard(screenFinding{FlagErrorText, endDetail})
	} else if d, ok := findErrorText(t); ok {
		hard(screenFinding{FlagErrorText, d})
	}
	if d, ok := findPlaceholder(t); ok {
		hard(screenFinding{FlagPlaceholder, d})
	}
	abstains, abstained := findNonCommittal(t)
	// A refusal, like an abstention, has no answer shape to check.
	noShape := abstained
	switch d, refused := findRefusal(t); {
	case end == endRefused:
		hard(screenFinding{FlagRefusal, endDetail})
		relevance, noShape = 0, true
	case refused && !abstained:
		// "I can't say: it is not mentioned" abstains rather than refuses; see the policy.
		hard(screenFinding{FlagRefusal, d + "; whether declining was right is a judge's call"})
		relevance, noShape = 0, true
	}
	if d, ok := findRepetition(t); ok {
		hard(screenFinding{FlagRepetition, d})
	}
	if end == endTruncated {
		hard(screenFinding{FlagTruncated, endDetail})
	} else if d, ok := findTruncation(t, params.CutoffMinWords); ok && end != endFinished {
		hard(screenFinding{FlagTruncated, d})
	}
	if integrity > 0 {
		if d, ok := findFiller(t); ok {
			hard(screenFinding{FlagFiller, d})
			relevance = 0
		}
	}
	if integrity > 0 {
		if d, ok := findToolError(run, t); ok {
			hard(screenFinding{FlagToolError, d})
		}
	}
	if integrity > 0 && !noShape {
		var fs []screenFinding
		relevance, fs = shapeRelevance(t, params.OffTopicMinWords)
		found = append(found, fs...)
	}
	if abstained {
		found = append(found, screenFinding{FlagNonCommittal, abstains})
	}
	return screenResult(integrity, relevance, found)
}

func screenResult(integrity, relevance float64, found []screenFinding) sdk.Result {
	score := 0.5*integrity + 0.5*relevance
	r := sdk.Scored(score, screenReason(score, found))
	r.Dimensions = map[string]float64{dimIntegrity: integrity, dimRelevance: relevance}
	for _, f := range found {
		r.Flags = append(r.Flags, f.flag)
	}
	return r
}

func screenReason(score float64, found []screenFinding) string {
	if len(found) == 0 {
		return "no reason found to distrust this run"
	}
	var b strings.Builder
	if score < prescreenThreshold {
		b.WriteString("distrusted: ")
	} else {
		b.WriteString("passed with notes: ")
	}
	for i, f := range found {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.flag)
		b.WriteString(" (")
		b.WriteString(f.detail)
		b.WriteString(")")
	}
	return b.String()
}
