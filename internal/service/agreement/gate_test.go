package agreement

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// versions labels n runs (a quarter fail) and gives two scorer versions that flip each
// verdict with their own error rate, from a seeded generator.
func versions(seed uint64, n int, candErr, curErr float64) []Triple[bool] {
	rng := rand.New(rand.NewPCG(seed, 99))
	out := make([]Triple[bool], n)
	for i := range out {
		want := rng.Float64() >= 0.25
		out[i] = Triple[bool]{RunID: fmt.Sprint("run-", i), Want: want,
			Candidate: want != (rng.Float64() < candErr), Current: want != (rng.Float64() < curErr)}
	}
	return out
}

func mustGate(t *testing.T, runs []Triple[bool], o GateOptions) GateReport {
	t.Helper()
	g, err := GatePassFail(runs, o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGateDecides: refused with both figures when the candidate agrees less, accepted when
// it agrees more or the same, not decided under MinGateRuns labelled runs.
func TestGateDecides(t *testing.T) {
	for _, tc := range []struct {
		name     string
		runs     []Triple[bool]
		decision Decision
		says     []string
	}{
		{name: "worse candidate", runs: versions(1, 200, 0.30, 0.05), decision: Refuse,
			says: []string{"refused", "candidate's kappa is", "current version's", "200 labelled runs", "worse than chance explains"}},
		{name: "better candidate", runs: versions(2, 200, 0.05, 0.30), decision: Accept, says: []string{"accepted", "not worse beyond chance"}},
		{name: "same verdicts", runs: versions(3, 100, 0.1, 0.1), decision: Accept},
		{name: "29 runs", runs: versions(4, 29, 0.5, 0), decision: NotEnoughLabels, says: []string{"not enough labels: 29 labelled runs, the gate needs 30"}},
		{name: "30 runs", runs: versions(4, 30, 0.5, 0), decision: Refuse},
		{name: "no runs", runs: nil, decision: NotEnoughLabels, says: []string{"no run is labelled"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := mustGate(t, tc.runs, GateOptions{Seed: 5})
			if g.Decision != tc.decision {
				t.Fatalf("decision %s, want %s: %s", g.Decision, tc.decision, g.Reason)
			}
			for _, s := range tc.says {
				if !strings.Contains(g.Reason, s) {
					t.Errorf("reason %q lacks %q", g.Reason, s)
				}
			}
			if g.Decision == NotEnoughLabels {
				return
			}
			if g.Metric != "kappa" || g.Runs != len(tc.runs) || g.Resamples != DefaultResamples {
				t.Errorf("metric %s runs %d resamples %d", g.Metric, g.Runs, g.Resamples)
			}
			// Both figures appear in the reason, as printed.
			for _, v := range []float64{g.Candidate.Value, g.Current.Value} {
				if !strings.Contains(g.Reason, fmt.Sprintf("%.3f", v)) {
					t.Errorf("reason %q lacks the figure %.3f", g.Reason, v)
				}
			}
			if d := g.Difference; d.Low > d.Value || d.Value > d.High {
				t.Errorf("difference %v lies outside its own interval", d)
			}
		})
	}
	// Identical versions: every resample's difference is 0.
	same := versions(3, 100, 0.1, 0.1)
	for i := range same {
		same[i].Candidate = same[i].Current
	}
	if g := mustGate(t, same, GateOptions{}); g.Decision != Accept || g.Difference.Low != 0 || g.Difference.High != 0 {
		t.Errorf("identical versions: %s %v, want accept with [0, 0]", g.Decision, g.Difference)
	}
}

// TestGateReproducible: the same runs and seed give the same report; another seed moves
// the interval a little, not the decision.
func TestGateReproducible(t *testing.T) {
	runs := versions(11, 150, 0.25, 0.08)
	a, b := mustGate(t, runs, GateOptions{Seed: 42}), mustGate(t, runs, GateOptions{Seed: 42})
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different reports:\n%+v\n%+v", a, b)
	}
	c := mustGate(t, runs, GateOptions{Seed: 43})
	if c.Difference == a.Difference {
		t.Errorf("seeds 42 and 43 gave the same interval %v: the seed is not used", a.Difference)
	}
	if c.Decision != a.Decision {
		t.Errorf("seed 43 decided %s, seed 42 %s", c.Decision, a.Decision)
	}
}

// TestGateFalseRefusals: two versions that are equally good are refused about 2.5% of the
// time (the lower tail of a two-sided 95% interval), not more.
func TestGateFalseRefusals(t *testing.T) {
	const trials = 200
	refused := 0
	for i := range trials {
		g := mustGate(t, versions(uint64(1000+i), 100, 0.15, 0.15), GateOptions{Seed: uint64(i), Resamples: 400})
		if g.Decision == Refuse {
			refused++
		}
	}
	// Binomial(200, 0.025) exceeds 12 with probability below 0.2%.
	if refused > 12 {
		t.Errorf("equal versions refused in %d of %d trials, want about %d", refused, trials, trials/40)
	}
}

// TestGateScores: the scores gate compares Spearman's rho the same way.
func TestGateScores(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	var runs []Triple[float64]
	for i := range 120 {
		w := rng.Float64()
		clamp := func(x float64) float64 { return max(0, min(1, x)) }
		runs = append(runs, Triple[float64]{RunID: fmt.Sprint(i), Want: w,
			Candidate: clamp(w + rng.NormFloat64()*0.6), Current: clamp(w + rng.NormFloat64()*0.05)})
	}
	g, err := GateScores(runs, GateOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if g.Decision != Refuse || g.Metric != "spearman" || !strings.Contains(g.Reason, "candidate's spearman") {
		t.Errorf("noisy candidate: %s (%s), want refused on spearman", g.Decision, g.Reason)
	}
	for i := range runs {
		runs[i].Candidate, runs[i].Current = runs[i].Current, runs[i].Candidate
	}
	if g, _ := GateScores(runs, GateOptions{Seed: 1}); g.Decision != Accept {
		t.Errorf("better candidate: %s (%s), want accept", g.Decision, g.Reason)
	}
}

// TestGateUndefined: labels of one kind leave kappa undefined; the gate does not decide.
func TestGateUndefined(t *testing.T) {
	runs := make([]Triple[bool], 40)
	for i := range runs {
		runs[i] = Triple[bool]{RunID: fmt.Sprint(i), Want: true, Candidate: true, Current: true}
	}
	g := mustGate(t, runs, GateOptions{})
	if g.Decision != NotEnoughLabels || !strings.Contains(g.Reason, "kappa is undefined") {
		t.Errorf("one kind of label: %s (%s), want not_enough_labels saying kappa is undefined", g.Decision, g.Reason)
	}
	if _, err := GatePassFail(runs, GateOptions{Resamples: -1}); err == nil {
		t.Error("resamples -1: no error")
	}
}
