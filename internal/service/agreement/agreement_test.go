package agreement

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// table builds pass/fail pairs from a 2x2 table of counts: rows the person (pass, fail),
// columns the scorer (pass, fail).
func table(passPass, passFail, failPass, failFail int) []Pair[bool] {
	var out []Pair[bool]
	add := func(n int, want, got bool) {
		for range n {
			out = append(out, Pair[bool]{RunID: fmt.Sprint("r", len(out)), Want: want, Got: got})
		}
	}
	add(passPass, true, true)
	add(passFail, true, false)
	add(failPass, false, true)
	add(failFail, false, false)
	return out
}

// scored builds score pairs, scaling each side by its divisor onto [0, 1].
func scored(want, got []float64, wantDiv, gotDiv float64) []Pair[float64] {
	out := make([]Pair[float64], len(want))
	for i := range want {
		out[i] = Pair[float64]{RunID: fmt.Sprint("r", i), Want: want[i] / wantDiv, Got: got[i] / gotDiv}
	}
	return out
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.9f, want %.9f (within %g)", what, got, want, tol)
	}
}

func mustPassFail(t *testing.T, pairs []Pair[bool]) PassFailReport {
	t.Helper()
	r, err := PassFail(pairs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustScores(t *testing.T, pairs []Pair[float64]) ScoreReport {
	t.Helper()
	r, err := Scores(pairs, 0)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestKappaPublished checks Cohen's kappa and its interval against published worked examples.
func TestKappaPublished(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		pairs                 []Pair[bool]
		kappa, low, high, tol float64
	}{
		// Wikipedia, "Cohen's kappa", worked example: 50 grant proposals read by two
		// readers; both yes 20, A yes B no 5, A no B yes 10, both no 15: po 0.7, pe 0.5,
		// kappa 0.4. The article gives no interval; the bounds are this package's.
		{name: "wikipedia grant proposals", pairs: table(20, 5, 10, 15), kappa: 0.4, low: math.NaN()},
		// statpsych (Bonett), ci.kappa(.05, 31, 12, 4, 58), documented output: Cohen
		// kappa 0.6756757, SE 0.07344761, 95% interval 0.5317210 to 0.8196303 (the
		// Fleiss, Cohen and Everitt standard error, as in Fleiss and Paik 2003).
		{name: "statpsych ci.kappa", pairs: table(31, 12, 4, 58), kappa: 0.6756757, low: 0.5317210, high: 0.8196303, tol: 5e-8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustPassFail(t, tc.pairs)
			near(t, "kappa", r.Kappa.Value, tc.kappa, 5e-8)
			if !math.IsNaN(tc.low) {
				near(t, "low", r.Kappa.Low, tc.low, tc.tol)
				near(t, "high", r.Kappa.High, tc.high, tc.tol)
			}
			if r.Kappa.N != len(tc.pairs) || r.Kappa.Method != MethodKappaFCE {
				t.Errorf("kappa N %d method %q, want %d and %q", r.Kappa.N, r.Kappa.Method, len(tc.pairs), MethodKappaFCE)
			}
		})
	}
}

// TestWilsonPublished checks the proportions' interval against published values.
func TestWilsonPublished(t *testing.T) {
	for _, tc := range []struct {
		name      string
		k, n      int
		low, high float64
		tol       float64
	}{
		// Newcombe (1998), "Two-sided confidence intervals for the single proportion",
		// Statistics in Medicine 17:857-872, Table I, method 3 (score, no continuity
		// correction), to four decimals.
		{name: "newcombe 81/263", k: 81, n: 263, low: 0.2553, high: 0.3662, tol: 5e-5},
		{name: "newcombe 15/148", k: 15, n: 148, low: 0.0624, high: 0.1605, tol: 5e-5},
		{name: "newcombe 0/20", k: 0, n: 20, low: 0, high: 0.1611, tol: 5e-5},
		{name: "newcombe 1/29", k: 1, n: 29, low: 0.0061, high: 0.1718, tol: 5e-5},
		// R package stests, ci_p_wilson(x=15, n=50), documented output.
		{name: "stests 15/50", k: 15, n: 50, low: 0.1910355, high: 0.4375035, tol: 5e-8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// k agreements of n: accuracy is k/n.
			r := mustPassFail(t, table(tc.k, tc.n-tc.k, 0, 0))
			near(t, "accuracy", r.Accuracy.Value, float64(tc.k)/float64(tc.n), 1e-12)
			near(t, "low", r.Accuracy.Low, tc.low, tc.tol)
			near(t, "high", r.Accuracy.High, tc.high, tc.tol)
		})
	}
}

// TestSpearmanPublished checks Spearman's rho and its interval against published values.
// Each side is divided onto [0, 1], which leaves the ranks as they were.
func TestSpearmanPublished(t *testing.T) {
	for _, tc := range []struct {
		name              string
		pairs             []Pair[float64]
		rho, low, high    float64
		rhoTol, boundsTol float64
	}{
		// Wikipedia, "Spearman's rank correlation coefficient", example: IQ against hours
		// of television per week for ten people, rho = -29/165.
		{name: "wikipedia iq and tv", pairs: scored(
			[]float64{106, 100, 86, 101, 99, 103, 97, 113, 112, 110},
			[]float64{7, 27, 2, 50, 28, 29, 20, 12, 6, 17}, 200, 100),
			rho: -29.0 / 165, low: math.NaN(), rhoTol: 1e-12},
		// SciPy, scipy.stats.spearmanr documentation example:
		// spearmanr([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) -> statistic 0.8207826816681233 (ties).
		{name: "scipy spearmanr", pairs: scored([]float64{1, 2, 3, 4, 5}, []float64{5, 6, 7, 8, 7}, 10, 10),
			rho: 0.8207826816681233, low: math.NaN(), rhoTol: 1e-12},
		// statpsych (Bonett), ci.spear(.05, y, x), documented output: 0.8699639, 95%
		// interval 0.5840951 to 0.9638297 (Fisher's z, Bonett and Wright 2000).
		{name: "statpsych ci.spear", pairs: scored(
			[]float64{21, 4, 9, 12, 35, 18, 10, 22, 24, 1, 6, 8, 13, 16, 19},
			[]float64{67, 28, 30, 28, 52, 40, 25, 37, 44, 10, 14, 20, 28, 40, 51}, 100, 100),
			rho: 0.8699639, low: 0.5840951, high: 0.9638297, rhoTol: 5e-8, boundsTol: 5e-8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustScores(t, tc.pairs)
			near(t, "rho", r.Spearman.Value, tc.rho, tc.rhoTol)
			if !math.IsNaN(tc.low) {
				near(t, "low", r.Spearman.Low, tc.low, tc.boundsTol)
				near(t, "high", r.Spearman.High, tc.high, tc.boundsTol)
			}
		})
	}
}

// TestKendallPublished checks Kendall's tau-b and its interval against published values.
func TestKendallPublished(t *testing.T) {
	// R DescTools, KendallTauB(as.table(rbind(c(26,26,23,18,9), c(6,7,9,14,23))),
	// conf.level=0.95), documented output for the table of the SAS PROC FREQ manual's
	// example it cites: tau_b 0.3372567, 95% interval 0.2114009 to 0.4631126.
	var sas []Pair[float64]
	for row, counts := range [][]int{{26, 26, 23, 18, 9}, {6, 7, 9, 14, 23}} {
		for col, c := range counts {
			for range c {
				sas = append(sas, Pair[float64]{RunID: fmt.Sprint("r", len(sas)), Want: float64(row), Got: float64(col) / 4})
			}
		}
	}
	for _, tc := range []struct {
		name            string
		pairs           []Pair[float64]
		tau, low, high  float64
		tauTol, lowHigh float64
	}{
		// SciPy, scipy.stats.kendalltau documentation example: x1 = [12, 2, 1, 12, 2],
		// x2 = [1, 4, 7, 1, 0] -> statistic -0.47140452079103173 (tau-b, with ties).
		{name: "scipy kendalltau", pairs: scored([]float64{12, 2, 1, 12, 2}, []float64{1, 4, 7, 1, 0}, 100, 10),
			tau: -0.47140452079103173, low: math.NaN(), tauTol: 1e-12},
		// The published bounds are to seven digits; this package's agree to within 1e-5
		// (they differ in the sixth digit).
		{name: "sas and desctools 2x5 table", pairs: sas, tau: 0.3372567, low: 0.2114009, high: 0.4631126, tauTol: 5e-8, lowHigh: 1e-5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustScores(t, tc.pairs)
			near(t, "tau", r.Kendall.Value, tc.tau, tc.tauTol)
			if !math.IsNaN(tc.low) {
				near(t, "low", r.Kendall.Low, tc.low, tc.lowHigh)
				near(t, "high", r.Kendall.High, tc.high, tc.lowHigh)
			}
		})
	}
}

// TestMAEInterval checks the mean absolute error's t interval against a table value.
func TestMAEInterval(t *testing.T) {
	// Absolute errors 0.1, 0.2, ..., 1.0: mean 0.55, sample SD sqrt(0.0916667); the
	// 97.5% quantile of Student's t with 9 degrees of freedom is 2.262157 (NIST/SEMATECH
	// e-Handbook of Statistical Methods, 1.3.6.7.2, table of t critical values).
	var pairs []Pair[float64]
	for i := 1; i <= 10; i++ {
		pairs = append(pairs, Pair[float64]{RunID: fmt.Sprint(i), Want: 0, Got: float64(i) / 10})
	}
	r := mustScores(t, pairs)
	half := 2.262157 * math.Sqrt(0.55/6) / math.Sqrt(10)
	near(t, "mae", r.MAE.Value, 0.55, 1e-12)
	near(t, "low", r.MAE.Low, 0.55-half, 1e-6)
	near(t, "high", r.MAE.High, 0.55+half, 1e-6)
}

// TestPerfectAgreement: identical verdicts agree perfectly, whatever the mix.
func TestPerfectAgreement(t *testing.T) {
	r := mustPassFail(t, table(30, 0, 0, 12))
	for name, e := range map[string]Estimate{"accuracy": r.Accuracy, "kappa": r.Kappa, "precision": r.FailPrecision, "recall": r.FailRecall} {
		if e.Value != 1 {
			t.Errorf("%s = %v, want 1", name, e)
		}
	}
	if len(r.Disagreements) != 0 {
		t.Errorf("disagreements %v, want none", r.Disagreements)
	}
	var pairs []Pair[float64]
	for i := range 20 {
		v := float64(i%7) / 6
		pairs = append(pairs, Pair[float64]{RunID: fmt.Sprint(i), Want: v, Got: v})
	}
	s := mustScores(t, pairs)
	if s.Spearman.Value != 1 || s.Kendall.Value != 1 || s.MAE.Value != 0 {
		t.Errorf("identical scores: rho %v tau %v mae %v, want 1, 1, 0", s.Spearman, s.Kendall, s.MAE)
	}
}

// TestChanceAgreement: a scorer whose verdicts are independent of the labels has kappa 0.
func TestChanceAgreement(t *testing.T) {
	// Rows 40 pass / 60 fail, columns 60 / 40, every cell its product: chance exactly.
	r := mustPassFail(t, table(24, 16, 36, 24))
	near(t, "kappa", r.Kappa.Value, 0, 1e-12)
	if r.Kappa.Low >= 0 || r.Kappa.High <= 0 {
		t.Errorf("kappa interval %v does not contain 0", r.Kappa)
	}
	// Independent coin flips, seeded: every figure's interval holds 0 (or 0.5 for accuracy).
	rng := rand.New(rand.NewPCG(7, 7))
	var pf []Pair[bool]
	var sc []Pair[float64]
	for i := range 1000 {
		pf = append(pf, Pair[bool]{RunID: fmt.Sprint(i), Want: rng.IntN(2) == 0, Got: rng.IntN(2) == 0})
		sc = append(sc, Pair[float64]{RunID: fmt.Sprint(i), Want: rng.Float64(), Got: rng.Float64()})
	}
	c := mustPassFail(t, pf)
	s := mustScores(t, sc)
	for name, e := range map[string]Estimate{"kappa": c.Kappa, "rho": s.Spearman, "tau": s.Kendall} {
		if e.Low > 0 || e.High < 0 {
			t.Errorf("independent verdicts: %s %v excludes 0", name, e)
		}
	}
	if c.Accuracy.Low > 0.5 || c.Accuracy.High < 0.5 {
		t.Errorf("independent verdicts: accuracy %v excludes 0.5", c.Accuracy)
	}
	// Always disagreeing, half and half: kappa -1.
	near(t, "opposite kappa", mustPassFail(t, table(0, 10, 10, 0)).Kappa.Value, -1, 1e-12)
}

// TestInvariance: the figures do not depend on the order of the runs, on which verdict is
// called pass, or on which rater is which (kappa); the rank correlations do not depend on
// the scale of either side.
func TestInvariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var pf []Pair[bool]
	var sc []Pair[float64]
	for i := range 300 {
		want := rng.Float64() < 0.3
		got := want
		if rng.Float64() < 0.2 {
			got = !got
		}
		pf = append(pf, Pair[bool]{RunID: fmt.Sprint(i), Want: want, Got: got})
		w := math.Round(rng.Float64()*10) / 10 // ties, as labels have
		sc = append(sc, Pair[float64]{RunID: fmt.Sprint(i), Want: w, Got: max(0, min(1, w+rng.NormFloat64()*0.2))})
	}
	base, baseS := mustPassFail(t, pf), mustScores(t, sc)

	shuffled := slices.Clone(pf)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	got := mustPassFail(t, shuffled)
	got.Disagreements, base.Disagreements = nil, nil
	if !reflect.DeepEqual(got, base) {
		t.Errorf("run order changed the pass/fail figures:\n%+v\n%+v", got, base)
	}
	shuffledS := slices.Clone(sc)
	rng.Shuffle(len(shuffledS), func(i, j int) { shuffledS[i], shuffledS[j] = shuffledS[j], shuffledS[i] })
	gotS := mustScores(t, shuffledS)
	for _, c := range []struct {
		name string
		a, b Estimate
	}{{"rho", gotS.Spearman, baseS.Spearman}, {"tau", gotS.Kendall, baseS.Kendall}, {"mae", gotS.MAE, baseS.MAE}} {
		near(t, "shuffled "+c.name, c.a.Value, c.b.Value, 1e-12)
		near(t, "shuffled "+c.name+" low", c.a.Low, c.b.Low, 1e-12)
	}

	swapped := make([]Pair[bool], len(pf))
	flipped := make([]Pair[bool], len(pf))
	for i, p := range pf {
		swapped[i] = Pair[bool]{RunID: p.RunID, Want: p.Got, Got: p.Want}
		flipped[i] = Pair[bool]{RunID: p.RunID, Want: !p.Want, Got: !p.Got}
	}
	sw, fl := mustPassFail(t, swapped), mustPassFail(t, flipped)
	if sw.Kappa != base.Kappa {
		t.Errorf("kappa with the raters swapped %v, want %v", sw.Kappa, base.Kappa)
	}
	if fl.Kappa != base.Kappa || fl.Accuracy != base.Accuracy {
		t.Errorf("pass and fail relabelled: kappa %v accuracy %v, want %v and %v", fl.Kappa, fl.Accuracy, base.Kappa, base.Accuracy)
	}
	// Relabelled, the failure class is the old pass class: its recall is the old pass recall.
	c := base.Confusion
	near(t, "relabelled recall", fl.FailRecall.Value, float64(c.BothPass)/float64(c.BothPass+c.FalseAlarms), 1e-12)

	monotone := make([]Pair[float64], len(sc))
	reversed := make([]Pair[float64], len(sc))
	for i, p := range sc {
		monotone[i] = Pair[float64]{RunID: p.RunID, Want: p.Want * p.Want, Got: math.Sqrt(p.Got)}
		reversed[i] = Pair[float64]{RunID: p.RunID, Want: p.Want, Got: 1 - p.Got}
	}
	m, rv := mustScores(t, monotone), mustScores(t, reversed)
	near(t, "rho under a monotone rescale", m.Spearman.Value, baseS.Spearman.Value, 1e-12)
	near(t, "tau under a monotone rescale", m.Kendall.Value, baseS.Kendall.Value, 1e-12)
	near(t, "rho reversed", rv.Spearman.Value, -baseS.Spearman.Value, 1e-12)
	near(t, "tau reversed", rv.Kendall.Value, -baseS.Kendall.Value, 1e-12)
}

// TestCoverage: over many seeded samples from a population with a known figure, each 95%
// interval holds it about 95% of the time.
func TestCoverage(t *testing.T) {
	const reps = 400
	rng := rand.New(rand.NewPCG(2024, 11))
	// Pass/fail population: people fail 30% of runs; the scorer catches 80% of failures
	// and wrongly fails 10% of passes.
	pFail, catch, alarm := 0.3, 0.8, 0.1
	cells := [][]float64{{(1 - pFail) * (1 - alarm), (1 - pFail) * alarm}, {pFail * (1 - catch), pFail * catch}}
	var kappaTrue float64
	{
		po := cells[0][0] + cells[1][1]
		rp, cp := cells[0][0]+cells[0][1], cells[0][0]+cells[1][0]
		pe := rp*cp + (1-rp)*(1-cp)
		kappaTrue = (po - pe) / (1 - pe)
	}
	// Scores: bivariate normal with correlation 0.6, so the population rho is
	// (6/pi) asin(0.3) and tau (2/pi) asin(0.6) (Kruskal 1958); the normal CDF maps
	// them onto [0, 1] without changing a rank.
	r := 0.6
	rhoTrue, tauTrue := 6/math.Pi*math.Asin(r/2), 2/math.Pi*math.Asin(r)
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	hit := map[string]int{}
	for range reps {
		var pf []Pair[bool]
		var sc []Pair[float64]
		for i := range 150 {
			want := rng.Float64() >= pFail
			got := !(want && rng.Float64() < alarm || !want && rng.Float64() < catch)
			pf = append(pf, Pair[bool]{RunID: fmt.Sprint(i), Want: want, Got: got})
			x := rng.NormFloat64()
			y := r*x + math.Sqrt(1-r*r)*rng.NormFloat64()
			sc = append(sc, Pair[float64]{RunID: fmt.Sprint(i), Want: phi(x), Got: phi(y)})
		}
		c, s := mustPassFail(t, pf), mustScores(t, sc)
		for name, e := range map[string]struct {
			e    Estimate
			true float64
		}{"kappa": {c.Kappa, kappaTrue}, "accuracy": {c.Accuracy, cells[0][0] + cells[1][1]},
			"recall": {c.FailRecall, catch}, "rho": {s.Spearman, rhoTrue}, "tau": {s.Kendall, tauTrue}} {
			if e.e.Low <= e.true && e.true <= e.e.High {
				hit[name]++
			}
		}
	}
	for _, name := range []string{"kappa", "accuracy", "recall", "rho", "tau"} {
		cov := float64(hit[name]) / reps
		// 400 samples: the coverage's own standard error is about 0.011.
		if cov < 0.915 || cov > 0.985 {
			t.Errorf("%s: the 95%% interval held the population value in %.3f of %d samples, want about 0.95", name, cov, reps)
		}
	}
}

// TestUndefined: figures the data cannot define say why instead of giving a number.
func TestUndefined(t *testing.T) {
	r := mustPassFail(t, table(12, 0, 0, 0))
	for name, e := range map[string]Estimate{"kappa": r.Kappa, "precision": r.FailPrecision, "recall": r.FailRecall} {
		if e.Defined() || e.Value != 0 {
			t.Errorf("all pass: %s %v, want undefined", name, e)
		}
	}
	if !strings.Contains(r.FailRecall.Undefined, "no run is labelled fail") {
		t.Errorf("recall: %q, want it to say no run is labelled fail", r.FailRecall.Undefined)
	}
	if r.Accuracy.Value != 1 {
		t.Errorf("accuracy %v, want 1", r.Accuracy)
	}
	// People fail none, the scorer fails some: kappa is defined, and 0.
	near(t, "kappa with one-sided labels", mustPassFail(t, table(8, 4, 0, 0)).Kappa.Value, 0, 1e-12)

	s := mustScores(t, []Pair[float64]{{"a", 1, 0.2}, {"b", 1, 0.9}, {"c", 1, 0.5}})
	if s.Spearman.Defined() || s.Kendall.Defined() || !strings.Contains(s.Spearman.Undefined, "people gave every run the same score") {
		t.Errorf("constant labels: rho %v tau %v, want undefined, saying why", s.Spearman, s.Kendall)
	}
	if !s.MAE.Defined() {
		t.Errorf("constant labels: mae %v, want defined", s.MAE)
	}
}

// TestDisagreements lists both sides of every disagreement.
func TestDisagreements(t *testing.T) {
	r := mustPassFail(t, []Pair[bool]{{"a", true, true}, {"b", true, false}, {"c", false, true}, {"d", false, false}})
	want := []Pair[bool]{{"b", true, false}, {"c", false, true}}
	if !reflect.DeepEqual(r.Disagreements, want) {
		t.Errorf("disagreements %v, want %v", r.Disagreements, want)
	}
	if r.Confusion != (Confusion{BothPass: 1, BothFail: 1, Missed: 1, FalseAlarms: 1}) {
		t.Errorf("confusion %+v", r.Confusion)
	}
	s, err := Scores([]Pair[float64]{{"a", 1, 0.9}, {"b", 1, 0.2}, {"c", 0, 0.5}, {"d", 0.5, 0.5}}, 0.3)
	if err != nil {
		t.Fatal(err)
	}
	wantS := []Pair[float64]{{"b", 1, 0.2}, {"c", 0, 0.5}}
	if !reflect.DeepEqual(s.Disagreements, wantS) {
		t.Errorf("score disagreements %v, want %v (largest difference first)", s.Disagreements, wantS)
	}
}

// TestJoin pairs the runs both sides judged, in run order.
func TestJoin(t *testing.T) {
	got := Join(map[string]bool{"b": true, "a": false, "only-want": true}, map[string]bool{"a": true, "b": true, "only-got": false})
	want := []Pair[bool]{{"a", false, true}, {"b", true, true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Join = %v, want %v", got, want)
	}
}

// TestBadInput: what cannot be measured is an error that says what to fix.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func() error
		is   error
		says string
	}{
		{"no pass/fail pairs", func() error { _, err := PassFail(nil); return err }, ErrNoRuns, "label some runs"},
		{"no score pairs", func() error { _, err := Scores(nil, 0); return err }, ErrNoRuns, "label some runs"},
		{"duplicate run", func() error { _, err := PassFail([]Pair[bool]{{"x", true, true}, {"x", false, true}}); return err }, ErrInvalid, `run "x" appears twice`},
		{"score above 1", func() error { _, err := Scores([]Pair[float64]{{"x", 0.5, 7}}, 0); return err }, ErrInvalid, `run "x" has score 7`},
		{"NaN score", func() error { _, err := Scores([]Pair[float64]{{"x", math.NaN(), 0}}, 0); return err }, ErrInvalid, "want a number in [0, 1]"},
		{"gate score out of range", func() error {
			_, err := GateScores([]Triple[float64]{{"x", 0.5, 0.5, -1}}, GateOptions{})
			return err
		}, ErrInvalid, `run "x" has score -1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("err = %v, want %v saying %q", err, tc.is, tc.says)
			}
		})
	}
	if _, err := Scores([]Pair[float64]{{"x", 0.5, 0.5}}, 1.5); err == nil || !strings.Contains(err.Error(), "tolerance") {
		t.Errorf("tolerance 1.5: %v, want an error naming the tolerance", err)
	}
}
