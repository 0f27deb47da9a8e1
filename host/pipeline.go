package host

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strings"
	"time"

	"github.com/scorekit/scorekit/internal/citation"
	"github.com/scorekit/scorekit/sdk"
)

// Adjustment rules the pipeline records in Result.Adjustments.
const (
	// RuleNormalizeRange: a value was mapped from the scorer's native range to [0, 1].
	RuleNormalizeRange = "normalize_range"
	// RuleClampHallucination: the citation audit detected hallucination; a grounding dimension <= 0.4.
	RuleClampHallucination = "clamp_hallucination"
	// RuleClampInvalidCitations: the output cites ids no passage has; a grounding dimension <= 0.4.
	RuleClampInvalidCitations = "clamp_invalid_citations"
	// RuleClampUncited5: at least 5 claims carry no citation; a grounding dimension <= 0.5.
	RuleClampUncited5 = "clamp_uncited_5"
	// RuleClampUncited10: at least 10 claims carry no citation; a grounding dimension <= 0.3.
	RuleClampUncited10 = "clamp_uncited_10"
	// RuleOverallWeighted: the overall score was replaced by the weighted mean of the
	// dimensions.
	RuleOverallWeighted = "overall_weighted"
)

// tolerance absorbs floating-point noise at the ends of a range (a mean of ones that comes
// out as 1.0000000000000002 is 1, not out of range), as a fraction of the range's span.
const tolerance = 1e-9

// errHostDeadline is the cause of the host's own per-call deadline, told apart from the
// caller's deadline.
var errHostDeadline = errors.New("host deadline")

// Score runs the host pipeline on run:
//
//  1. check the run against the run limits (see [RunLimits]); a run over one is failed
//     with limit_exceeded and the scorer is not called;
//  2. check the run (numbering context passages without an ID); an invalid run is failed
//     with invalid_run and the scorer is not called. [Scorer.ScoreChecked] skips this
//     step: its run was checked where it came in (see [CheckedRun]);
//  3. for a scorer with a grounding dimension (faithfulness, hallucination_free), attach the
//     citation audit (the run's own, or one computed from the output's citation markers);
//  4. call the backend under the host deadline; a deadline is failed with timeout, a panic
//     in a native scorer with scorer_error, a backend error with its code;
//  5. validate the result; junk is failed with invalid_result, never a silent 0;
//  6. map score and dimensions from the declared native range to [0, 1]; NaN, Inf and
//     values outside the range are failed with invalid_result (the host does not guess at
//     another scale: reading a judge's 0-100 answer is the judge scorer's job, see
//     sdk/verdict);
//  7. clamp each grounding dimension by the citation audit;
//  8. for scorers with dimensions, recompute the overall score as their weighted mean;
//  9. compute Passed, apply the caller's scale, round, and record telemetry.
//
// Every change is recorded in Result.Adjustments. Skipped and failed results never carry
// a score or Passed.
func (s *Scorer) Score(ctx context.Context, run sdk.Run) sdk.Result {
	return s.scoreOne(ctx, run, false)
}

// ScoreChecked is [Scorer.Score] on a run the host checked already: the pipeline does not
// check it again (step 2).
func (s *Scorer) ScoreChecked(ctx context.Context, run CheckedRun) sdk.Result {
	return s.scoreOne(ctx, run.run, true)
}

// scoreOne runs the pipeline on run; checked says the run was checked already.
func (s *Scorer) scoreOne(ctx context.Context, run sdk.Run, checked bool) sdk.Result {
	start := time.Now()
	judge, finish := s.judge, func(*sdk.Result) {}
	if m, ok := judge.(JudgeMeter); ok {
		judge, finish = m.MeterJudge(ctx, s.tenant, s.info.Name)
	}
	res := s.score(ctx, &run, judge, checked)
	finish(&res)
	res.Telemetry.DurationMS = float64(time.Since(start).Nanoseconds()) / 1e6
	res.Telemetry.Runtime = s.runtime
	res.Telemetry.Replaced = s.replaced
	return res
}

// JudgeMeter is implemented by judges that account each scoring call (host/broker). The
// returned func finishes the call with its final result: it records the judge's cost in
// the telemetry and lets the judge keep (cache) only answers the scorer could use. ctx is
// the scoring call's context: a judge reads call-scoped settings from it (host/broker
// reads the tenant's route, broker.WithRoute), and the judge it returns keeps them for
// every request of the call, whatever runtime makes them. A judge that wraps another (a
// tracing one) must implement it too when the wrapped one does, or metering stops without
// a word.
type JudgeMeter interface {
	MeterJudge(ctx context.Context, tenant, scorer string) (sdk.Judge, func(*sdk.Result))
}

func (s *Scorer) score(ctx context.Context, run *sdk.Run, judge sdk.Judge, checked bool) sdk.Result {
	if res, ok := s.prepare(run, checked); !ok {
		return res
	}
	res, err := s.call(ctx, run, judge)
	if err != nil {
		return failedFrom(err)
	}
	return s.finish(run, res)
}

// prepare makes the pipeline's steps before the call (1 to 3) on run: it returns the
// failed result and false for a run over the scorer's run limits or, unless checked, one
// that is not valid.
func (s *Scorer) prepare(run *sdk.Run, checked bool) (sdk.Result, bool) {
	if err := s.limits.Check(run); err != nil {
		return sdk.Failed(sdk.CodeLimitExceeded, err.Error()), false
	}
	if !checked {
		if err := checkRun(run); err != nil {
			return sdk.Failed(sdk.CodeInvalidRun, err.Error()), false
		}
	}
	if len(s.plan.grounding) > 0 && run.CitationAudit == nil {
		if a, ok := citation.Audit(run.Output, run.Context); ok {
			run.CitationAudit = &a
		}
	}
	return sdk.Result{}, true
}

// outcome is what a backend call produced.
type outcome struct {
	res sdk.Result
	err error
}

// call runs the backend under the host deadline, in a slot of the host's (see
// WithMaxCalls, WithMaxOverdue) that it holds until the backend has really returned.
//
// A backend that observes its context (ContextObserver, as the built-in scorers do) runs on
// the caller's goroutine and stops itself at the deadline. Any other runs on its own
// goroutine, so that a native scorer that ignores its context still yields a timeout at the
// deadline; its work then goes on, overdue, in the slot it holds, and the host counts it.
func (s *Scorer) call(parent context.Context, run *sdk.Run, judge sdk.Judge) (sdk.Result, error) {
	ctx, cancel := context.WithTimeoutCause(parent, s.h.timeout, errHostDeadline)
	defer cancel()
	if ctx.Err() != nil { // the caller gave up already: do not start work
		return sdk.Result{}, s.deadlineErr(ctx)
	}
	if err := s.h.calls.acquire(ctx, s.unstoppable); err != nil {
		return sdk.Result{}, s.slotErr(ctx)
	}
	if s.inline {
		o := s.invokeInline(ctx, run, judge)
		s.h.calls.releaseInline(ctx, o.err != nil)
		if o.err != nil && ctx.Err() != nil {
			return sdk.Result{}, s.deadlineErr(ctx)
		}
		return o.res, o.err
	}
	k := &call{unstoppable: s.unstoppable}
	done := make(chan outcome, 1)
	go s.invoke(ctx, run, judge, k, done)
	select {
	case o := <-done:
		if o.err != nil && ctx.Err() != nil {
			return sdk.Result{}, s.deadlineErr(ctx)
		}
		return o.res, o.err
	case <-ctx.Done():
		// A result that arrived with the deadline is a result: select picks at random.
		if !s.h.calls.abandon(k) {
			if o := <-done; o.err == nil {
				return o.res, nil
			}
		}
		return sdk.Result{}, s.deadlineErr(ctx)
	}
}

// invoke runs the backend on its own goroutine and frees the call's slot when it returns.
func (s *Scorer) invoke(ctx context.Context, run *sdk.Run, judge sdk.Judge, k *call, done chan<- outcome) {
	o := s.invokeInline(ctx, run, judge)
	s.h.calls.release(k, o.err != nil)
	done <- o
}

// invokeInline runs the backend, turning a panic into scorer_error.
func (s *Scorer) invokeInline(ctx context.Context, run *sdk.Run, judge sdk.Judge) (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			s.h.log.Error("scorer panicked", "scorer", s.info.Name, "panic", p, "stack", string(debug.Stack()))
			o = outcome{err: &sdk.Error{Code: sdk.CodeScorerError, Message: fmt.Sprintf("scorer %s panicked: %v", s.info.Name, p)}}
		}
	}()
	res, err := s.backend.Score(ctx, run, judge)
	return outcome{res, err}
}

// slotErr explains a call that never started: its deadline passed while it waited for a
// slot.
func (s *Scorer) slotErr(ctx context.Context) error {
	err := s.deadlineErr(ctx)
	if e, ok := err.(*sdk.Error); ok {
		st := s.h.Calls()
		e.Message += fmt.Sprintf(" (it never started: it waited for a slot while %d calls ran, %d of them past their deadline; see host.WithMaxCalls and host.WithMaxOverdue)", st.Running, st.Overdue)
	}
	return err
}

func (s *Scorer) deadlineErr(ctx context.Context) error {
	switch {
	case context.Cause(ctx) == errHostDeadline:
		return s.hostTimeoutErr()
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &sdk.Error{Code: sdk.CodeTimeout, Message: fmt.Sprintf("the caller's deadline passed before scorer %s finished", s.info.Name)}
	default:
		return &sdk.Error{Code: sdk.CodeCanceled, Message: fmt.Sprintf("the caller canceled the call to scorer %s", s.info.Name)}
	}
}

// hostTimeoutErr is the error of a call stopped at the host's own deadline.
func (s *Scorer) hostTimeoutErr() error {
	return &sdk.Error{Code: sdk.CodeTimeout, Message: fmt.Sprintf(
		"scorer %s did not finish within the host's %v limit; make the scorer faster or raise the limit (scorekit score and serve: --timeout; Go: host.WithTimeout)", s.info.Name, s.h.timeout)}
}

// failedFrom turns a backend error into a failed result with the most specific code.
func failedFrom(err error) sdk.Result {
	var e *sdk.Error
	switch {
	case errors.As(err, &e):
		if !knownCode(e.Code) {
			return sdk.Failed(sdk.CodeScorerError, fmt.Sprintf("%s (unknown error code %q)", e.Message, e.Code))
		}
		return sdk.Failed(e.Code, e.Message)
	case errors.Is(err, sdk.ErrInvalidResult):
		return sdk.Failed(sdk.CodeInvalidResult, err.Error())
	case errors.Is(err, sdk.ErrInvalidRun):
		return sdk.Failed(sdk.CodeInvalidRun, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return sdk.Failed(sdk.CodeTimeout, err.Error())
	case errors.Is(err, context.Canceled):
		return sdk.Failed(sdk.CodeCanceled, err.Error())
	}
	return sdk.Failed(sdk.CodeScorerError, err.Error())
}

func knownCode(c string) bool {
	switch c {
	case sdk.CodeInvalidRun, sdk.CodeInvalidConfig, sdk.CodeInvalidResult, sdk.CodeTimeout, sdk.CodeCanceled,
		sdk.CodeScorerError, sdk.CodeJudgeError, sdk.CodeLimitExceeded, sdk.CodeTrap, sdk.CodeUnavailable:
		return true
	}
	return false
}

// finish validates, normalizes, clamps, weighs, scales and rounds a scorer's raw result.
func (s *Scorer) finish(run *sdk.Run, res sdk.Result) sdk.Result {
	// The host owns these; whatever a scorer put there is replaced.
	res.Passed, res.Adjustments, res.CitationAudit = nil, nil, nil
	if err := res.Validate(); err != nil {
		return s.invalid("%v", err)
	}
	if res.Status == sdk.StatusFailed && !knownCode(res.Error.Code) {
		res.Error = &sdk.Error{Code: sdk.CodeScorerError, Message: fmt.Sprintf("%s (unknown error code %q)", res.Error.Message, res.Error.Code)}
	}
	if res.Status != sdk.StatusScored {
		// Dimensions of an unscored result are in native units and mean nothing.
		res.Dimensions = nil
		return res
	}
	p := &s.plan
	n := normalizer{s: s, res: &res}
	score, err := n.value("score", *res.Score)
	if err != nil {
		return s.invalid("%v", err)
	}
	dims, err := s.dimensions(&n)
	if err != nil {
		return s.invalid("%v", err)
	}
	if len(p.grounding) > 0 && run.CitationAudit != nil {
		a := *run.CitationAudit
		res.CitationAudit = &a
		for _, name := range p.grounding {
			_, skipped := res.SkippedDimensions[name]
			if f, ok := dims[name]; ok && !skipped {
				dims[name] = clamp(&res, &a, name, f)
			}
		}
	}
	if len(p.dims) > 0 {
		var sum, weights float64
		for _, d := range p.dims {
			if _, skip := res.SkippedDimensions[d.Name]; skip {
				continue
			}
			sum += d.Weight * dims[d.Name]
			weights += d.Weight
		}
		if weights == 0 {
			return skippedAll(&res)
		}
		if overall := sum / weights; math.Abs(overall-score) > tolerance {
			res.Adjustments = append(res.Adjustments, sdk.Adjustment{Rule: RuleOverallWeighted, Target: "score", From: score, To: overall})
			score = overall
		}
	}
	// One allocation for both pointers.
	out := &struct {
		score  float64
		passed bool
	}{
		score:  s.round(score * s.scale),
		passed: score >= p.threshold-tolerance,
	}
	res.Score, res.Passed = &out.score, &out.passed
	for k, v := range dims {
		dims[k] = s.round(v * s.scale)
	}
	res.Dimensions = dims
	return res
}

// dimensions validates the result's dimension names against the Info and normalizes the
// values into a map of the host's own: a scorer may hand out a map it shares.
func (s *Scorer) dimensions(n *normalizer) (map[string]float64, error) {
	res, p := n.res, &s.plan
	if len(p.dims) > 0 {
		if err := undeclared(s, res.Dimensions); err != nil {
			return nil, err
		}
		if err := undeclared(s, res.SkippedDimensions); err != nil {
			return nil, err
		}
	}
	if len(res.Dimensions) == 0 && len(p.dims) == 0 {
		return nil, nil
	}
	dims := make(map[string]float64, len(res.Dimensions))
	put := func(name string, v float64) error {
		x, err := n.value(name, v)
		dims[name] = x
		return err
	}
	if len(p.dims) == 0 {
		for _, k := range sortedKeys(res.Dimensions) {
			if err := put(k, res.Dimensions[k]); err != nil {
				return nil, err
			}
		}
		return dims, nil
	}
	for _, d := range p.dims {
		v, ok := res.Dimensions[d.Name]
		if !ok {
			if _, skip := res.SkippedDimensions[d.Name]; skip {
				continue
			}
			return nil, fmt.Errorf("missing declared dimension %q; return it or list it in skipped_dimensions with a reason", d.Name)
		}
		if err := put(d.Name, v); err != nil {
			return nil, err
		}
	}
	return dims, nil
}

// undeclared reports the first key of m, by name, that the Info does not declare.
func undeclared[V any](s *Scorer, m map[string]V) error {
	bad := ""
	for k := range m {
		if _, ok := s.info.Dimension(k); !ok && (bad == "" || k < bad) {
			bad = k
		}
	}
	if bad == "" {
		return nil
	}
	names := make([]string, len(s.plan.dims))
	for i, d := range s.plan.dims {
		names[i] = d.Name
	}
	return fmt.Errorf("dimension %q is not declared in its Info (declared: %s); declare it or drop it", bad, strings.Join(names, ", "))
}

// invalid is the failed result for a result the pipeline cannot accept.
func (s *Scorer) invalid(format string, args ...any) sdk.Result {
	return sdk.Failed(sdk.CodeInvalidResult, "scorer "+s.info.Name+" returned an invalid result: "+fmt.Sprintf(format, args...))
}

// skippedAll turns a result whose every weighted dimension was skipped into a skipped
// result: nothing was judged, so there is no overall score.
func skippedAll(res *sdk.Result) sdk.Result {
	reasons := make([]string, 0, len(res.SkippedDimensions))
	for _, k := range sortedKeys(res.SkippedDimensions) {
		reasons = append(reasons, k+": "+res.SkippedDimensions[k])
	}
	out := *res
	out.Status, out.Score, out.Dimensions, out.Adjustments = sdk.StatusSkipped, nil, nil, nil
	out.Reason = "no weighted dimension could be judged (" + strings.Join(reasons, "; ") + ")"
	return out
}

// normalizer maps values from the scorer's native range to [0, 1], recording changes.
type normalizer struct {
	s   *Scorer
	res *sdk.Result
}

func (n *normalizer) value(target string, v float64) (float64, error) {
	p := &n.s.plan
	eps := tolerance * p.span
	if !finite(v) || v < p.min-eps || v > p.min+p.span+eps {
		what := "score"
		if target != "score" {
			what = fmt.Sprintf("dimension %q", target)
		}
		if !p.declared {
			return 0, fmt.Errorf("%s is %v, outside the range %s the host assumes when a scorer declares none; "+
				`if the scorer scores on another scale, declare its range (Info.Range, "range" in its info: e.g. {"min": 1, "max": 5})`,
				what, v, p.describeRange())
		}
		return 0, fmt.Errorf("%s is %v, outside its declared range %s; fix the scorer or its declared range", what, v, p.describeRange())
	}
	x := min(max((v-p.min)/p.span, 0), 1)
	if x != v {
		n.res.Adjustments = append(n.res.Adjustments, sdk.Adjustment{Rule: RuleNormalizeRange, Target: target, From: v, To: x})
	}
	return x, nil
}

// clamp caps f, the value of the grounding dimension target, by the citation audit. Caps
// apply loosest first, so the strictest applying cap wins and each one that binds is
// recorded.
func clamp(res *sdk.Result, a *sdk.CitationAudit, target string, f float64) float64 {
	caps := [...]struct {
		rule    string
		cap     float64
		applies bool
	}{
		{RuleClampUncited5, 0.5, a.UncitedSentences >= 5},
		{RuleClampHallucination, 0.4, a.HallucinationDetected},
		{RuleClampInvalidCitations, 0.4, len(a.InvalidCitations) > 0},
		{RuleClampUncited10, 0.3, a.UncitedSentences >= 10},
	}
	orig := f
	for _, c := range caps {
		if !c.applies || orig <= c.cap {
			continue
		}
		to := min(f, c.cap)
		res.Adjustments = append(res.Adjustments, sdk.Adjustment{Rule: c.rule, Target: target, From: f, To: to})
		f = to
	}
	return f
}

// round rounds half away from zero to the scorer's decimals. A value within floating-point
// noise of a half is a half: 0.35*0.2 + 0.65*0.9 is 0.655 to a person, and 0.66 at two
// decimals, even when the float sum comes out as 0.65499999999999. Values are >= 0 here.
func (s *Scorer) round(v float64) float64 {
	x := v * s.plan.decimals
	f := math.Floor(x)
	if x-f >= 0.5-tolerance*max(1, x) {
		f++
	}
	return f / s.plan.decimals
}
