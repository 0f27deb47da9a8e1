package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/user"

	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/internal/service/store"
)

// cliActor is who the audit log records for a command: the local user and host (a
// command works on the database directly, with no key).
func cliActor() string {
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return "cli " + name + "@" + host
}

// deleteRunsCommand is runs delete: some runs by id, or an agent with everything it has.
func (e *env) deleteRunsCommand(db, tenant *string) *cobra.Command {
	var agent string
	cmd := &cobra.Command{
		Use:   "delete ID... | --agent NAME",
		Short: "Delete runs with their results (a deleted run id is not stored again for 30 days), or an agent with everything it has",
		Long: `Delete runs by id, with their results and their place in evaluations and insights;
an import carrying a deleted run's id within 30 days reports it "deleted" and stores
nothing. --agent NAME deletes every run of the agent with its evaluations, insights and
policy, a few hundred runs a transaction. Each deletion is recorded in the tenant's audit
log (scorekit audit).`,
		Example: `  scorekit runs delete --tenant acme run-42
  scorekit runs delete --tenant acme --agent email-triage`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (agent == "") == (len(args) == 0) {
				return fmt.Errorf("give the ids of the runs to delete, or --agent NAME (not both)")
			}
			ctx := cmd.Context()
			return e.withTenant(ctx, *db, *tenant, func(s *stack, t store.Tenant) error {
				if agent != "" {
					d, err := s.svc.DeleteAgent(ctx, t, cliActor(), agent)
					if err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "agent %s deleted: %s (tenant %s)\n", agent, deletedText(d), t.Name)
					return nil
				}
				for _, id := range args {
					d, err := s.svc.DeleteRun(ctx, t, cliActor(), id)
					if err != nil {
						return err
					}
					fmt.Fprintf(e.stdout, "run %s deleted: %s (tenant %s)\n", id, deletedText(d), t.Name)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "delete this agent: every run, result, evaluation, insight and its policy")
	return cmd
}

func deletedText(d store.Deleted) string {
	return fmt.Sprintf("%d runs, %d results, %d evaluations, %d insights", d.Runs, d.Results, d.Evaluations, d.Insights)
}

// deleteTenantCommand is tenants delete.
func (e *env) deleteTenantCommand(db *string) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete NAME --yes",
		Short: "Delete a tenant and everything it owns (its keys are revoked first)",
		Long: `Delete a tenant and everything it owns: its keys are revoked first, so nothing new
arrives, then its runs and results go a few hundred runs a transaction, then its
evaluations, insights, settings, policies and audit log. One record of the deletion (who,
when, what was removed) is kept: scorekit audit --deleted-tenants lists them. Export the
tenant first (scorekit export --tenant NAME --out FILE) to keep a copy. A deletion cut
short is finished by running it again.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !yes {
				return fmt.Errorf("this deletes everything tenant %s owns, for good: export it first (scorekit export --tenant %s --out %s.jsonl), then run again with --yes", args[0], args[0], args[0])
			}
			ctx := cmd.Context()
			return e.withStack(ctx, *db, func(s *stack) error {
				d, err := s.svc.DeleteTenant(ctx, args[0], cliActor(), func(d store.Deleted) {
					fmt.Fprintf(e.stderr, "scorekit: %d runs deleted so far\n", d.Runs)
				})
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "tenant %s deleted: %s\n", args[0], deletedText(d))
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm the deletion")
	return cmd
}

func (e *env) exportCommand() *cobra.Command {
	var db, tenant, out string
	cmd := &cobra.Command{
		Use:   "export [--tenant NAME] [--out FILE]",
		Short: "Write everything a tenant owns as JSONL (what GET /v1/export serves)",
		Long: `Write everything the tenant owns as JSONL, one {"kind": ..., "data": ...} a line: the
tenant, its keys (ids), agent policies, runs each followed by its results, evaluations,
insights and audit log, then a line of kind "end" counting each kind. The export is
recorded in the tenant's audit log.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			ctx := cmd.Context()
			w := e.stdout
			if out != "" {
				f, err := os.Create(out)
				if err != nil {
					return fmt.Errorf("--out: %w", err)
				}
				defer func() {
					if cerr := f.Close(); err == nil && cerr != nil {
						err = fmt.Errorf("--out: %w", cerr)
					}
				}()
				w = f
			}
			bw := bufio.NewWriterSize(w, 1<<16)
			err = e.withTenant(ctx, db, tenant, func(s *stack, t store.Tenant) error {
				return s.svc.Export(ctx, t, cliActor(), bw)
			})
			if ferr := bw.Flush(); err == nil {
				err = ferr
			}
			return err
		},
	}
	dbFlag(cmd, &db)
	tenantFlag(cmd.Flags(), &tenant)
	cmd.Flags().StringVar(&out, "out", "", "write to FILE instead of standard output")
	return cmd
}

func (e *env) auditCommand() *cobra.Command {
	var (
		db, tenant string
		deleted    bool
		limit      int
	)
	cmd := &cobra.Command{
		Use:   "audit [--tenant NAME] | --deleted-tenants",
		Short: "Who deleted or exported what, and when (a tenant's audit log)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			return e.withStack(ctx, db, func(s *stack) error {
				var (
					log []store.AuditEntry
					err error
				)
				if deleted {
					log, err = s.svc.Store().TenantDeletions(ctx, limit)
				} else {
					var t store.Tenant
					if t, err = s.tenantFor(ctx, tenant); err != nil {
						return err
					}
					log, err = s.svc.AuditLog(ctx, t, 0, limit)
				}
				if err != nil {
					return err
				}
				tw := newTable(e.stdout)
				fmt.Fprintln(tw, "WHEN\tWHO\tWHAT\tSUBJECT\tDETAIL")
				for _, a := range log {
					detail, _ := json.Marshal(a.Detail)
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.At.Format("2006-01-02 15:04:05"), a.Actor, a.Action, a.Subject, detail)
				}
				return tw.Flush()
			})
		},
	}
	dbFlag(cmd, &db)
	tenantFlag(cmd.Flags(), &tenant)
	cmd.Flags().BoolVar(&deleted, "deleted-tenants", false, "list the records of deleted tenants instead")
	cmd.Flags().IntVar(&limit, "limit", 100, "entries to list, newest first (1-1000)")
	return cmd
}
