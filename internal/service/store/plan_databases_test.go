package store

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// planRuns is how many runs the plan test stores: enough that PostgreSQL's planner, with
// statistics, prefers an index wherever one serves the query (on a few hundred rows it
// reads the whole table, which is then cheaper, and the test would prove nothing).
const (
	planAgents       = 40
	planRunsPerAgent = 1000
	// planEvaluations per agent, each of its planEvaluationRuns newest runs: evaluations
	// and their run lists grow with use like runs do.
	planEvaluations    = 25
	planEvaluationRuns = 50
)

// explainQuerier runs each query twice: first under EXPLAIN (Store.explain), recording
// the plan, then for real. Wrapped around a store's querier, it shows the plan of every
// statement the store's own methods send, with their real arguments, so the test checks
// the queries the service runs rather than copies of them.
type explainQuerier struct {
	s     *Store
	op    *string
	plans *[]statementPlan
}

type statementPlan struct {
	op, sql string
	plan    []string
}

func (e explainQuerier) exec(ctx context.Context, q string, args ...any) (int64, error) {
	return e.s.q.exec(ctx, q, args...)
}

func (e explainQuerier) query(ctx context.Context, q string, args ...any) (rows, error) {
	plan, err := e.s.explain(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("explain %s: %w", *e.op, err)
	}
	for i := range plan {
		plan[i] = strings.TrimSpace(plan[i])
	}
	*e.plans = append(*e.plans, statementPlan{op: *e.op, sql: strings.Join(strings.Fields(q), " "), plan: plan})
	return e.s.q.query(ctx, q, args...)
}

// fullScan finds a step that reads a whole table the service grows without bound: SQLite's
// "SCAN t" (with or without a covering index: both read every row), PostgreSQL's "Seq
// Scan on t". Tables that stay small may be scanned: tenants, keys, settings, and the
// insights, which grow with changes in an agent's quality (a few a week), not with runs.
var fullScan = map[string]*regexp.Regexp{
	SQLite:   regexp.MustCompile(`^SCAN (runs|results|evaluations|evaluation_runs)\b`),
	Postgres: regexp.MustCompile(`Seq Scan on (runs|results|evaluations|evaluation_runs)\b`),
}

// TestServiceQueriesUseIndexes runs the queries behind the service's pages and jobs (an
// agent's last N runs, a page of its runs, an evaluation's summary and results, the
// insight engine's window) through the store's own methods on both databases, with a store
// of 44,000 runs, 21,000 evaluations and their results, and fails when a plan reads a whole growing table: a
// change that turns an index read into a scan fails CI without anything being timed.
func TestServiceQueriesUseIndexes(t *testing.T) {
	for _, database := range []string{SQLite, Postgres} {
		t.Run(database, func(t *testing.T) {
			ctx := context.Background()
			s := openEmptyStore(t, database)
			fx := fillForPlans(t, s)
			var (
				op    string
				plans []statementPlan
			)
			q := queries{q: explainQuerier{s: s, op: &op, plans: &plans}, d: s.d}
			do := func(name string, f func() error) {
				op = name
				if err := f(); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			agent := "agent-07"
			var last []int64
			do("an agent's last N runs (evaluations)", func() (err error) {
				last, err = q.RunPKs(ctx, fx.tenant, RunQuery{Agent: agent, Limit: 100})
				return err
			})
			if len(last) != 100 {
				t.Fatalf("last N: %d runs, want 100", len(last))
			}
			var page []Run
			do("a page of an agent's runs", func() (err error) {
				page, err = q.Runs(ctx, fx.tenant, RunQuery{Agent: agent, Limit: 50})
				return err
			})
			do("the next page", func() error {
				_, err := q.Runs(ctx, fx.tenant, RunQuery{Agent: agent, Limit: 50, After: &page[len(page)-1]})
				return err
			})
			do("an agent's runs since a time", func() error {
				_, err := q.RunPKs(ctx, fx.tenant, RunQuery{Agent: agent, Since: fx.start.Add(500 * time.Hour), Limit: 100})
				return err
			})
			do("one run by id", func() error { _, err := q.Run(ctx, fx.tenant, page[3].ID); return err })
			do("runs by id (import duplicates)", func() error {
				_, err := q.RunsByID(ctx, fx.tenant, []string{page[0].ID, page[1].ID, "absent"})
				return err
			})
			do("runs by pk (a job's chunk)", func() error { _, err := q.RunsByPK(ctx, fx.tenant, last[:50]); return err })
			do("an evaluation's runs", func() error { _, err := q.EvaluationRuns(ctx, fx.tenant, fx.evaluation); return err })
			do("an evaluation's summary", func() error { _, err := q.Tallies(ctx, fx.evaluation); return err })
			do("an evaluation's result count", func() error { _, err := q.CountResults(ctx, fx.evaluation); return err })
			do("a page of an evaluation's results", func() error {
				_, err := q.EvaluationResultsPage(ctx, fx.tenant, fx.evaluation, 0, 50)
				return err
			})
			do("results already stored (a retried job)", func() error {
				_, err := q.StoredResults(ctx, fx.evaluation, last[:50])
				return err
			})
			do("a run's results", func() error { _, err := q.RunResults(ctx, fx.tenant, last[0]); return err })
			do("the latest results of a page of runs", func() error {
				_, err := q.LatestResults(ctx, fx.tenant, last[:50])
				return err
			})
			do("the insight engine's window", func() error {
				_, err := q.SeriesResults(ctx, fx.tenant, agent, "prescreen", 200, true)
				return err
			})
			do("an agent's insights", func() error {
				_, err := q.Insights(ctx, fx.tenant, InsightQuery{Agent: agent, Limit: 50})
				return err
			})
			do("an agent's evaluations", func() error { _, err := q.Evaluations(ctx, fx.tenant, agent, 20); return err })
			for _, p := range plans {
				for _, step := range p.plan {
					if fullScan[database].MatchString(step) {
						t.Errorf("%s reads a whole table:\n  %s\nplan:\n  %s", p.op, p.sql, strings.Join(p.plan, "\n  "))
						break
					}
				}
			}
			if testing.Verbose() {
				for _, p := range plans {
					t.Logf("%s:\n  %s", p.op, strings.Join(p.plan, "\n  "))
				}
			}
		})
	}
}

type planFixture struct {
	tenant, evaluation int64
	start              time.Time
}

// fillForPlans stores two tenants' runs (the second a tenth the size, so a tenant's rows
// are a real share of the table), evaluations of the first's agents' newest runs with a
// result per run, and statistics.
func fillForPlans(t *testing.T, s *Store) planFixture {
	t.Helper()
	ctx := context.Background()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	body := func(i int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"id":"run-%06d","input":"Where is order %d?","output":"Order %d ships on Monday."}`, i, i, i))
	}
	fx := planFixture{start: start}
	for ti, name := range []string{"plan-a", "plan-b"} {
		tn, err := s.CreateTenant(ctx, name, Policy{})
		if err != nil {
			t.Fatal(err)
		}
		perAgent := planRunsPerAgent
		if ti == 1 {
			perAgent /= 10
		}
		var pks []int64
		var batch []NewRun
		flush := func() {
			got, err := s.PutRuns(ctx, tn.ID, batch)
			if err != nil {
				t.Fatal(err)
			}
			pks = append(pks, got...)
			batch = batch[:0]
		}
		for i := range planAgents * perAgent {
			batch = append(batch, NewRun{ID: fmt.Sprintf("run-%06d", i), Agent: fmt.Sprintf("agent-%02d", i%planAgents),
				Time: start.Add(time.Duration(i) * time.Minute), Body: body(i)})
			if len(batch) == runBatch {
				flush()
			}
		}
		flush()
		if ti != 0 {
			// The second tenant's history: many small evaluations (one per arriving run, as
			// arrival policies made them), so the evaluations table is as large next to an
			// agent's as it gets in use. Inserted in one statement; their runs do not matter.
			if _, err := s.q.exec(ctx, `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 20000)
				INSERT INTO evaluations (public_id, tenant_id, agent, trigger, spec, runs, expected, created_at)
				SELECT 'ev_fill_' || n, $1, 'agent-' || (n % 40), 'arrival', '{}', 1, 1, 0 FROM g`, tn.ID); err != nil {
				t.Fatal(err)
			}
			continue
		}
		fx.tenant = tn.ID
		// Evaluations of each agent's newest runs, as the service makes them; each run of
		// the newest has a result per evaluation.
		for a := range planAgents {
			var runs []int64
			for i := len(pks) - planAgents + a; i >= 0 && len(runs) < planEvaluationRuns; i -= planAgents {
				runs = append(runs, pks[i])
			}
			for e := range planEvaluations {
				ev, err := s.CreateEvaluation(ctx, NewEvaluation{TenantID: tn.ID, Agent: fmt.Sprintf("agent-%02d", a), Trigger: "request",
					Spec: Spec{Scorers: []ScorerRef{{Name: "prescreen", Version: "1"}}}, RunPKs: runs})
				if err != nil {
					t.Fatal(err)
				}
				if a == 7 && e == planEvaluations-1 {
					fx.evaluation = ev.PK
				}
				var results []Result
				for j, pk := range runs {
					score, passed := float64(j%10)/10, j%10 >= 3
					results = append(results, Result{TenantID: tn.ID, EvaluationPK: ev.PK, RunPK: pk, Scorer: "prescreen", ScorerVersion: "1",
						Status: "scored", Score: &score, Passed: &passed, Body: json.RawMessage(`{"status":"scored"}`)})
				}
				if _, err := s.InsertResults(ctx, results); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	analyze := `ANALYZE`
	if _, err := s.q.exec(ctx, analyze); err != nil {
		t.Fatal(err)
	}
	return fx
}
