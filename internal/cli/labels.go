package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/agreement"
	"github.com/scorekit/scorekit/internal/service/store"
)

// EnvKey is the environment variable --key-env names by default: the API key of a
// command that talks to a running service (--server).
const EnvKey = "SCOREKIT_KEY"

// target is where a label command reads and writes: the service's database (--db, as
// the other service commands), or a running service over HTTP (--server, with the key
// from the environment variable --key-env names, so it never shows in the process list).
type target struct {
	db, tenant     string
	server, keyEnv string
}

func (tg *target) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&tg.db, "db", defaultDB(), "the service's database (a SQLite file or postgres://...); ignored with --server")
	f.StringVar(&tg.tenant, "tenant", "", "the tenant, with --db (default: the only one, or the open tenant when there is none)")
	f.StringVar(&tg.server, "server", "", "a running scorekit serve (http://HOST:PORT) to call instead of opening --db; the key names the tenant")
	f.StringVar(&tg.keyEnv, "key-env", EnvKey, "with --server: the environment variable holding the API key (scorekit keys create)")
}

// call sends one request to --server and decodes its JSON answer into out; a problem
// answer is an error with the service's detail.
func (tg *target) call(ctx context.Context, method, path, contentType string, body []byte, out any) error {
	u, err := url.Parse(tg.server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--server %q: want the service's base URL, e.g. http://127.0.0.1:8080", tg.server)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(tg.server, "/")+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if key := os.Getenv(tg.keyEnv); key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	client := &http.Client{Timeout: 5 * time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("--server %s: %w", tg.server, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return fmt.Errorf("--server %s: read the answer: %w", tg.server, err)
	}
	if resp.StatusCode >= 300 {
		var p struct {
			Code   string `json:"code"`
			Detail string `json:"detail"`
		}
		if json.Unmarshal(b, &p) == nil && p.Code != "" {
			msg := fmt.Sprintf("--server %s: %s %s: %s (%s)", tg.server, method, path, p.Detail, p.Code)
			if resp.StatusCode == http.StatusUnauthorized {
				msg += fmt.Sprintf("; put the tenant's key (scorekit keys create --tenant NAME) in $%s", tg.keyEnv)
			}
			return fmt.Errorf("%s", msg)
		}
		return fmt.Errorf("--server %s: %s %s: HTTP %d; is it a scorekit service?", tg.server, method, path, resp.StatusCode)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("--server %s: the answer is not what a scorekit service sends (%v)", tg.server, err)
	}
	return nil
}

func (e *env) labelsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "labels", Short: "People's judgements of stored runs, for measuring scorers against them", Args: cobra.NoArgs}
	var tg target
	imp := &cobra.Command{
		Use:   "import FILE|-",
		Short: "Store labels from JSONL; a bad line is reported, the others kept",
		Long: `Store labels from FILE (- reads stdin), one a line:

  {"run_id": "r1", "scorer": "relevancy", "labeller": "ana", "passed": false, "note": "answers another question"}

Each names a stored run of the tenant, the scorer (or a criterion several scorers share),
who labelled it, and exactly one of "passed" (true or false), "score" (0 to 1) or "choice"
(a rubric's choice, optionally with its "score"); "note" is optional. A labeller's label of
a run for a scorer replaces the one they gave before. A bad line is reported as FILE:LINE:
reason and the others are stored; the exit status is then 2.

Against the database (--db, --tenant) like runs import, or a running service (--server
with the key in $SCOREKIT_KEY, or the variable --key-env names).`,
		Example: `  scorekit labels import --tenant acme labels.jsonl
  SCOREKIT_KEY=sk_... scorekit labels import --server http://127.0.0.1:8080 labels.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := readInput(e.stdin, args[0])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var (
				res  service.LabelImportResult
				whom string
			)
			if tg.server != "" {
				err = tg.call(ctx, http.MethodPost, "/v1/labels", "application/x-ndjson", body, &res)
				whom = "server " + tg.server
			} else {
				err = e.withTenant(ctx, tg.db, tg.tenant, func(s *stack, t store.Tenant) (err error) {
					whom = "tenant " + t.Name
					res, err = s.svc.ImportLabels(ctx, t, body)
					return err
				})
			}
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			for _, l := range res.Lines {
				if l.Status == service.LabelRejected {
					fmt.Fprintf(e.stderr, "%s:%d: %s\n", args[0], l.Line, l.Error)
				}
			}
			fmt.Fprintf(e.stdout, "%d stored, %d replaced, %d rejected (%s)\n", res.Stored, res.Replaced, res.Rejected, whom)
			if res.Rejected > 0 {
				return errBadInput
			}
			return nil
		},
	}
	tg.flags(imp)
	cmd.AddCommand(imp)
	return cmd
}

// tenantAgreementOptions are the flags of `scorekit agreement tenant`.
type tenantAgreementOptions struct {
	target
	req          service.AgreementRequest
	json         bool
	show         int
	scoreMissing bool
}

func (e *env) tenantAgreementCommand() *cobra.Command {
	var o tenantAgreementOptions
	cmd := &cobra.Command{
		Use:   "tenant --scorer NAME [flags]",
		Short: "Measure a scorer version against a tenant's own labels in the service",
		Long: `Hold the results a scorer version gave the tenant's labelled runs against the labels
(scorekit labels import, PUT /v1/runs/{id}/labels/{scorer}) and print how well they agree:
for pass/fail labels accuracy, Cohen's kappa, precision and recall of the failure class and
the confusion matrix; for score labels Spearman's rho, Kendall's tau-b and the mean absolute
error; each with its 95% interval and number of runs. Where two people labelled the same
runs, their agreement with each other is printed beside it: the ceiling a scorer can reach.
The disagreements are listed with both sides, and the labelled runs the version has not
scored are counted with the judge cost of scoring them (evaluate them to include them).

Against the database (--db, --tenant), or a running service (--server, key in $SCOREKIT_KEY).`,
		Example: `  scorekit agreement tenant --tenant acme --scorer relevancy
  scorekit agreement tenant --server http://127.0.0.1:8080 --scorer relevancy --version 1.2.0 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.tenantAgreement(cmd.Context(), o)
		},
	}
	o.flags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.req.Scorer, "scorer", "", "the scorer whose results are measured (required)")
	f.StringVar(&o.req.Version, "version", "", "the scorer version (default: the one most recently used on the labelled runs)")
	f.StringVar(&o.req.Criterion, "criterion", "", "compare with the labels of this criterion, one several scorers share (default: the scorer's own labels)")
	f.StringVar(&o.req.Labeller, "labeller", "", "take one person's labels as the reference (default: every labeller's, the majority verdict and the mean score)")
	f.Float64Var(&o.req.Tolerance, "tolerance", 0, "the score difference above which a run is a disagreement (default 0.3)")
	f.BoolVar(&o.json, "json", false, "print the whole answer as JSON")
	f.IntVar(&o.show, "disagreements", 10, "list at most N disagreements (0 for none; --json lists all)")
	f.BoolVar(&o.scoreMissing, "score-missing", false, "after the figures and the judge cost, enqueue the scoring of the labelled runs the service's version has not scored "+
		"(worked by scorekit serve or scorekit worker on the database)")
	_ = cmd.MarkFlagRequired("scorer")
	return cmd
}

func (e *env) tenantAgreement(ctx context.Context, o tenantAgreementOptions) error {
	if o.scoreMissing && o.json {
		return fmt.Errorf("--score-missing prints what it started as text: run it without --json")
	}
	var (
		a   service.ScorerAgreement
		err error
	)
	if o.server != "" {
		q := url.Values{}
		for k, v := range map[string]string{"version": o.req.Version, "criterion": o.req.Criterion, "labeller": o.req.Labeller} {
			if v != "" {
				q.Set(k, v)
			}
		}
		if o.req.Tolerance != 0 {
			q.Set("tolerance", strconv.FormatFloat(o.req.Tolerance, 'g', -1, 64))
		}
		path := "/v1/scorers/" + url.PathEscape(o.req.Scorer) + "/agreement"
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
		err = o.call(ctx, http.MethodGet, path, "", nil, &a)
	} else {
		err = e.withTenant(ctx, o.db, o.tenant, func(s *stack, t store.Tenant) (err error) {
			a, err = s.svc.ScorerAgreement(ctx, t, o.req)
			return err
		})
	}
	if err != nil {
		return err
	}
	if o.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(a)
	}
	if err := writeScorerAgreement(e.stdout, a, o.show); err != nil || !o.scoreMissing {
		return err
	}
	return e.scoreMissing(ctx, o)
}

// scoreMissing enqueues the scoring of the labelled runs the service's version of the
// scorer has not scored, and says how to follow it.
func (e *env) scoreMissing(ctx context.Context, o tenantAgreementOptions) error {
	var (
		res service.ScoreLabelledResult
		err error
	)
	if o.server != "" {
		path := "/v1/scorers/" + url.PathEscape(o.req.Scorer) + "/agreement/score"
		if o.req.Criterion != "" {
			path += "?criterion=" + url.QueryEscape(o.req.Criterion)
		}
		err = o.call(ctx, http.MethodPost, path, "", nil, &res)
	} else {
		err = e.withTenant(ctx, o.db, o.tenant, func(s *stack, t store.Tenant) (err error) {
			res, err = s.svc.ScoreLabelled(ctx, t, o.req.Scorer, o.req.Criterion)
			return err
		})
	}
	if err != nil {
		return err
	}
	if res.Runs == 0 {
		fmt.Fprintf(e.stdout, "\nEvery labelled run has a scored result of %s %s: nothing to score.\n", res.Scorer, res.Version)
		return nil
	}
	fmt.Fprintf(e.stdout, "\nScoring %d labelled runs with %s %s: evaluations %s.\n", res.Runs, res.Scorer, res.Version, strings.Join(res.Evaluations, ", "))
	if o.server == "" {
		fmt.Fprintln(e.stdout, "A running scorekit serve or scorekit worker on this database works them; run this command again when they are done.")
	}
	return nil
}

// writeScorerAgreement prints a ScorerAgreement as tables: the scorer's row, and each two
// labellers' rows beside it.
func writeScorerAgreement(w io.Writer, a service.ScorerAgreement, show int) error {
	ew := &errWriter{w: w}
	version := a.Version
	if version == "" {
		version = "none scored"
	}
	fmt.Fprintf(ew, "Agreement of %s (version %s) with the labels of %q: %d labels of %d runs by %s\n",
		a.Scorer, version, a.Criterion, a.Labels, a.LabelledRuns, strings.Join(a.Labellers, ", "))
	fmt.Fprintln(ew, intervalsNote)
	passFail := agreementRows(a, a.PassFail, func(p service.PeopleAgreement) *agreement.PassFailReport { return p.PassFail },
		func(r *agreement.PassFailReport) string {
			c := r.Confusion
			return fmt.Sprintf("%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d", r.Runs, r.Accuracy, r.Kappa, r.FailPrecision, r.FailRecall,
				c.BothPass, c.BothFail, c.Missed, c.FalseAlarms)
		})
	if err := writeTable(ew, passFailTitle,
		"who\truns\taccuracy\tkappa\tfail precision\tfail recall\tboth pass\tboth fail\tmissed\tfalse alarms", passFail); err != nil {
		return err
	}
	scores := agreementRows(a, a.Scores, func(p service.PeopleAgreement) *agreement.ScoreReport { return p.Scores },
		func(r *agreement.ScoreReport) string {
			return fmt.Sprintf("%d\t%s\t%s\t%s", r.Runs, r.Spearman, r.Kendall, r.MAE)
		})
	if err := writeTable(ew, "Scores", "who\truns\tspearman\tkendall tau-b\tmean abs error", scores); err != nil {
		return err
	}
	if a.PassFail == nil && a.Scores == nil {
		fmt.Fprintf(ew, "\nNo labelled run has a scored result of this version to compare with.\n")
	}
	ns := a.NotScored
	if ns.Runs > 0 {
		fmt.Fprintf(ew, "\nNot scored by this version: %d labelled runs (%d never scored, %d only by other versions, %d skipped, %d failed).\n",
			ns.Runs, ns.NoResult, ns.OtherVersion, ns.Skipped, ns.Failed)
		if ns.NeedsJudge && ns.JudgeCalls > 0 {
			fmt.Fprintf(ew, "Scoring them would take about %.0f judge calls and %.0f tokens (%s).\n", ns.JudgeCalls, ns.Tokens, ns.Basis)
		} else {
			fmt.Fprintf(ew, "Cost: %s.\n", ns.Basis)
		}
	}
	for _, n := range a.Notes {
		fmt.Fprintf(ew, "Note: %s.\n", n)
	}
	if show > 0 && len(a.Disagreements) > 0 {
		fmt.Fprintf(ew, "\nDisagreements (%d; people's verdict, then the scorer's)\n", len(a.Disagreements))
		for i, d := range a.Disagreements {
			if i == show {
				fmt.Fprintf(ew, "  ... %d more (--disagreements N, or --json)\n", len(a.Disagreements)-show)
				break
			}
			fmt.Fprintf(ew, "  %s (%s): people %s, scorer %s: %s\n", d.RunID, d.Agent, verdictText(d.People), verdictText(d.Scorer), clipReason(d.Reason))
		}
	}
	return ew.err
}

// agreementRows are the table rows of one kind of report of a (pass/fail or scores): the
// scorer's against the people's labels, own, then each two labellers' that people picks;
// columns renders a report's columns after the first, who.
func agreementRows[R any](a service.ScorerAgreement, own *R, people func(service.PeopleAgreement) *R, columns func(*R) string) []string {
	var rows []string
	if own != nil {
		rows = append(rows, a.Scorer+" vs people\t"+columns(own))
	}
	for _, p := range a.People {
		if r := people(p); r != nil {
			rows = append(rows, "people: "+p.B+" vs "+p.A+"\t"+columns(r))
		}
	}
	return rows
}

func verdictText(v service.VerdictPair) string {
	var parts []string
	if v.Passed != nil {
		parts = append(parts, passWord(*v.Passed))
	}
	if v.Score != nil {
		parts = append(parts, strconv.FormatFloat(*v.Score, 'f', 2, 64))
	}
	return strings.Join(parts, " ")
}
