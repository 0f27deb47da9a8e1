package sim

import (
	"context"
	"testing"

	"github.com/scorekit/scorekit/internal/service/insights"
)

// TestFalseAlarms runs 10 healthy streams per source (1,000 full windows each) with a seed
// the QUALITY.md figures do not use. Where prescreen itself fails fewer correct runs than
// the quality warning level, no window may hold a critical insight. Where it fails more
// than the critical level (XSTest's appropriate refusals, which the refusal rule fails),
// the engine must say so: it reports the scorer it is given, and is not simply silent.
func TestFalseAlarms(t *testing.T) {
	p, err := LoadPools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cfg := insights.Config{}
	levels := cfg.WithDefaults().Quality
	as, err := FalseAlarms(cfg, p, p.Sources, 10, 99)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		t.Run(a.Source, func(t *testing.T) {
			if a.Windows < 1000 {
				t.Fatalf("%d windows, want at least 1,000", a.Windows)
			}
			switch {
			case a.FailRate < levels.Warning && a.Critical > 0:
				t.Errorf("prescreen fails %.1f%% of these correct runs, and %d of %d windows held a critical insight (%v)", 100*a.FailRate, a.Critical, a.Windows, a.Kinds)
			case a.FailRate > levels.Critical+0.02 && a.Critical == 0:
				t.Errorf("prescreen fails %.1f%% of these runs, and no window held a critical insight", 100*a.FailRate)
			}
			t.Logf("prescreen fails %.1f%%: %d critical and %d warning windows of %d", 100*a.FailRate, a.Critical, a.Warning, a.Windows)
		})
	}
}

// TestDetection holds the detection of an error-text breakage to floors under the rates
// QUALITY.md reports, on 100 streams per rate with a seed the report does not use.
func TestDetection(t *testing.T) {
	p, err := LoadPools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Detect(insights.Config{}, p.Healthy["seed_email_triage"], []Scenario{
		{Name: "gross 30%", Rate: 0.3, Pool: p.Gross},
		{Name: "gross 10%", Rate: 0.1, Pool: p.Gross},
		{Name: "low 5%", Rate: 0.05, Pool: []insights.Result{p.LowScore()}},
	}, 100, 100, 99)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		crit25, crit25Max, warn25, anyMax float64
	}{
		{crit25: 0.75, crit25Max: 1, warn25: 0.95, anyMax: 1},
		{crit25: 0, crit25Max: 0.2, warn25: 0.5, anyMax: 1},
		{crit25: 0, crit25Max: 0, warn25: 0, anyMax: 0.05},
	}
	for i, d := range ds {
		tt := tests[i]
		c25, w25, any := Within(d.CriticalDelays, 25), Within(d.WarningDelays, 25), Within(d.WarningDelays, d.Horizon)
		t.Logf("%s: critical within 25 runs %.0f%%, warning within 25 %.0f%%, any insight within %d %.0f%%", d.Scenario, 100*c25, 100*w25, d.Horizon, 100*any)
		if c25 < tt.crit25 || c25 > tt.crit25Max || w25 < tt.warn25 || any > tt.anyMax {
			t.Errorf("%s: critical within 25 runs %.2f (want %.2f-%.2f), warning within 25 %.2f (want >= %.2f), any insight %.2f (want <= %.2f)",
				d.Scenario, c25, tt.crit25, tt.crit25Max, w25, tt.warn25, any, tt.anyMax)
		}
	}
}
