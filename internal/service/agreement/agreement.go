// Package agreement measures how well a scorer agrees with people's labels of the same runs,
// and whether a candidate scorer version agrees worse than the one it would replace. It is a
// pure function of pairs of verdicts: no store, no judge, no clock; the same pairs and the
// same seed give the same figures.
//
// A [Pair] is one run judged twice: Want by a person (the reference), Got by the scorer, or
// by a second person when measuring how well two people agree with each other (the ceiling
// a scorer can reach). [Join] builds the pairs from two sets of verdicts keyed by run.
//
//   - Pass/fail verdicts ([PassFail]): accuracy, Cohen's kappa, the precision and recall of
//     the failure class (failing a run is what the scorer is for), and the confusion matrix.
//   - Scores in [0, 1] ([Scores]): Spearman's rho, Kendall's tau-b (ties counted as ties)
//     and the mean absolute error.
//   - A promotion gate ([GatePassFail], [GateScores]): the candidate's kappa (Spearman's
//     rho for scores) against the current version's on the same labelled runs, with a
//     paired bootstrap interval of the difference.
//
// Every figure is an [Estimate]: the value, a 95% interval, the number of runs it rests
// on, and the method of the interval. A figure the data cannot define (kappa when both
// sides gave one verdict to every run, recall of failures when no run was labelled fail)
// says why instead of inventing a number.
//
// # Intervals
//
//   - Proportions (accuracy, precision, recall): Wilson's score interval (Wilson 1927), which
//     stays inside [0, 1] and is honest at 0 of n and n of n.
//   - Cohen's kappa: the large-sample standard error of Fleiss, Cohen and Everitt (1969),
//     as in Fleiss, Levin and Paik, Statistical Methods for Rates and Proportions, and SAS
//     PROC FREQ; kappa ± 1.96 SE, cut to [-1, 1].
//   - Spearman's rho: Fisher's z with the standard error of Bonett and Wright (2000),
//     sqrt((1 + rho²/2) / (n - 3)); needs 4 runs or more.
//   - Kendall's tau-b: the asymptotic standard error of Agresti (2002), as SAS PROC FREQ
//     computes it, tau ± 1.96 ASE, cut to [-1, 1].
//   - Mean absolute error: Student's t interval of the mean of the absolute differences.
//   - The gate's difference: the 2.5th and 97.5th percentiles of the difference over
//     resamples of the runs drawn with replacement, the same runs for both versions
//     (a paired bootstrap), from a seeded generator.
//
// # Why
//
// Analytic intervals where a standard one exists: they are exact functions of the data, so
// a figure in a report can be recomputed by anyone with the same table, and the tests check
// them against published worked examples. The gate alone resamples, because the difference
// of two kappas measured on the same runs is correlated and has no standard closed form;
// pairing the resamples keeps that correlation, which a comparison of two separate
// intervals would throw away (and so would refuse too rarely).
package agreement

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Errors callers branch on.
var (
	// ErrNoRuns: there is no pair to measure.
	ErrNoRuns = errors.New("no labelled runs")
	// ErrInvalid: a pair cannot be measured (a score outside [0, 1], a duplicate run).
	ErrInvalid = errors.New("invalid pair")
)

// Verdict is what a judgement can be: pass/fail or a score in [0, 1].
type Verdict interface{ ~bool | ~float64 }

// Pair is one run judged twice.
type Pair[T Verdict] struct {
	// RunID names the run.
	RunID string `json:"run_id"`
	// Want is the person's verdict: the reference.
	Want T `json:"want"`
	// Got is the scorer's verdict, or a second person's.
	Got T `json:"got"`
}

// Join pairs the runs both want and got judged, in run ID order; runs only one of them
// judged are left out (count them with len(want) - len(pairs) to say so).
func Join[T Verdict](want, got map[string]T) []Pair[T] {
	out := make([]Pair[T], 0, min(len(want), len(got)))
	for id, w := range want {
		if g, ok := got[id]; ok {
			out = append(out, Pair[T]{RunID: id, Want: w, Got: g})
		}
	}
	slices.SortFunc(out, func(a, b Pair[T]) int { return cmp.Compare(a.RunID, b.RunID) })
	return out
}

// Estimate is a figure with its 95% interval.
type Estimate struct {
	// Value is the figure; 0 when Undefined is set.
	Value float64 `json:"value"`
	// Low and High bound the 95% interval; 0 when Undefined is set.
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	// N is the number of runs the figure rests on (for precision, the runs the scorer
	// failed; for recall, the runs people failed).
	N int `json:"n"`
	// Method names how the interval was computed.
	Method string `json:"method"`
	// Undefined says why the data define no figure; empty when they do.
	Undefined string `json:"undefined,omitempty"`
}

// Defined reports whether the estimate has a value.
func (e Estimate) Defined() bool { return e.Undefined == "" }

// String is the value and interval to three decimals, or why there is none.
func (e Estimate) String() string {
	if !e.Defined() {
		return "n/a (" + e.Undefined + ")"
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", e.Value, e.Low, e.High)
}

// Methods of the intervals, as Estimate.Method names them.
const (
	MethodWilson    = "wilson"
	MethodKappaFCE  = "fleiss-cohen-everitt"
	MethodFisherBW  = "fisher-z bonett-wright"
	MethodTauASE    = "asymptotic (agresti)"
	MethodStudentT  = "student-t"
	MethodBootstrap = "paired bootstrap percentile"
)

// z95 is the two-sided 95% normal quantile, 1.959964.
var z95 = math.Sqrt2 * math.Erfinv(0.95)

func undefined(n int, method, why string) Estimate {
	return Estimate{N: n, Method: method, Undefined: why}
}

// clip keeps an interval of a correlation-like figure inside [-1, 1].
func clip(e Estimate) Estimate {
	e.Low, e.High = max(e.Low, -1), min(e.High, 1)
	return e
}

// checkIDs refuses a run judged twice in one set of rows: it would count double.
func checkIDs[S any](rows []S, id func(S) string) error {
	seen := make(map[string]bool, len(rows))
	for _, r := range rows {
		k := id(r)
		if k != "" && seen[k] {
			return fmt.Errorf("agreement: %w: run %q appears twice; give each run one pair (Join does)", ErrInvalid, k)
		}
		seen[k] = true
	}
	return nil
}
