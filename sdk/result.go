package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Status says whether a result carries a score. Only StatusScored results enter averages,
// pass rates and insights; a scorer that could not judge is never a score of 0.
type Status string

// The three statuses.
const (
	// StatusScored: Score and Dimensions are meaningful.
	StatusScored Status = "scored"
	// StatusSkipped: the scorer does not apply to this run (no context for a context
	// scorer, no judge configured). Reason says why.
	StatusSkipped Status = "skipped"
	// StatusFailed: the scorer tried and could not judge (judge error, timeout, trap,
	// invalid result). Error says why.
	StatusFailed Status = "failed"
)

// Result is what a scorer returns for one run. Scorers fill Score and Dimensions in their
// declared native range; the host normalizes them to [0, 1] and fills Passed.
type Result struct {
	// Status is scored, skipped or failed.
	Status Status `json:"status" jsonschema:"enum=scored,enum=skipped,enum=failed"`
	// Score is the overall score: native range from a scorer, [0, 1] (times the caller's
	// scale) after the host. Absent unless Status is scored.
	Score *float64 `json:"score,omitempty"`
	// Passed is Score against the scorer's threshold. Set by the host.
	Passed *bool `json:"passed,omitempty"`
	// Dimensions are named sub-scores, same range as Score.
	Dimensions map[string]float64 `json:"dimensions,omitempty"`
	// SkippedDimensions names dimensions that could not be judged for this run, with the
	// reason (faithfulness with no evidence). They are left out of the overall score.
	SkippedDimensions map[string]string `json:"skipped_dimensions,omitempty"`
	// Reason explains the score for a person.
	Reason string `json:"reason,omitempty"`
	// Flags are machine-readable findings such as "empty_output" or "refusal".
	Flags []string `json:"flags,omitempty"`
	// Suggestions are improvements a judge proposed. Optional.
	Suggestions []string `json:"suggestions,omitempty"`
	// Steps records each pipeline step: its name, the prompt it sent and what it parsed.
	Steps []Step `json:"steps,omitempty"`
	// Adjustments records what the host changed and why (normalization, clamps, overall).
	Adjustments []Adjustment `json:"adjustments,omitempty"`
	// CitationAudit is the audit the host applied, when it applied one.
	CitationAudit *CitationAudit `json:"citation_audit,omitempty"`
	// Telemetry is measured by the host and the scorer.
	Telemetry Telemetry `json:"telemetry"`
	// Error says why a result is failed.
	Error *Error `json:"error,omitempty"`
}

// Step records one step of a scorer's pipeline, as Mastra records them.
type Step struct {
	// Name of the step, e.g. "preprocess", "analyze", "generateScore", "generateReason".
	Name string `json:"name"`
	// Prompt sent to the judge in this step, if any.
	Prompt string `json:"prompt,omitempty"`
	// Output is what the step produced (parsed judge output, a computed value).
	Output json.RawMessage `json:"output,omitempty"`
}

// Adjustment records one change the host made to a scorer's numbers.
type Adjustment struct {
	// Rule names the rule: "normalize_range", "clamp_hallucination",
	// "clamp_invalid_citations", "clamp_uncited_5", "clamp_uncited_10", "overall_weighted".
	Rule string `json:"rule"`
	// Target is "score" or the dimension it changed.
	Target string `json:"target"`
	// From and To are the values before and after.
	From float64 `json:"from"`
	To   float64 `json:"to"`
}

// Telemetry is what a call cost.
type Telemetry struct {
	// DurationMS is the wall time of the call, in milliseconds, as measured by the host.
	DurationMS float64 `json:"duration_ms"`
	// Runtime is where the scorer ran: native, wasm or process.
	Runtime string `json:"runtime,omitempty"`
	// JudgeCalls counts judge requests that reached the endpoint (cache hits excluded).
	JudgeCalls int `json:"judge_calls,omitempty"`
	// CacheHits counts judge requests answered from the cache.
	CacheHits int `json:"cache_hits,omitempty"`
	// Retries counts judge requests retried after a 429 or 5xx.
	Retries int `json:"retries,omitempty"`
	// PromptTokens and CompletionTokens are the judge's token usage.
	PromptTokens     int `json:"prompt_tokens,omitempty"`
	CompletionTokens int `json:"completion_tokens,omitempty"`
	// JudgeLimits lists the judge limits the call ran into, each as "name: message" where
	// the message says how to raise it (e.g. "max_batch: ...", "token_budget: ..."). Set
	// by the host's broker; empty when no limit was hit.
	JudgeLimits []string `json:"judge_limits,omitempty"`
	// Nodes are named per-stage records a scorer wants kept (e.g. MASIS's evaluator node).
	Nodes []map[string]any `json:"nodes,omitempty"`
}

// Error describes why a result failed. Code is stable for machines; Message is for people
// and says what fixes the problem where that is known.
type Error struct {
	Code    string `json:"code" jsonschema:"enum=invalid_run,enum=invalid_config,enum=invalid_result,enum=timeout,enum=canceled,enum=scorer_error,enum=judge_error,enum=limit_exceeded,enum=trap,enum=unavailable"`
	Message string `json:"message"`
}

// Error codes. They cross the plugin boundary, so they are strings, not Go types.
const (
	CodeInvalidRun    = "invalid_run"
	CodeInvalidConfig = "invalid_config"
	CodeInvalidResult = "invalid_result"
	CodeTimeout       = "timeout"
	CodeCanceled      = "canceled"
	CodeScorerError   = "scorer_error"
	CodeJudgeError    = "judge_error"
	CodeLimitExceeded = "limit_exceeded"
	CodeTrap          = "trap"
	CodeUnavailable   = "unavailable"
)

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Scored returns a scored result with the given score (in the scorer's native range).
func Scored(score float64, reason string) Result {
	return Result{Status: StatusScored, Score: &score, Reason: reason}
}

// Skipped returns a skipped result; reason says why the scorer does not apply and, where it
// helps, how to make it apply.
func Skipped(reason string) Result {
	return Result{Status: StatusSkipped, Reason: reason}
}

// Failed returns a failed result with the given code and message.
func Failed(code, message string) Result {
	return Result{Status: StatusFailed, Reason: message, Error: &Error{Code: code, Message: message}}
}

// FailedErr returns a failed result for err: its code if err is (or wraps) an *Error,
// scorer_error otherwise.
func FailedErr(err error) Result {
	var e *Error
	if errors.As(err, &e) {
		return Failed(e.Code, e.Message)
	}
	return Failed(CodeScorerError, err.Error())
}

// NoJudge returns the skipped result a scorer gives when it needs a judge and none is
// configured. The reason says how to configure one.
func NoJudge(scorer string) Result {
	return Skipped(scorer + " needs an LLM judge and none is configured: pass --judge-url URL and " +
		"--judge-model NAME (API key from $OPENAI_API_KEY, or --judge-key-env VAR), or set judge.url in the config file")
}

// Value returns the score, or NaN when there is none.
func (r *Result) Value() float64 {
	if r.Score == nil {
		return math.NaN()
	}
	return *r.Score
}

// HasFlag reports whether the result carries flag f.
func (r *Result) HasFlag(f string) bool {
	for _, g := range r.Flags {
		if g == f {
			return true
		}
	}
	return false
}

// ErrInvalidResult is wrapped by every error [Result.Validate] returns.
var ErrInvalidResult = errors.New("invalid result")

// Validate checks a result as a scorer returned it, before normalization: a known status;
// a finite score when scored and none otherwise; finite dimensions; an error when failed.
func (r *Result) Validate() error {
	switch r.Status {
	case StatusScored:
		if r.Score == nil {
			return fmt.Errorf("%w: status scored without a score", ErrInvalidResult)
		}
	case StatusSkipped:
		if r.Score != nil {
			return fmt.Errorf("%w: status skipped with a score; return scored or drop the score", ErrInvalidResult)
		}
	case StatusFailed:
		if r.Error == nil || r.Error.Message == "" {
			return fmt.Errorf("%w: status failed without an error message", ErrInvalidResult)
		}
		if r.Score != nil {
			return fmt.Errorf("%w: status failed with a score", ErrInvalidResult)
		}
	case "":
		return fmt.Errorf("%w: missing status (want scored, skipped or failed)", ErrInvalidResult)
	default:
		return fmt.Errorf("%w: unknown status %q (want scored, skipped or failed)", ErrInvalidResult, r.Status)
	}
	if r.Score != nil && (math.IsNaN(*r.Score) || math.IsInf(*r.Score, 0)) {
		return fmt.Errorf("%w: score is %v", ErrInvalidResult, *r.Score)
	}
	for k, v := range r.Dimensions {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: dimension %q is %v", ErrInvalidResult, k, v)
		}
	}
	return nil
}
