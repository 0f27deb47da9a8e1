package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
)

// withStack opens the service (no workers) on --db for a command and closes it after.
func (e *env) withStack(ctx context.Context, db string, f func(*stack) error) error {
	s, err := e.openStack(ctx, db, hostOptions{}, jobFlags{workers: 0, chunk: 100, attempts: 5, rescueAfter: 10 * 60e9, poll: 1e9})
	if err != nil {
		return err
	}
	defer s.close(context.WithoutCancel(ctx))
	return f(s)
}

// withTenant opens the service as withStack does and hands f the tenant --tenant names
// (stack.tenantFor).
func (e *env) withTenant(ctx context.Context, db, tenant string, f func(*stack, store.Tenant) error) error {
	return e.withStack(ctx, db, func(s *stack) error {
		t, err := s.tenantFor(ctx, tenant)
		if err != nil {
			return err
		}
		return f(s, t)
	})
}

// readPolicy reads a tenant policy file; unknown keys are errors that name the key.
func readPolicy(path string) (store.Policy, error) {
	var p store.Policy
	if path == "" {
		return p, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return p, fmt.Errorf("--policy: %w", err)
	}
	switch err := decodeStrict(b, &p); {
	case errors.Is(err, errTrailingData):
		return p, fmt.Errorf("--policy %s: %w", path, err)
	case err != nil:
		return p, fmt.Errorf("--policy %s: %v (keys: judge, requests_per_second, max_runs_per_evaluation, scorers, limits, max_run_bytes, retention_days, redact, quotas, promotion_gate)", path, strings.TrimPrefix(err.Error(), "json: "))
	}
	return p, nil
}

func (e *env) tenantsCommand() *cobra.Command {
	var db string
	cmd := &cobra.Command{Use: "tenants", Short: "Create and list the service's tenants", Args: cobra.NoArgs}
	var policy string
	create := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a tenant (then give it a key: scorekit keys create --tenant NAME)",
		Long: `Create a tenant. --policy FILE sets its limits as JSON: {"scorers": [...], "judge":
{"max_concurrency", "requests_per_second", "token_budget"}, "requests_per_second",
"max_runs_per_evaluation", "max_run_bytes", "limits": {"memory_mib", "timeout_ms", ...},
"retention_days", "redact": {"kinds": ["email", "phone", "card", "secret"], "patterns":
[{"name", "regexp"}]}, "promotion_gate": true (a promotion must agree with the tenant's
labels at least as well as the version it replaces; see docs/AGREEMENT.md)}.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := readPolicy(policy)
			if err != nil {
				return err
			}
			return e.withStack(cmd.Context(), db, func(s *stack) error {
				t, err := s.svc.CreateTenant(cmd.Context(), args[0], p)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "tenant %s created; make it a key with: scorekit keys create --tenant %s\n", t.Name, t.Name)
				return nil
			})
		},
	}
	create.Flags().StringVar(&policy, "policy", "", "JSON file with the tenant's limits")
	setPolicy := &cobra.Command{
		Use:   "set-policy NAME --policy FILE",
		Short: "Replace a tenant's limits (scorers opened under the old ones age out of the cache)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if policy == "" {
				return fmt.Errorf("--policy FILE is required (a JSON object; {} for the defaults)")
			}
			p, err := readPolicy(policy)
			if err != nil {
				return err
			}
			return e.withStack(cmd.Context(), db, func(s *stack) error {
				if err := s.svc.SetTenantPolicy(cmd.Context(), args[0], p); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "tenant %s: policy replaced; running servers apply it to scorers they open from now on\n", args[0])
				return nil
			})
		},
	}
	setPolicy.Flags().StringVar(&policy, "policy", "", "JSON file with the tenant's limits")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the tenants",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withStack(cmd.Context(), db, func(s *stack) error {
				ts, err := s.svc.Tenants(cmd.Context())
				if err != nil {
					return err
				}
				tw := newTable(e.stdout)
				fmt.Fprintln(tw, "TENANT\tCREATED\tPOLICY")
				for _, t := range ts {
					pol, _ := json.Marshal(t.Policy)
					fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.CreatedAt.Format("2006-01-02 15:04"), pol)
				}
				return tw.Flush()
			})
		},
	}
	cmd.PersistentFlags().StringVar(&db, "db", defaultDB(), "the service's database (a SQLite file or postgres://...)")
	cmd.AddCommand(create, setPolicy, list, e.deleteTenantCommand(&db))
	return cmd
}

func (e *env) keysCommand() *cobra.Command {
	var db, tenant, scope, labeller string
	cmd := &cobra.Command{Use: "keys", Short: "Create, list and revoke a tenant's API keys", Args: cobra.NoArgs}
	create := &cobra.Command{
		Use:   "create --tenant NAME [--scope ingest|read|label|admin] [--labeller NAME]",
		Short: "Make an API key; it is printed once and only its hash is kept",
		Long: "Make an API key of one scope: ingest writes runs only (an agent's exporter), read reads only " +
			"(dashboards, reports), label reads and writes labels under one labeller's name, given with --labeller " +
			"(the people who label runs), admin does everything (evaluations, policies, the tenant's judge). " +
			"The default is admin, what every key could do before keys had scopes, so that scripts and walkthroughs " +
			"that make one key for everything keep working; give a narrower scope to any key that leaves your hands.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc, err := store.ParseScope(scope)
			if err != nil {
				return fmt.Errorf("keys create: --scope: %w (ingest writes runs only, read reads only, label writes one labeller's labels, admin does everything)", err)
			}
			if labeller != "" && sc != store.ScopeLabel {
				return fmt.Errorf("keys create: --labeller is for keys of scope label (add --scope label)")
			}
			return e.withStack(cmd.Context(), db, func(s *stack) error {
				create := func() (string, store.Key, error) { return s.svc.CreateScopedKey(cmd.Context(), tenant, sc) }
				if sc == store.ScopeLabel {
					create = func() (string, store.Key, error) { return s.svc.CreateLabellerKey(cmd.Context(), tenant, labeller) }
				}
				key, _, err := create()
				if err != nil {
					return err
				}
				fmt.Fprintln(e.stdout, key)
				fmt.Fprintf(e.stderr, "scorekit: the %s key of tenant %s is printed on standard output, once: keep it (it is stored hashed). Send it as Authorization: Bearer KEY.\n", sc, tenant)
				if !cmd.Flags().Changed("scope") {
					fmt.Fprintf(e.stderr, "scorekit: it is an admin key (the default): it can do everything. An exporter needs only --scope ingest, a dashboard only --scope read.\n")
				}
				return nil
			})
		},
	}
	create.Flags().StringVar(&scope, "scope", string(store.ScopeAdmin), "what the key may do: ingest (write runs only), read (read only), label (read, and write --labeller's labels) or admin (everything)")
	create.Flags().StringVar(&labeller, "labeller", "", "with --scope label: the one labeller whose labels the key writes")
	list := &cobra.Command{
		Use:   "list --tenant NAME",
		Short: "List a tenant's keys by id (the keys themselves are not kept)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.withStack(cmd.Context(), db, func(s *stack) error {
				ks, err := s.svc.Keys(cmd.Context(), tenant)
				if err != nil {
					return err
				}
				tw := newTable(e.stdout)
				fmt.Fprintln(tw, "KEY ID\tSCOPE\tCREATED\tREVOKED")
				for _, k := range ks {
					revoked := "-"
					if k.RevokedAt != nil {
						revoked = k.RevokedAt.Format("2006-01-02 15:04")
					}
					scope := string(k.Scope)
					if k.Labeller != "" {
						scope += " (" + k.Labeller + ")"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.Prefix, scope, k.CreatedAt.Format("2006-01-02 15:04"), revoked)
				}
				return tw.Flush()
			})
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke --tenant NAME KEY",
		Short: "Revoke a key (the key, or its id as keys list shows it); it authenticates no more",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.withStack(cmd.Context(), db, func(s *stack) error {
				if err := s.svc.RevokeKey(cmd.Context(), tenant, args[0]); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "key %s of tenant %s revoked\n", args[0][:min(len(args[0]), len(service.KeyPrefix)+8)], tenant)
				return nil
			})
		},
	}
	for _, c := range []*cobra.Command{create, list, revoke} {
		c.Flags().StringVar(&tenant, "tenant", "", "the tenant (required)")
		_ = c.MarkFlagRequired("tenant")
	}
	cmd.PersistentFlags().StringVar(&db, "db", defaultDB(), "the service's database (a SQLite file or postgres://...)")
	cmd.AddCommand(create, list, revoke)
	return cmd
}

func (e *env) runsCommand() *cobra.Command {
	var db, tenant, agent string
	cmd := &cobra.Command{Use: "runs", Short: "Store agent runs in the service's database", Args: cobra.NoArgs}
	imp := &cobra.Command{
		Use:   "import [--agent NAME] FILE|-",
		Short: "Store runs from JSONL or a JSON array; a bad line is reported, the others kept",
		Long: `Store runs from FILE (- reads stdin): JSONL (one run a line), a JSON array, or one run.
Each run follows the run contract (scorekit schema run) and names its agent, or --agent
names it for the runs that do not. A run whose id is stored already is left as it is, so
importing a file twice stores it once. A bad line is reported as FILE:LINE: reason and the
others are stored; the exit status is then 2.`,
		Example: `  scorekit runs import --agent email-triage examples/service/email-triage.jsonl`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := readInput(e.stdin, args[0])
			if err != nil {
				return err
			}
			return e.withTenant(cmd.Context(), db, tenant, func(s *stack, t store.Tenant) error {
				res, err := s.svc.ImportRuns(cmd.Context(), t, body, service.ImportOptions{Agent: agent})
				if err != nil {
					return fmt.Errorf("%s: %w", args[0], err)
				}
				for _, r := range res.Runs {
					if r.Status == service.RunRejected {
						fmt.Fprintf(e.stderr, "%s:%d: %s\n", args[0], r.Line, r.Error)
					}
				}
				for _, w := range res.Warnings {
					fmt.Fprintf(e.stderr, "scorekit: %s\n", w)
				}
				fmt.Fprintf(e.stdout, "%d stored, %d already stored, %d rejected (tenant %s)\n", res.Stored, res.Duplicates, res.Rejected, t.Name)
				if res.Deleted > 0 {
					fmt.Fprintf(e.stdout, "%d not stored: runs of their ids were deleted (scorekit audit lists the deletions)\n", res.Deleted)
				}
				for _, id := range res.Evaluations {
					fmt.Fprintf(e.stdout, "evaluation %s started by the agent's policy\n", id)
				}
				if res.Rejected > 0 {
					return errBadInput
				}
				return nil
			})
		},
	}
	imp.Flags().StringVar(&agent, "agent", "", "agent of the runs that name none")
	cmd.PersistentFlags().StringVar(&db, "db", defaultDB(), "the service's database (a SQLite file or postgres://...)")
	tenantFlag(cmd.PersistentFlags(), &tenant)
	cmd.AddCommand(imp, e.deleteRunsCommand(&db, &tenant))
	return cmd
}

// readInput reads a file, or stdin for "-".
func readInput(stdin io.Reader, name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	return b, nil
}
