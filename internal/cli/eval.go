package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/sdk"
)

func (e *env) evalCommand() *cobra.Command {
	var (
		db, tenant, agent, since string
		last, worst              int
		scorerList               []string
		ho                       hostOptions
		jf                       jobFlags
	)
	cmd := &cobra.Command{
		Use:   "eval --agent NAME --last N [--scorers a,b]",
		Short: "Evaluate an agent's newest stored runs and print the table score prints",
		Long: `Evaluate the agent's last N runs in --db (newest first by the run's time) with this
process's workers, store every result, and print the table score prints. When a run had
been scored before by another version of a scorer, the old and new scores are printed side
by side: the comparison to check after a scorer fix.`,
		Example: `  scorekit eval --agent email-triage --last 10
  scorekit eval --agent assistant --last 10 --scorers prescreen,completeness`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if err := checkTimeout("--timeout", ho.timeout); err != nil {
				return err
			}
			if last < 1 {
				return fmt.Errorf("--last %d: want 1 or more runs", last)
			}
			if worst < 0 {
				return fmt.Errorf("--worst %d: want 0 or more", worst)
			}
			req := service.EvaluationRequest{Limit: last, Scorers: scorerList}
			if since != "" {
				t, err := time.Parse(time.RFC3339, since)
				if err != nil {
					return fmt.Errorf("--since %q: want an RFC 3339 time such as 2025-06-01T00:00:00Z", since)
				}
				req.Since = &t
			}
			if jf.workers < 1 {
				jf.workers = 4
			}
			s, err := e.openStack(ctx, db, ho, jf)
			if err != nil {
				return err
			}
			defer s.close(context.WithoutCancel(ctx))
			t, err := s.tenantFor(ctx, tenant)
			if err != nil {
				return err
			}
			ev, err := s.svc.CreateEvaluation(ctx, t, agent, req)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "scorekit: evaluation %s: %d runs of %s\n", ev.ID, ev.Runs, agent)
			if est := ev.JudgeEstimate; est != nil && est.JudgeCalls > 0 {
				fmt.Fprintf(e.stderr, "scorekit: about %.0f judge calls and %.0f tokens (%s)%s\n", est.JudgeCalls, est.Tokens, est.Basis, budgetNote(est))
			}
			var v service.EvaluationView
			for {
				v, err = s.svc.WaitEvaluation(ctx, t, ev.ID, 5*time.Second, service.ViewOptions{Results: true})
				if err != nil {
					return err
				}
				if v.Status == service.StatusDone {
					break
				}
				fmt.Fprintf(e.stderr, "scorekit: %d of %d results\n", v.DoneResults, v.ExpectedResults)
			}
			// This process's workers update the agent's insights too: give them the time
			// before they stop (scorekit insights shows them).
			if ok, err := s.svc.WaitInsights(ctx, t, agent, 30*time.Second); err == nil && !ok {
				fmt.Fprintf(e.stderr, "scorekit: the insights of %s are still being updated; scorekit serve or worker will finish them\n", agent)
			}
			return printEvaluation(e.stdout, v, worst)
		},
	}
	f := cmd.Flags()
	f.StringVar(&agent, "agent", "", "the agent whose runs to evaluate (required)")
	_ = cmd.MarkFlagRequired("agent")
	f.IntVar(&last, "last", 10, "how many of the agent's newest runs")
	f.StringVar(&since, "since", "", "only runs at or after this RFC 3339 time")
	f.StringSliceVar(&scorerList, "scorers", nil, "scorers to run (default: the agent's policy, else prescreen)")
	tenantFlag(f, &tenant)
	f.IntVar(&worst, "worst", 5, "lowest-scoring runs to list per scorer")
	addServiceFlags(cmd, &db, &ho, &jf)
	return cmd
}

// printEvaluation prints v with the table score prints (one "line" per run, in the
// evaluation's order, newest first), then old and new scores side by side where an
// earlier version of a scorer scored the same runs.
func printEvaluation(w io.Writer, v service.EvaluationView, worst int) error {
	names := make([]string, len(v.Scorers))
	index := map[string]int{}
	for i, s := range v.Scorers {
		names[i] = s.Name
		index[s.Name] = i
	}
	var lines []scoredLine
	byRun := map[string]int{}
	for _, r := range v.Results {
		i, ok := byRun[r.RunID]
		if !ok {
			i = len(lines)
			byRun[r.RunID] = i
			lines = append(lines, scoredLine{line: i + 1, runID: r.RunID, results: make([]sdk.Result, len(names))})
		}
		lines[i].results[index[r.Scorer]] = sdk.Result{Status: sdk.Status(r.Status), Score: r.Score, Passed: r.Passed,
			Flags: r.Flags, Reason: r.Reason, Error: r.Error, Dimensions: r.Dimensions}
	}
	sink := newTableSink(w, names, worst, nil)
	for _, l := range lines {
		if err := sink.add(l); err != nil {
			return err
		}
	}
	if err := sink.finish(false); err != nil {
		return err
	}
	if err := printDisagreements(w, v); err != nil {
		return err
	}
	return printComparison(w, v)
}

// printDisagreements prints, for versions of one scorer evaluated side by side
// ("triage@1", "triage@2"), the runs on which their verdicts differ, with each one's
// reason.
func printDisagreements(w io.Writer, v service.EvaluationView) error {
	if len(v.Disagreements) == 0 {
		return nil
	}
	bw := bufio.NewWriter(w)
	by := map[string][]service.VersionDisagreement{}
	var order []string
	for _, d := range v.Disagreements {
		if by[d.Scorer] == nil {
			order = append(order, d.Scorer)
		}
		by[d.Scorer] = append(by[d.Scorer], d)
	}
	for _, name := range order {
		ds := by[name]
		fmt.Fprintf(bw, "\n%s: the versions disagree on %d of %d runs\n", name, len(ds), v.Runs)
		tw := newTable(bw)
		for _, d := range ds {
			for i, vd := range d.Verdicts {
				run := d.RunID
				if i > 0 {
					run = ""
				}
				verdict := scoreText(vd.Status, vd.Score)
				if vd.Passed != nil && *vd.Passed {
					verdict += " pass"
				} else if vd.Passed != nil {
					verdict += " fail"
				}
				fmt.Fprintf(tw, "  %s\t%s (v%s)\t%s\t%s\n", run, vd.Scorer, vd.Version, verdict, vd.Reason)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// printComparison prints, per scorer with earlier results, each run's old and new score.
func printComparison(w io.Writer, v service.EvaluationView) error {
	bw := bufio.NewWriter(w)
	for _, s := range v.Scorers {
		if s.Previous == nil {
			continue
		}
		old := strings.Join(s.Previous.Versions, ", ")
		fmt.Fprintf(bw, "\n%s: version %s against %s (%d runs scored before)\n", s.Name, s.Version, old, s.Previous.Runs)
		fmt.Fprintf(bw, "  mean %s -> %s, pass rate %s -> %s\n", meanText(s.Previous.Mean), meanText(s.Mean),
			pct(s.Previous.PassRate), pct(s.PassRate))
		tw := newTable(bw)
		fmt.Fprintf(tw, "  RUN\tOLD (%s)\tNEW (%s)\tCHANGE\n", old, s.Version)
		for _, r := range v.Results {
			if r.Scorer != s.Name || r.Previous == nil {
				continue
			}
			change := ""
			if r.Score != nil && r.Previous.Score != nil {
				change = fmt.Sprintf("%+.2f", *r.Score-*r.Previous.Score)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", r.RunID, scoreText(r.Previous.Status, r.Previous.Score), scoreText(r.Status, r.Score), change)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func scoreText(status string, score *float64) string {
	if status != string(sdk.StatusScored) || score == nil {
		return status
	}
	return fmt.Sprintf("%.2f", *score)
}

func meanText(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *v)
}

func pct(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", *v*100)
}

// budgetNote says the tenant's judge token budget beside an estimate.
func budgetNote(est *service.JudgeEstimate) string {
	switch {
	case est.TokenBudget < 0:
		return "; the tenant's judge budget is unlimited"
	case est.TokenBudget > 0:
		return fmt.Sprintf("; the tenant's judge budget is %d tokens per %s", est.TokenBudget, est.BudgetWindow)
	}
	return ""
}
