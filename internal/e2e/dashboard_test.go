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
		"measured: share of gross failures (error_text, empty_output, tool_error)",
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
	// One finding, one card: the gross failures' card and one for the failure rate, and no
	// run listed on both.
	cards := strings.Split(got, "\nCRITICAL ")[1:]
	if len(cards) != 2 {
		t.Errorf("%d critical insights, want 2 (the gross failures, the failure rate):\n%s", len(cards), got)
	}
	listed := map[string]string{}
	for _, c := range cards {
		kind, _, _ := strings.Cut(c, " ")
		for _, l := range strings.Split(c, "\n") {
			if id, ok := strings.CutPrefix(strings.TrimSpace(l), "run "); ok {
				id, _, _ = strings.Cut(id, ":")
				if other, dup := listed[id]; dup && other != kind {
					t.Errorf("run %s is listed by %s and by %s", id, other, kind)
				}
				listed[id] = kind
			}
		}
	}
}
