package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/textkit"
)

func (e *env) insightsCommand() *cobra.Command {
	var (
		db, tenant, agent, severity, state string
		limit                              int
		asJSON                             bool
		wait                               time.Duration
	)
	cmd := &cobra.Command{
		Use:   "insights [--agent NAME] [--severity critical]",
		Short: "List the insights about the tenant's agents, with their evidence",
		Long: `List the insights the service found about the tenant's agents, newest first, each with
its evidence: what was measured over which runs, the interval, the level it crossed, the
scorer version and the worst runs with their reasons.

Insights are computed per (agent, scorer) over the agent's latest runs (its policy's
window, default 100) each time results are stored. Skipped and failed results never
count as low scores; many of them are an evaluation_health insight about the scorer.
A critical insight needs statistical certainty; a scorer marked experimental (scorekit
insights experimental) or whose version just changed raises none until it has scored a
full window.`,
		Example: `  scorekit insights
  scorekit insights --agent email-triage --state all
  scorekit insights --severity critical --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			q := service.InsightQuery{Severity: severity, State: state, Limit: limit}
			return e.withTenant(ctx, db, tenant, func(s *stack, t store.Tenant) error {
				upToDate, err := s.svc.WaitInsights(ctx, t, agent, wait)
				if err != nil {
					return err
				}
				if !upToDate {
					fmt.Fprintf(e.stderr, "scorekit: some insights are still being updated (by scorekit serve or worker); this is what is stored now\n")
				}
				var page service.InsightsPage
				if agent != "" {
					page, err = s.svc.AgentInsights(ctx, t, agent, q)
				} else {
					page, err = s.svc.Insights(ctx, t, q)
				}
				if err != nil {
					return err
				}
				if asJSON {
					enc := json.NewEncoder(e.stdout)
					enc.SetIndent("", "  ")
					return enc.Encode(page.Insights)
				}
				if len(page.Insights) == 0 {
					what := "open insights"
					if state != "" && state != service.InsightsOpen {
						what = state + " insights"
					}
					if agent != "" {
						what += " about " + agent
					}
					fmt.Fprintf(e.stdout, "no %s (tenant %s)\n", what, t.Name)
					return nil
				}
				if err := printInsights(e.stdout, page.Insights); err != nil {
					return err
				}
				if page.Next != "" {
					fmt.Fprintf(e.stdout, "\n(more: raise --limit above %d)\n", limit)
				}
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&agent, "agent", "", "only this agent's insights")
	f.StringVar(&severity, "severity", "", "only this severity: warning or critical")
	f.StringVar(&state, "state", service.InsightsOpen, "open, resolved or all")
	f.IntVar(&limit, "limit", 100, "at most this many insights")
	f.BoolVar(&asJSON, "json", false, "print the insights as JSON, evidence included")
	f.DurationVar(&wait, "wait", 10*time.Second, "wait up to this long for insights being updated")
	cmd.PersistentFlags().StringVar(&db, "db", defaultDB(), "the service's database (a SQLite file or postgres://...)")
	tenantFlag(cmd.PersistentFlags(), &tenant)
	cmd.AddCommand(e.webhookCommand(&db, &tenant), e.experimentalCommand(&db, &tenant))
	return cmd
}

func (e *env) webhookCommand(db, tenant *string) *cobra.Command {
	var (
		webhookURL string
		remove     bool
	)
	cmd := &cobra.Command{
		Use:   "webhook --url URL | --remove",
		Short: "Post the tenant's new critical insights to a URL, signed",
		Long: `Post each new critical insight of the tenant (opened as critical, or raised to critical)
to URL as JSON, retried with backoff until it is answered 2xx. Each delivery carries
Scorekit-Signature: sha256=HEX, the HMAC-SHA256 of the body keyed with the secret this
command prints once; verify it before trusting the body. Setting the URL again makes a
new secret. docs/SERVICE.md shows a delivery.`,
		Example: `  scorekit insights webhook --tenant acme --url https://hooks.example.com/scorekit
  scorekit insights webhook --tenant acme --remove`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (webhookURL == "") == !remove {
				return fmt.Errorf("give --url URL to set the webhook, or --remove to remove it")
			}
			ctx := cmd.Context()
			return e.withTenant(ctx, *db, *tenant, func(s *stack, t store.Tenant) error {
				secret, err := s.svc.SetWebhook(ctx, t, webhookURL)
				if err != nil {
					return err
				}
				if remove {
					fmt.Fprintf(e.stdout, "tenant %s has no webhook now\n", t.Name)
					return nil
				}
				fmt.Fprintln(e.stdout, secret)
				fmt.Fprintf(e.stderr, "scorekit: new critical insights of tenant %s are posted to %s; the secret that signs them is printed on standard output, once.\n", t.Name, webhookURL)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&webhookURL, "url", "", "the http:// or https:// URL to post to")
	cmd.Flags().BoolVar(&remove, "remove", false, "remove the webhook")
	return cmd
}

func (e *env) experimentalCommand(db, tenant *string) *cobra.Command {
	var clear bool
	cmd := &cobra.Command{
		Use:   "experimental [SCORER...] | --clear",
		Short: "Mark scorers experimental: no critical insight until a full window",
		Long: `Mark the tenant's experimental scorers (replacing the list): their insights are
warnings at most until their current version has scored a full window of an agent's runs.
Without arguments, print the list.`,
		Example: `  scorekit insights experimental --tenant acme relevancy
  scorekit insights experimental --tenant acme --clear`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if clear && len(args) > 0 {
				return fmt.Errorf("give scorers or --clear, not both")
			}
			return e.withTenant(ctx, *db, *tenant, func(s *stack, t store.Tenant) error {
				if len(args) > 0 || clear {
					if err := s.svc.SetExperimental(ctx, t, args); err != nil {
						return err
					}
				}
				set, err := s.svc.InsightSettings(ctx, t)
				if err != nil {
					return err
				}
				if len(set.Experimental) == 0 {
					fmt.Fprintf(e.stdout, "tenant %s marks no scorer experimental\n", t.Name)
					return nil
				}
				fmt.Fprintf(e.stdout, "tenant %s marks experimental: %s\n", t.Name, strings.Join(set.Experimental, ", "))
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&clear, "clear", false, "mark no scorer experimental")
	return cmd
}

// printInsights prints each insight with its evidence.
func printInsights(w io.Writer, ins []store.Insight) error {
	bw := bufio.NewWriter(w)
	for i, in := range ins {
		if i > 0 {
			fmt.Fprintln(bw)
		}
		state := "open since " + in.OpenedAt.Format("2006-01-02 15:04")
		if in.ResolvedAt != nil {
			state = "resolved " + in.ResolvedAt.Format("2006-01-02 15:04")
		}
		fmt.Fprintf(bw, "%s %s  %s/%s  %s  (%s, %s)\n", strings.ToUpper(string(in.Severity)), in.Kind, in.Agent, in.Scorer, in.Title, in.ID, state)
		for _, l := range evidenceLines(in) {
			fmt.Fprintf(bw, "  %s\n", l)
		}
	}
	return bw.Flush()
}

// evidenceLines says what an insight rests on, in a few lines.
func evidenceLines(in store.Insight) []string {
	ev := in.Evidence
	m := ev.Measured
	var out []string
	out = append(out, fmt.Sprintf("measured: %s: %s (%d of %d runs), %.0f%% confidence interval %s to %s, level %s",
		m.What, pctOf(m.Value), m.K, m.N, m.Confidence*100, pctOf(m.Low), pctOf(m.High), pctOf(m.Level)))
	wc := ev.Window
	window := fmt.Sprintf("window: %d runs (%d scored, %d skipped, %d failed), %s to %s, scorer %s %s",
		wc.Runs, wc.Scored, wc.Skipped, wc.Failed, wc.From.Format("2006-01-02 15:04"), wc.To.Format("2006-01-02 15:04"), in.Scorer, ev.ScorerVersion)
	if wc.Mean != nil {
		window += fmt.Sprintf(", mean %.2f", *wc.Mean)
	}
	out = append(out, window)
	if p := ev.Previous; p != nil {
		line := fmt.Sprintf("previous window: %d runs (%d scored)", p.Runs, p.Scored)
		if p.Mean != nil {
			line += fmt.Sprintf(", mean %.2f", *p.Mean)
		}
		out = append(out, line)
	}
	if len(ev.Flags) > 0 {
		var parts []string
		for f, n := range ev.Flags {
			parts = append(parts, fmt.Sprintf("%s %d", f, n))
		}
		slices.Sort(parts)
		out = append(out, "flags: "+strings.Join(parts, ", "))
	}
	for _, c := range ev.Causes {
		code := ""
		if c.Code != "" {
			code = " (" + c.Code + ")"
		}
		out = append(out, fmt.Sprintf("cause: %s%s %d times: %s", c.Status, code, c.Count, c.Message))
	}
	if ev.Capped != "" {
		out = append(out, "capped: "+ev.Capped)
	}
	if ev.Held {
		out = append(out, "held open: its estimate is still above the warning level")
	}
	for _, x := range ev.Worst {
		score := string(x.Status)
		if x.Score != nil {
			score = fmt.Sprintf("%.2f", *x.Score)
		}
		why := x.Reason
		if x.ErrorMessage != "" {
			why = x.ErrorCode + ": " + x.ErrorMessage
		}
		flags := ""
		if len(x.Flags) > 0 {
			flags = " [" + strings.Join(x.Flags, ",") + "]"
		}
		out = append(out, fmt.Sprintf("run %s: %s%s %s", x.RunID, score, flags, textkit.OneLine(why, 100)))
	}
	return out
}

func pctOf(v float64) string { return fmt.Sprintf("%.1f%%", v*100) }
