// Package insights turns an agent's latest results into insights people act on, and never
// cries wolf. It is a pure function of result rows: no database, no HTTP, no clock. The
// service feeds it the latest result per run of one (agent, scorer) and the insights open
// for that pair, stores what it returns, and shows it.
//
// The rules (RATIONALE.md, "Insights", says why):
//
//   - Only scored results count toward quality. A skipped or failed result is never a low
//     score; many of them raise an evaluation_health insight, which is about the scorer
//     (the judge is down), not the agent, and names the error codes and messages that
//     dominate.
//   - quality: the failure rate (scored runs that did not pass) over the window.
//     regression: the failure rate rose, or the mean score fell, from the previous window
//     to this one, under the same scorer version. gross_failures: outputs flagged as
//     gross failures (error_text, empty_output, tool_error by default), measured over the newest runs
//     as well as the window so that a spike is caught early, with a lower bar.
//   - Severity follows the evidence. Critical only when it is statistically certain: the
//     lower bound of the 95% interval (Wilson for rates, Newcombe for a difference of
//     rates, Welch for a difference of means) lies above the critical level, with at
//     least MinScored scored runs. Warning when likely: the lower bound lies above the
//     warning level, or the estimate itself above the critical level. Nothing otherwise.
//   - A scorer whose version changed within the window, or that the tenant marks
//     experimental, raises no critical insight until its current version has results
//     for a full window; the insight says so. Only the current version's results are
//     measured: a fixed scorer is not blamed for its predecessor's scores.
//   - One finding, one card. The gross failures are listed on their own card and left
//     out of the quality or regression card's worst runs, whose title says how many of its
//     failures they are; when they are all its failures and their card is as severe, that
//     card is not raised. A failure rate that is too high and rose is one card: the more
//     severe of quality and regression, on a tie the one already open, else quality with
//     the window before as its Previous.
//   - One open insight per (agent, scorer, kind). [Reconcile] compares the insights the
//     rules want with the open ones: it opens, updates (new evidence, a new severity) and
//     resolves. An open insight stays open while its estimate stays above the warning
//     level, so an insight does not flap on every new run at the boundary.
//
// Every insight carries its evidence: counts, the measured rate and its interval, the
// level it crossed, the scorer's name and version, and the worst runs with their reasons,
// flags and errors.
package insights

import (
	"time"

	"github.com/scorekit/scorekit/sdk"
)

// Result is one result row, as the service stores it: the latest result of one scorer
// for one run. The service adapts its rows to it.
type Result struct {
	// RunID identifies the run. Required.
	RunID string `json:"run_id"`
	// RunTime is when the agent produced the run; the window is the newest runs by it.
	// Required.
	RunTime time.Time `json:"run_time"`
	// Scorer is the scorer's name. Required; every row of a call has the same.
	Scorer string `json:"scorer"`
	// ScorerVersion is the version of the scorer that made the result.
	ScorerVersion string `json:"scorer_version"`
	// Status is scored, skipped or failed. Required.
	Status sdk.Status `json:"status"`
	// Score is the normalized score in [0, 1]. Required when scored.
	Score *float64 `json:"score,omitempty"`
	// Passed is the score against the scorer's threshold. A scored row without it counts
	// toward the mean but not toward pass rates.
	Passed *bool `json:"passed,omitempty"`
	// Flags are the result's machine-readable findings.
	Flags []string `json:"flags,omitempty"`
	// Reason explains the result.
	Reason string `json:"reason,omitempty"`
	// ErrorCode and ErrorMessage say why a failed result failed.
	ErrorCode    string `json:"error_code,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
	// CreatedAt is when the result was made. When a run has more than one row, the newest
	// counts.
	CreatedAt time.Time `json:"created_at"`
}

// Kind is what an insight is about.
type Kind string

// The kinds, in the order [Assess] returns them.
const (
	// KindEvaluationHealth: many results are skipped or failed; the scorer, not the
	// agent, needs attention.
	KindEvaluationHealth Kind = "evaluation_health"
	// KindGrossFailures: outputs that are error messages or empty.
	KindGrossFailures Kind = "gross_failures"
	// KindQuality: too many scored runs fail.
	KindQuality Kind = "quality"
	// KindRegression: runs fail more, or score lower, than in the previous window.
	KindRegression Kind = "regression"
)

// Severity is how sure and how bad.
type Severity string

// Severities. There is no "info": what is not a warning is not an insight.
const (
	SeverityWarning  Severity = "warning"
	SeverityCritical Severity = "critical"
)

func (s Severity) rank() int {
	switch s {
	case SeverityCritical:
		return 2
	case SeverityWarning:
		return 1
	}
	return 0
}

// Insight is one finding about one (agent, scorer).
type Insight struct {
	// Agent and Scorer name the series; Kind what the insight is about. One open insight
	// per (Agent, Scorer, Kind).
	Agent  string `json:"agent"`
	Scorer string `json:"scorer"`
	Kind   Kind   `json:"kind" enum:"evaluation_health,gross_failures,quality,regression"`
	// Severity is warning or critical.
	Severity Severity `json:"severity" enum:"warning,critical"`
	// Title says the finding in one line, with its numbers.
	Title string `json:"title"`
	// Evidence is why.
	Evidence Evidence `json:"evidence"`
	// OpenedAt, UpdatedAt and ResolvedAt are set by [Reconcile].
	OpenedAt   time.Time  `json:"opened_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
	ResolvedAt *time.Time `json:"resolved_at,omitempty"`
}

// Key identifies an insight among the open ones.
type Key struct {
	Agent, Scorer string
	Kind          Kind
}

// Key returns the insight's key.
func (i Insight) Key() Key { return Key{Agent: i.Agent, Scorer: i.Scorer, Kind: i.Kind} }

// Evidence is what an insight rests on.
type Evidence struct {
	// ScorerVersion is the scorer version whose results were measured.
	ScorerVersion string `json:"scorer_version"`
	// Window counts the results in the window; Previous the previous window's (for a
	// regression, or a quality insight that stands for one). Both count only
	// ScorerVersion's results.
	Window   Counts  `json:"window"`
	Previous *Counts `json:"previous,omitempty"`
	// Measured is the number the severity was decided on.
	Measured Measure `json:"measured"`
	// Flags counts the flags of the window's gross failures by flag.
	Flags map[string]int `json:"flags,omitempty"`
	// Causes are the error codes and messages (failed) or reasons (skipped) that dominate,
	// most frequent first (evaluation health).
	Causes []Cause `json:"causes,omitempty"`
	// Worst are example runs: the lowest scores of the runs that did not pass (less the
	// gross failures when they have their own insight), the gross failures, or the failed
	// results.
	Worst []Example `json:"worst,omitempty"`
	// Capped, when set, says why a critical finding is reported as a warning.
	Capped string `json:"capped,omitempty"`
	// Held, when set, says the insight stays open although its lower bound fell under the
	// warning level, because its estimate has not.
	Held bool `json:"held,omitempty"`
}

// Counts summarizes the results of one window.
type Counts struct {
	// Runs is the number of results (one per run); Scored, Skipped and Failed split it.
	Runs    int `json:"runs"`
	Scored  int `json:"scored"`
	Skipped int `json:"skipped"`
	Failed  int `json:"failed"`
	// Passed and NotPassed split the scored results that carry a pass decision.
	Passed    int `json:"passed"`
	NotPassed int `json:"not_passed"`
	// Gross counts the scored results flagged as gross failures.
	Gross int `json:"gross"`
	// Mean is the mean score of the scored results (absent when none).
	Mean *float64 `json:"mean,omitempty"`
	// From and To are the run times of the oldest and newest result.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// OtherVersions counts the window's results made by other versions of the scorer,
	// which are not measured.
	OtherVersions int `json:"other_versions,omitempty"`
}

// Measure is the number a severity is decided on: a rate (K of N) or a difference, with its
// interval and the level its lower bound was held against.
type Measure struct {
	// What says what was measured, e.g. "failure rate" or "mean score drop".
	What string `json:"what"`
	// K of N: the runs counted and the runs they were counted among (the newest N).
	K int `json:"k"`
	N int `json:"n"`
	// Value is the estimate: K/N, or the difference for a regression.
	Value float64 `json:"value"`
	// Low and High bound Value at Confidence.
	Low        float64 `json:"low"`
	High       float64 `json:"high"`
	Confidence float64 `json:"confidence"`
	// Level is the level that decided the severity: the critical level for a critical
	// insight, else the warning level.
	Level float64 `json:"level"`
}

// Cause is one error code and message (or skip reason) and how many results it explains.
type Cause struct {
	// Status is failed or skipped.
	Status sdk.Status `json:"status"`
	// Code is the error code (failed only).
	Code string `json:"code,omitempty"`
	// Message is the error message or the skip reason, clipped.
	Message string `json:"message"`
	Count   int    `json:"count"`
}

// Example is one run an insight points at.
type Example struct {
	RunID        string     `json:"run_id"`
	RunTime      time.Time  `json:"run_time"`
	Status       sdk.Status `json:"status"`
	Score        *float64   `json:"score,omitempty"`
	Passed       *bool      `json:"passed,omitempty"`
	Reason       string     `json:"reason,omitempty"`
	Flags        []string   `json:"flags,omitempty"`
	ErrorCode    string     `json:"error_code,omitempty"`
	ErrorMessage string     `json:"error_message,omitempty"`
}

// FromSDK adapts a result the host returned for one run to a row.
func FromSDK(runID string, runTime time.Time, scorer, version string, r sdk.Result, createdAt time.Time) Result {
	row := Result{RunID: runID, RunTime: runTime, Scorer: scorer, ScorerVersion: version, Status: r.Status,
		Score: r.Score, Passed: r.Passed, Flags: r.Flags, Reason: r.Reason, CreatedAt: createdAt}
	if r.Error != nil {
		row.ErrorCode, row.ErrorMessage = r.Error.Code, r.Error.Message
	}
	return row
}
