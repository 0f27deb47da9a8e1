package agreement

import (
	"fmt"
	"math"

	"github.com/scorekit/scorekit/internal/service/insights"
)

// Confusion counts runs by the person's verdict (Want) and the scorer's (Got).
type Confusion struct {
	// BothPass counts runs both passed.
	BothPass int `json:"both_pass"`
	// BothFail counts runs both failed.
	BothFail int `json:"both_fail"`
	// Missed counts runs people failed and the scorer passed: failures it let through.
	Missed int `json:"missed"`
	// FalseAlarms counts runs people passed and the scorer failed.
	FalseAlarms int `json:"false_alarms"`
}

// Runs is the number of runs counted.
func (c Confusion) Runs() int { return c.BothPass + c.BothFail + c.Missed + c.FalseAlarms }

// Add returns the confusion with one more run: want is the person's verdict, got the
// scorer's.
func (c Confusion) Add(want, got bool) Confusion {
	switch {
	case want && got:
		c.BothPass++
	case !want && !got:
		c.BothFail++
	case !want:
		c.Missed++
	default:
		c.FalseAlarms++
	}
	return c
}

// table is the confusion as a 2x2 table of counts: rows the person (pass, fail), columns
// the scorer (pass, fail).
func (c Confusion) table() [][]float64 {
	return [][]float64{
		{float64(c.BothPass), float64(c.FalseAlarms)},
		{float64(c.Missed), float64(c.BothFail)},
	}
}

// PassFailReport is the agreement of pass/fail verdicts with people's.
type PassFailReport struct {
	// Runs is the number of pairs measured.
	Runs int `json:"runs"`
	// Confusion is the confusion matrix.
	Confusion Confusion `json:"confusion"`
	// Accuracy is the share of runs where both gave the same verdict (Wilson interval).
	Accuracy Estimate `json:"accuracy"`
	// Kappa is Cohen's kappa: the agreement beyond what the two sides' pass rates give by
	// chance; 1 is perfect, 0 is chance, below 0 worse than chance.
	Kappa Estimate `json:"kappa"`
	// FailPrecision is, of the runs the scorer failed, the share people failed too
	// (Wilson interval; N is the runs the scorer failed).
	FailPrecision Estimate `json:"fail_precision"`
	// FailRecall is, of the runs people failed, the share the scorer failed too (Wilson
	// interval; N is the runs people failed).
	FailRecall Estimate `json:"fail_recall"`
	// Disagreements are the pairs whose verdicts differ, in input order.
	Disagreements []Pair[bool] `json:"disagreements"`
}

// PassFail measures how well Got agrees with Want over pairs of pass (true) / fail (false)
// verdicts. It fails with ErrNoRuns on no pairs and ErrInvalid when a run appears twice.
func PassFail(pairs []Pair[bool]) (PassFailReport, error) {
	if len(pairs) == 0 {
		return PassFailReport{}, fmt.Errorf("agreement: pass/fail: %w: label some runs first", ErrNoRuns)
	}
	if err := checkIDs(pairs, func(p Pair[bool]) string { return p.RunID }); err != nil {
		return PassFailReport{}, err
	}
	r := PassFailReport{Runs: len(pairs), Disagreements: []Pair[bool]{}}
	r.Confusion = confusion(pairs)
	for _, p := range pairs {
		if p.Want != p.Got {
			r.Disagreements = append(r.Disagreements, p)
		}
	}
	c := r.Confusion
	r.Accuracy = proportion(c.BothPass+c.BothFail, r.Runs, "")
	r.FailPrecision = proportion(c.BothFail, c.BothFail+c.FalseAlarms, "the scorer failed no run")
	r.FailRecall = proportion(c.BothFail, c.BothFail+c.Missed, "no run is labelled fail")
	r.Kappa = cohenKappa(c.table())
	return r, nil
}

func confusion(pairs []Pair[bool]) Confusion {
	var c Confusion
	for _, p := range pairs {
		c = c.Add(p.Want, p.Got)
	}
	return c
}

// proportion is k of n with its Wilson interval; none says why when n is 0.
func proportion(k, n int, none string) Estimate {
	if n == 0 {
		return undefined(0, MethodWilson, none)
	}
	lo, hi := insights.Wilson(k, n, z95)
	return Estimate{Value: float64(k) / float64(n), Low: lo, High: hi, N: n, Method: MethodWilson}
}

// cohenKappa is Cohen's kappa of a square table of counts (rows one rater, columns the
// other) with the large-sample interval of Fleiss, Cohen and Everitt (1969):
//
//	var = (A + B - C) / (n (1 - pe)^2)
//	A = sum_i p_ii (1 - (p_i. + p_.i)(1 - k))^2
//	B = (1 - k)^2 sum_{i != j} p_ij (p_.i + p_j.)^2
//	C = (k - pe (1 - k))^2
func cohenKappa(t [][]float64) Estimate {
	n := 0.0
	for _, row := range t {
		for _, c := range row {
			n += c
		}
	}
	if n == 0 {
		return undefined(0, MethodKappaFCE, "no runs")
	}
	m := len(t)
	rows, cols := make([]float64, m), make([]float64, m)
	po := 0.0
	for i := range m {
		for j := range m {
			p := t[i][j] / n
			rows[i] += p
			cols[j] += p
		}
		po += t[i][i] / n
	}
	pe := 0.0
	for i := range m {
		pe += rows[i] * cols[i]
	}
	if 1-pe < 1e-12 {
		return undefined(int(n), MethodKappaFCE, "both sides gave every run the same verdict, so chance explains all agreement")
	}
	k := (po - pe) / (1 - pe)
	var a, b float64
	for i := range m {
		for j := range m {
			p := t[i][j] / n
			if i == j {
				a += p * math.Pow(1-(rows[i]+cols[i])*(1-k), 2)
			} else {
				b += p * math.Pow(cols[i]+rows[j], 2)
			}
		}
	}
	b *= (1 - k) * (1 - k)
	c := math.Pow(k-pe*(1-k), 2)
	se := math.Sqrt(max(a+b-c, 0) / (n * (1 - pe) * (1 - pe)))
	return clip(Estimate{Value: k, Low: k - z95*se, High: k + z95*se, N: int(n), Method: MethodKappaFCE})
}
