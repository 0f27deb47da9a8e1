package agreement

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultTolerance is the difference between a person's score and the scorer's above which
// ScoreReport lists the run as a disagreement.
const DefaultTolerance = 0.3

// ScoreReport is the agreement of scores in [0, 1] with people's.
type ScoreReport struct {
	// Runs is the number of pairs measured.
	Runs int `json:"runs"`
	// Spearman is Spearman's rho: the correlation of the ranks (ties share the mean rank).
	Spearman Estimate `json:"spearman"`
	// Kendall is Kendall's tau-b: concordant minus discordant pairs, ties corrected.
	Kendall Estimate `json:"kendall"`
	// MAE is the mean absolute difference between the two scores.
	MAE Estimate `json:"mae"`
	// Tolerance is the difference above which a pair is a disagreement.
	Tolerance float64 `json:"tolerance"`
	// Disagreements are the pairs whose scores differ by more than Tolerance, the largest
	// difference first.
	Disagreements []Pair[float64] `json:"disagreements"`
}

// Scores measures how well Got agrees with Want over pairs of scores in [0, 1].
// tolerance is the difference above which a pair is listed as a disagreement; 0 means
// DefaultTolerance. It fails with ErrNoRuns on no pairs, and with ErrInvalid on a score
// outside [0, 1] or a run that appears twice.
func Scores(pairs []Pair[float64], tolerance float64) (ScoreReport, error) {
	if len(pairs) == 0 {
		return ScoreReport{}, fmt.Errorf("agreement: scores: %w: label some runs first", ErrNoRuns)
	}
	if tolerance < 0 || tolerance >= 1 || math.IsNaN(tolerance) {
		return ScoreReport{}, fmt.Errorf("agreement: scores: tolerance %v: want a difference in [0, 1) (0 means %v)", tolerance, DefaultTolerance)
	}
	if tolerance == 0 {
		tolerance = DefaultTolerance
	}
	if err := checkScores(pairs); err != nil {
		return ScoreReport{}, err
	}
	want, got := split(pairs)
	r := ScoreReport{Runs: len(pairs), Tolerance: tolerance, Disagreements: []Pair[float64]{}}
	r.Spearman = spearman(want, got)
	r.Kendall = kendallTauB(want, got)
	r.MAE = meanAbsoluteError(want, got)
	for _, p := range pairs {
		if math.Abs(p.Want-p.Got) > tolerance {
			r.Disagreements = append(r.Disagreements, p)
		}
	}
	slices.SortStableFunc(r.Disagreements, func(a, b Pair[float64]) int {
		return cmp.Compare(math.Abs(b.Want-b.Got), math.Abs(a.Want-a.Got))
	})
	return r, nil
}

func checkScores(pairs []Pair[float64]) error {
	for _, p := range pairs {
		if err := checkScore(p.RunID, p.Want, p.Got); err != nil {
			return err
		}
	}
	return checkIDs(pairs, func(p Pair[float64]) string { return p.RunID })
}

// checkScore refuses a score that is not a number in [0, 1].
func checkScore(runID string, scores ...float64) error {
	for _, v := range scores {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return fmt.Errorf("agreement: %w: run %q has score %v: want a number in [0, 1] (normalize the scale first)", ErrInvalid, runID, v)
		}
	}
	return nil
}

func split(pairs []Pair[float64]) (want, got []float64) {
	want, got = make([]float64, len(pairs)), make([]float64, len(pairs))
	for i, p := range pairs {
		want[i], got[i] = p.Want, p.Got
	}
	return want, got
}

// ranks returns the rank of each value, 1-based, ties given the mean of their ranks.
func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(x[a], x[b]) })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		mean := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = mean
		}
		i = j + 1
	}
	return r
}

func constant(x []float64) bool {
	for _, v := range x[1:] {
		if v != x[0] {
			return false
		}
	}
	return true
}

// noSpread says why a correlation is undefined when one side gave every run one value.
func noSpread(want, got []float64) string {
	switch {
	case constant(want):
		return "people gave every run the same score"
	case constant(got):
		return "the scorer gave every run the same score"
	}
	return ""
}

// spearman is Spearman's rho, the Pearson correlation of the ranks, with Fisher's z
// interval and Bonett and Wright's (2000) standard error sqrt((1 + rho²/2) / (n - 3)).
// Below 4 runs the interval is the whole range: there is nothing to narrow it.
func spearman(want, got []float64) Estimate {
	n := len(want)
	if why := noSpread(want, got); why != "" {
		return undefined(n, MethodFisherBW, why)
	}
	rho := rhoValue(want, got)
	e := Estimate{Value: rho, Low: -1, High: 1, N: n, Method: MethodFisherBW}
	if n < 4 {
		return e
	}
	se := math.Sqrt((1 + rho*rho/2) / float64(n-3))
	z := math.Atanh(rho)
	e.Low, e.High = math.Tanh(z-z95*se), math.Tanh(z+z95*se)
	if math.Abs(rho) >= 1 {
		e.Low, e.High = rho, rho
	}
	return clip(e)
}

// rhoValue is Spearman's rho alone; both sides must have spread.
func rhoValue(want, got []float64) float64 {
	return max(-1, min(1, stat.Correlation(ranks(want), ranks(got), nil)))
}

// kendallTauB is Kendall's tau-b with the asymptotic standard error SAS PROC FREQ and
// Agresti (2002) give, over each run rather than each cell of a table (the same sum):
//
//	tau_b = P / w,  P = sum_i d_i,  d_i = sum_j sign(x_i - x_j) sign(y_i - y_j)
//	w_r = n² - sum over x values of count², w_c likewise for y, w = sqrt(w_r w_c)
//	ASE = sqrt(sum_i (2 w d_i + tau_b v_i)² - n³ tau_b² (w_r + w_c)²) / w²
//	v_i = count(x_i) w_c + count(y_i) w_r
//
// gonum's stat.Kendall is tau-a and counts a tie as concordant; labels are mostly ties.
func kendallTauB(want, got []float64) Estimate {
	n := len(want)
	if why := noSpread(want, got); why != "" {
		return undefined(n, MethodTauASE, why)
	}
	cx, cy := map[float64]float64{}, map[float64]float64{}
	for i := range n {
		cx[want[i]]++
		cy[got[i]]++
	}
	nf := float64(n)
	wr, wc := nf*nf, nf*nf
	for _, c := range cx {
		wr -= c * c
	}
	for _, c := range cy {
		wc -= c * c
	}
	w := math.Sqrt(wr * wc)
	d := make([]float64, n)
	p := 0.0
	for i := range n {
		for j := range n {
			d[i] += sign(want[i]-want[j]) * sign(got[i]-got[j])
		}
		p += d[i]
	}
	tau := p / w
	sum := 0.0
	for i := range n {
		v := cx[want[i]]*wc + cy[got[i]]*wr
		sum += math.Pow(2*w*d[i]+tau*v, 2)
	}
	ase := math.Sqrt(max(sum-nf*nf*nf*tau*tau*(wr+wc)*(wr+wc), 0)) / (w * w)
	return clip(Estimate{Value: tau, Low: tau - z95*ase, High: tau + z95*ase, N: n, Method: MethodTauASE})
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// meanAbsoluteError is the mean of |want - got| with Student's t interval, cut to [0, 1].
// With one run the interval is the whole range.
func meanAbsoluteError(want, got []float64) Estimate {
	n := len(want)
	diff := make([]float64, n)
	for i := range n {
		diff[i] = math.Abs(want[i] - got[i])
	}
	mean, sd := stat.MeanStdDev(diff, nil)
	e := Estimate{Value: mean, Low: 0, High: 1, N: n, Method: MethodStudentT}
	if n < 2 {
		return e
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
	half := t * sd / math.Sqrt(float64(n))
	e.Low, e.High = max(mean-half, 0), min(mean+half, 1)
	return e
}
