package insights_test

import (
	"fmt"
	"time"

	"github.com/scorekit/scorekit/internal/service/insights"
	"github.com/scorekit/scorekit/sdk"
)

// The service's loop: after results of an (agent, scorer) are stored, load the latest
// result per run for the agent's last two windows and the insights open for the pair,
// call Update, and write the changes. Here 100 runs pass, then a judge outage fails 40.
func Example() {
	start := time.Date(2025, 6, 2, 8, 0, 0, 0, time.UTC)
	var rows []insights.Result
	for i := range 140 {
		t := start.Add(time.Duration(i) * time.Minute)
		r := insights.Result{RunID: fmt.Sprintf("run-%03d", i), RunTime: t, Scorer: "relevancy", ScorerVersion: "1.0.0", CreatedAt: t}
		if i < 100 {
			score, passed := 0.9, true
			r.Status, r.Score, r.Passed = sdk.StatusScored, &score, &passed
		} else {
			r.Status, r.ErrorCode, r.ErrorMessage = sdk.StatusFailed, sdk.CodeJudgeError, "HTTP 429: rate limited"
		}
		rows = append(rows, r)
	}
	var open []insights.Insight // as loaded from the store
	ch, err := insights.Update(insights.Config{}, "email-triage", "relevancy", rows, open, start.Add(3*time.Hour))
	if err != nil {
		panic(err)
	}
	for _, in := range ch.Opened {
		fmt.Printf("opened %s %s: %s\n", in.Severity, in.Kind, in.Title)
	}
	fmt.Println("new critical:", len(ch.NewCritical()))
	// Output:
	// opened critical evaluation_health: relevancy could not score 40 of the last 40 runs of email-triage: failed (judge_error) 40 times: HTTP 429: rate limited
	// new critical: 1
}
