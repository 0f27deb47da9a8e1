package e2e

import (
	"strings"
	"testing"
)

// checkDashboardWalkthrough: the example runs raise no insight and show on the dashboard;
// the broken deploy raises a critical one, printed with its evidence.
func checkDashboardWalkthrough(t *testing.T, got string) {
	for _, want := range []string{
		`"status":"done"`,                                                                               // each evaluation
		`{"insights":[]}`,                                                                               // no false alarm on the example runs
		`data-agent="assistant"`, `data-agent="email-triage"`, "No open insight", `class="chart spark"`, // the dashboard
		"CRITICAL gross_failures  email-triage/prescreen", // the bad deploy, caught
		"measured: share of gross failures (error_text, empty_output)",
		"window: 100 runs (100 scored",
		"[error_text]", "run email-triage-03", // the worst runs, with their flags
		`scorekit_insights_open{kind="gross_failures",severity="critical"} 1`, // /metrics
		`scorekit_insights_open{kind="evaluation_health",severity="critical"} 0`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, `"status":"done"`) != 3 {
		t.Errorf("want 3 evaluations done:\n%s", got)
	}
}
