package sim

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"

	"github.com/scorekit/scorekit/internal/service/insights"
)

// Alarms counts what the engine raised on healthy streams of one source.
type Alarms struct {
	Source string
	// Runs is the number of distinct healthy results the source has; FailRate the share
	// of them prescreen fails.
	Runs     int
	FailRate float64
	// Trials streams, each assessed on Windows full windows (every one with a full
	// previous window).
	Trials, Windows int
	// Critical and Warning count windows with an open insight of that severity (at worst);
	// TrialsCritical and TrialsWarning count trials with one at any point.
	Critical, Warning             int
	TrialsCritical, TrialsWarning int
	// Kinds counts warnings and criticals by kind.
	Kinds map[insights.Kind]int
}

// FalseAlarms runs trials healthy streams per source: each is 3 windows long and assessed
// after every run of its last window, so every assessment sees a full window and a full
// previous window of correct runs.
func FalseAlarms(cfg insights.Config, p *Pools, sources []string, trials int, seed uint64) ([]Alarms, error) {
	w := cfg.WithDefaults().Window
	var out []Alarms
	for si, src := range sources {
		pool := p.Healthy[src]
		a := Alarms{Source: src, Runs: len(pool), Trials: trials, Kinds: map[insights.Kind]int{}}
		for _, r := range pool {
			if r.Passed != nil && !*r.Passed {
				a.FailRate++
			}
		}
		a.FailRate /= float64(len(pool))
		rng := rand.New(rand.NewPCG(seed, uint64(si)))
		for range trials {
			steps, err := Track(cfg, Stream(rng, pool, 3*w, Breakage{}), 2*w)
			if err != nil {
				return nil, err
			}
			crit, warn := false, false
			for _, st := range steps {
				a.Windows++
				switch st.Worst() {
				case insights.SeverityCritical:
					a.Critical++
					crit = true
				case insights.SeverityWarning:
					a.Warning++
					warn = true
				}
				for k := range st.Open {
					a.Kinds[k]++
				}
			}
			if crit {
				a.TrialsCritical++
			}
			if warn {
				a.TrialsWarning++
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// Scenario is one breakage to detect.
type Scenario struct {
	Name string
	Rate float64
	Pool []insights.Result
}

// Detection is how fast the engine caught one scenario.
type Detection struct {
	Scenario string
	Rate     float64
	Trials   int
	Horizon  int
	// CriticalDelays and WarningDelays hold, per trial, how many runs after the break the
	// first critical (first warning or worse) was open; -1 when none by the horizon.
	CriticalDelays, WarningDelays []int
	// FirstCritical counts the kind of the first critical insight.
	FirstCritical map[insights.Kind]int
}

// Detect runs trials streams per scenario: two windows of healthy runs, then the break,
// tracked for horizon runs after it.
func Detect(cfg insights.Config, healthy []insights.Result, scenarios []Scenario, trials, horizon int, seed uint64) ([]Detection, error) {
	w := cfg.WithDefaults().Window
	var out []Detection
	for si, sc := range scenarios {
		d := Detection{Scenario: sc.Name, Rate: sc.Rate, Trials: trials, Horizon: horizon, FirstCritical: map[insights.Kind]int{}}
		rng := rand.New(rand.NewPCG(seed, uint64(100+si)))
		for range trials {
			at := 2 * w
			rows := Stream(rng, healthy, at+horizon, Breakage{At: at, Rate: sc.Rate, Pool: sc.Pool})
			steps, err := Track(cfg, rows, at-1)
			if err != nil {
				return nil, err
			}
			crit, warn := -1, -1
			for _, st := range steps {
				delay := st.Index - at + 1
				switch st.Worst() {
				case insights.SeverityCritical:
					if crit < 0 {
						crit = delay
						for k, s := range st.Open {
							if s == insights.SeverityCritical {
								d.FirstCritical[k]++
							}
						}
					}
					if warn < 0 {
						warn = delay
					}
				case insights.SeverityWarning:
					if warn < 0 {
						warn = delay
					}
				}
			}
			d.CriticalDelays = append(d.CriticalDelays, crit)
			d.WarningDelays = append(d.WarningDelays, warn)
		}
		out = append(out, d)
	}
	return out, nil
}

// Within returns the share of delays that are >= 0 and <= n.
func Within(delays []int, n int) float64 {
	k := 0
	for _, d := range delays {
		if d >= 0 && d <= n {
			k++
		}
	}
	return float64(k) / float64(len(delays))
}

// Quantile returns the q-quantile of the delays, counting "never" as above every delay;
// -1 when the quantile is "never".
func Quantile(delays []int, q float64) int {
	s := slices.Clone(delays)
	slices.SortFunc(s, func(a, b int) int {
		switch {
		case a < 0 && b < 0:
			return 0
		case a < 0:
			return 1
		case b < 0:
			return -1
		}
		return a - b
	})
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// WriteAlarms prints the false-alarm table, with a total over the sources on which the
// scorer fails fewer correct runs than warnBelow (a sound scorer) and one over all.
func WriteAlarms(w io.Writer, as []Alarms, warnBelow float64) {
	fmt.Fprintln(w, "| healthy runs from | distinct runs | prescreen fails | trials | windows | windows with a critical | with a warning | trials ever critical | ever warning | insights by kind (windows) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	var sound, all Alarms
	for _, a := range as {
		fmt.Fprintf(w, "| %s | %d | %.1f%% | %d | %d | %s | %s | %d | %d | %s |\n", a.Source, a.Runs, 100*a.FailRate, a.Trials, a.Windows,
			share(a.Critical, a.Windows), share(a.Warning, a.Windows), a.TrialsCritical, a.TrialsWarning, kinds(a.Kinds))
		sums := []*Alarms{&all}
		if a.FailRate < warnBelow {
			sums = append(sums, &sound)
		}
		for _, t := range sums {
			t.Trials += a.Trials
			t.Windows += a.Windows
			t.Critical += a.Critical
			t.Warning += a.Warning
			t.TrialsCritical += a.TrialsCritical
			t.TrialsWarning += a.TrialsWarning
		}
	}
	for _, t := range []struct {
		name string
		a    Alarms
	}{{fmt.Sprintf("**prescreen fails < %.0f%%**", 100*warnBelow), sound}, {"**all**", all}} {
		fmt.Fprintf(w, "| %s | | | %d | %d | **%s** | %s | **%d** | %d | |\n", t.name, t.a.Trials, t.a.Windows, share(t.a.Critical, t.a.Windows), share(t.a.Warning, t.a.Windows), t.a.TrialsCritical, t.a.TrialsWarning)
	}
}

// WriteDetections prints the detection table.
func WriteDetections(w io.Writer, ds []Detection) {
	fmt.Fprintln(w, "| breakage | rate | trials | critical within 25 runs | within 100 | median delay to critical | p90 | warning or worse within 25 | median delay to warning | first critical by kind |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, d := range ds {
		fmt.Fprintf(w, "| %s | %.0f%% | %d | %.1f%% | %.1f%% | %s | %s | %.1f%% | %s | %s |\n", d.Scenario, 100*d.Rate, d.Trials,
			100*Within(d.CriticalDelays, 25), 100*Within(d.CriticalDelays, 100), delay(Quantile(d.CriticalDelays, 0.5), d.Horizon), delay(Quantile(d.CriticalDelays, 0.9), d.Horizon),
			100*Within(d.WarningDelays, 25), delay(Quantile(d.WarningDelays, 0.5), d.Horizon), kinds(d.FirstCritical))
	}
}

func share(k, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%d (%.2f%%)", k, 100*float64(k)/float64(n))
}

func delay(d, horizon int) string {
	if d < 0 {
		return fmt.Sprintf("> %d", horizon)
	}
	return fmt.Sprint(d)
}

func kinds(m map[insights.Kind]int) string {
	var s string
	for _, k := range []insights.Kind{insights.KindEvaluationHealth, insights.KindGrossFailures, insights.KindQuality, insights.KindRegression} {
		if m[k] > 0 {
			if s != "" {
				s += ", "
			}
			s += fmt.Sprintf("%s %d", k, m[k])
		}
	}
	return s
}
