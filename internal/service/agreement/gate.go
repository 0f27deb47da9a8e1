package agreement

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// MinGateRuns is the number of labelled runs below which the gate does not decide: with
// fewer, a kappa's interval is wider than any difference worth refusing.
const MinGateRuns = 30

// DefaultResamples is the number of bootstrap resamples of a gate.
const DefaultResamples = 2000

// Triple is one labelled run judged by two versions of a scorer.
type Triple[T Verdict] struct {
	// RunID names the run.
	RunID string `json:"run_id"`
	// Want is the person's verdict.
	Want T `json:"want"`
	// Candidate is the verdict of the version to promote.
	Candidate T `json:"candidate"`
	// Current is the verdict of the version it would replace.
	Current T `json:"current"`
}

// Decision is what the gate says.
type Decision string

// Decisions.
const (
	// Accept: the candidate agrees with the labels at least as well as the current
	// version, or worse by no more than chance explains.
	Accept Decision = "accept"
	// Refuse: the candidate agrees worse, beyond what chance explains.
	Refuse Decision = "refuse"
	// NotEnoughLabels: too few labelled runs, or labels without the spread the figure
	// needs; the choice is left to the tenant.
	NotEnoughLabels Decision = "not_enough_labels"
)

// GateOptions tune the bootstrap.
type GateOptions struct {
	// Seed seeds the resampling: the same runs and seed give the same interval.
	// Optional. Default is 0, a seed like any other.
	Seed uint64
	// Resamples is the number of bootstrap resamples. Optional. Default is
	// DefaultResamples.
	Resamples int
}

// GateReport is the gate's decision with the figures behind it.
type GateReport struct {
	// Decision is accept, refuse or not_enough_labels.
	Decision Decision `json:"decision"`
	// Metric is the figure compared: "kappa" (pass/fail) or "spearman" (scores).
	Metric string `json:"metric"`
	// Runs is the number of labelled runs both versions judged.
	Runs int `json:"runs"`
	// Candidate and Current are each version's figure on those runs, with its own
	// analytic interval.
	Candidate Estimate `json:"candidate"`
	Current   Estimate `json:"current"`
	// Difference is Candidate - Current with the paired bootstrap's 95% interval; unset
	// when the gate did not decide.
	Difference Estimate `json:"difference"`
	// Resamples is the number of resamples in which both figures were defined.
	Resamples int `json:"resamples"`
	// Seed is the seed of the resampling.
	Seed uint64 `json:"seed"`
	// Reason says why, with both figures.
	Reason string `json:"reason"`
}

// GatePassFail decides whether the candidate's Cohen's kappa with the labels is worse than
// the current version's beyond what a paired bootstrap at 95% attributes to chance: it is
// refused when the whole interval of the difference is below 0. Under MinGateRuns runs it
// says NotEnoughLabels. It fails with ErrInvalid when a run appears twice.
func GatePassFail(runs []Triple[bool], o GateOptions) (GateReport, error) {
	if err := checkIDs(runs, func(t Triple[bool]) string { return t.RunID }); err != nil {
		return GateReport{}, err
	}
	kappa := func(idx []int, got func(Triple[bool]) bool) Estimate {
		var c Confusion
		for _, i := range idx {
			c = c.Add(runs[i].Want, got(runs[i]))
		}
		return cohenKappa(c.table())
	}
	return decide("kappa", len(runs), o, func(idx []int) (Estimate, Estimate) {
		return kappa(idx, func(t Triple[bool]) bool { return t.Candidate }), kappa(idx, func(t Triple[bool]) bool { return t.Current })
	})
}

// GateScores is GatePassFail for scores in [0, 1], on Spearman's rho. It fails with
// ErrInvalid on a score outside [0, 1] or a run that appears twice.
func GateScores(runs []Triple[float64], o GateOptions) (GateReport, error) {
	for _, t := range runs {
		if err := checkScore(t.RunID, t.Want, t.Candidate, t.Current); err != nil {
			return GateReport{}, err
		}
	}
	if err := checkIDs(runs, func(t Triple[float64]) string { return t.RunID }); err != nil {
		return GateReport{}, err
	}
	want, cand, cur := make([]float64, len(runs)), make([]float64, len(runs)), make([]float64, len(runs))
	return decide("spearman", len(runs), o, func(idx []int) (Estimate, Estimate) {
		want, cand, cur = want[:0], cand[:0], cur[:0]
		for _, i := range idx {
			want, cand, cur = append(want, runs[i].Want), append(cand, runs[i].Candidate), append(cur, runs[i].Current)
		}
		return spearman(want, cand), spearman(want, cur)
	})
}

// decide runs the gate over n runs; figures returns both versions' figures on the runs
// idx names (repeats allowed).
func decide(metric string, n int, o GateOptions, figures func(idx []int) (cand, cur Estimate)) (GateReport, error) {
	if o.Resamples < 0 {
		return GateReport{}, fmt.Errorf("agreement: gate: resamples %d: want 0 (the default, %d) or more", o.Resamples, DefaultResamples)
	}
	if o.Resamples == 0 {
		o.Resamples = DefaultResamples
	}
	r := GateReport{Metric: metric, Runs: n, Seed: o.Seed, Decision: NotEnoughLabels}
	if n == 0 {
		r.Reason = fmt.Sprintf("not enough labels: no run is labelled and judged by both versions; the gate needs %d", MinGateRuns)
		return r, nil
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	r.Candidate, r.Current = figures(all)
	if n < MinGateRuns {
		r.Reason = fmt.Sprintf("not enough labels: %d labelled runs, the gate needs %d; label more runs or decide without it (candidate %s %s, current %s)",
			n, MinGateRuns, metric, r.Candidate, r.Current)
		return r, nil
	}
	for _, e := range []Estimate{r.Candidate, r.Current} {
		if !e.Defined() {
			r.Reason = fmt.Sprintf("not enough labels: %s is undefined on these %d runs (%s); label runs of more kinds", metric, n, e.Undefined)
			return r, nil
		}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5ca1ab1e))
	diffs := make([]float64, 0, o.Resamples)
	idx := make([]int, n)
	for range o.Resamples {
		for i := range idx {
			idx[i] = rng.IntN(n)
		}
		cand, cur := figures(idx)
		if cand.Defined() && cur.Defined() {
			diffs = append(diffs, cand.Value-cur.Value)
		}
	}
	r.Resamples = len(diffs)
	if len(diffs) < o.Resamples/2 {
		r.Reason = fmt.Sprintf("not enough labels: %s was undefined in %d of %d resamples of these %d runs; label runs of more kinds",
			metric, o.Resamples-len(diffs), o.Resamples, n)
		return r, nil
	}
	slices.Sort(diffs)
	d := r.Candidate.Value - r.Current.Value
	r.Difference = Estimate{Value: d, N: n, Method: MethodBootstrap,
		Low: stat.Quantile(0.025, stat.Empirical, diffs, nil), High: stat.Quantile(0.975, stat.Empirical, diffs, nil)}
	said := fmt.Sprintf("the candidate's %s is %.3f against the current version's %.3f on the same %d labelled runs; the difference %+.3f has a 95%% paired bootstrap interval of %+.3f to %+.3f",
		metric, r.Candidate.Value, r.Current.Value, n, d, r.Difference.Low, r.Difference.High)
	if r.Difference.High < 0 {
		r.Decision, r.Reason = Refuse, "refused: "+said+", worse than chance explains"
		return r, nil
	}
	r.Decision, r.Reason = Accept, "accepted: "+said+", not worse beyond chance"
	return r, nil
}
