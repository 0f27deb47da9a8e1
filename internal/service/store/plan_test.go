package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/pgtest"
)

// The dashboard's and the insight engine's queries read through indexes, never a scan of
// a whole table: what keeps a page of an agent with 10,000 runs as fast as one with 10.
// SQLite's plan says SCAN for a table walked in full; SEARCH for an index lookup.
func TestQueriesUseIndexes(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Statistics as a store with many runs per agent would have them.
	if _, err := s.q.exec(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	insights := func(iq InsightQuery) (string, []any) { return insightsSQL(1, iq) }
	cases := []struct {
		name  string
		query string
		args  []any
	}{
		{"series results (insight update, trend)", seriesResultsSQL, []any{1, "a", "prescreen", 200}},
		{"an evaluation's page of results", evaluationResultsPageSQL, []any{1, 1, 0, 50}},
		{"a scorer's latest results (the review queue)", recentResultsSQL, []any{1, "prescreen", 2000}},
		{"the latest results of labelled runs (agreement)", labelledResultsSQL, []any{1, "relevancy", "relevancy", "1.0.0"}},
	}
	for _, iq := range []InsightQuery{{Limit: 50}, {Agent: "a", Limit: 50}, {Severity: "critical", Limit: 50, Before: 10}, {All: true, Agent: "a", Limit: 50}} {
		q, args := insights(iq)
		cases = append(cases, struct {
			name  string
			query string
			args  []any
		}{"insights " + strings.Join(strings.Fields(q[strings.Index(q, "WHERE"):]), " "), q, args})
	}
	for _, c := range cases {
		plan := explain(t, s, c.query, c.args)
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN ") && !strings.HasPrefix(step, "SCAN CONSTANT") {
				t.Errorf("%s scans a whole table:\n  %s", c.name, strings.Join(plan, "\n  "))
				break
			}
		}
	}
}

// The queries of arrivals read through their indexes on both databases, on enough rows that
// a planner prefers an index to a scan: finding an agent's open arrival evaluation among
// thousands (evaluations_open_arrival), and reading a chunk of an evaluation with its
// stored results (evaluation_runs_position, the runs' key, results' unique key). A
// change that turns one into a scan fails here without timing anything.
func TestArrivalQueriesUseIndexes(t *testing.T) {
	for _, database := range []string{SQLite, Postgres} {
		t.Run(database, func(t *testing.T) {
			ctx := context.Background()
			s, ten := openTestStore(t, database)
			// 50,000 runs of 50 agents; 2,000 evaluations of 25 runs each, one open per
			// agent; two results per run.
			series := func(n int) string {
				if database == Postgres {
					return fmt.Sprintf("generate_series(1, %d) AS n(i)", n)
				}
				return fmt.Sprintf("(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < %d) SELECT i FROM n) AS n", n)
			}
			fill := []string{
				`INSERT INTO runs (tenant_id, run_id, agent, run_time, received_at, body) SELECT $1, 'r' || i, 'a' || (i % 50), i, i, '{}' FROM ` + series(50000),
				`INSERT INTO evaluations (public_id, tenant_id, agent, trigger, spec, runs, expected, created_at, open)
					SELECT 'ev' || i, $1, 'a' || (i % 50), 'arrival', '{"scorers":[]}', 25, 50, i, CASE WHEN i > 1950 THEN 1 ELSE 0 END FROM ` + series(2000),
				`INSERT INTO evaluation_runs (evaluation_id, run_pk, position)
					SELECT e.id, r.id, (r.id - 1) % 25 FROM runs r JOIN evaluations e ON e.public_id = 'ev' || (1 + (r.id - 1) / 25)`,
				`INSERT INTO results (tenant_id, evaluation_id, run_pk, scorer, scorer_version, status, result, created_at)
					SELECT $1, er.evaluation_id, er.run_pk, sc.name, '1', 'scored', '{}', 0
					FROM evaluation_runs er CROSS JOIN (SELECT 'prescreen' AS name UNION ALL SELECT 'completeness') sc`,
			}
			for _, q := range fill {
				args := []any{ten.ID}
				if !strings.Contains(q, "$1") {
					args = nil
				}
				if _, err := s.q.exec(ctx, q, args...); err != nil {
					t.Fatalf("fill: %v\n%s", err, q)
				}
			}
			if _, err := s.q.exec(ctx, `ANALYZE`); err != nil {
				t.Fatal(err)
			}
			var evPK int64
			if err := queryRow(ctx, s.q, `SELECT id FROM evaluations WHERE public_id = 'ev1000'`, nil, &evPK); err != nil {
				t.Fatal(err)
			}
			cases := []struct {
				name, query string
				args        []any
				index       string // the index the plan must name
			}{
				{"an agent's open arrival evaluation", openArrivalSQL, []any{ten.ID, "a7"}, "evaluations_open_arrival"},
				{"a chunk's runs with their stored results", chunkRunsSQL, []any{evPK, 0, 25, ten.ID}, "evaluation_runs_position"},
			}
			for _, c := range cases {
				plan := explain(t, s, c.query, c.args)
				text := strings.Join(plan, "\n  ")
				t.Logf("%s:\n  %s", c.name, text)
				if !strings.Contains(text, c.index) {
					t.Errorf("%s does not use %s:\n  %s", c.name, c.index, text)
				}
				for _, step := range plan {
					if (database == SQLite && strings.HasPrefix(strings.TrimSpace(step), "SCAN ")) || strings.Contains(step, "Seq Scan") {
						t.Errorf("%s scans a whole table:\n  %s", c.name, text)
						break
					}
				}
			}
		})
	}
}

// explain returns the database's plan of q, one step a line (explainer).
func (s *Store) explain(ctx context.Context, q string, args ...any) ([]string, error) {
	return s.d.(explainer).explain(ctx, q, args...)
}

// explainer is a dialect's EXPLAIN: the plan of q, one step a line.
type explainer interface {
	explain(ctx context.Context, q string, args ...any) ([]string, error)
}

func (d *postgresDialect) explain(ctx context.Context, q string, args ...any) ([]string, error) {
	var plan []string
	rs, err := d.p.Query(ctx, "EXPLAIN "+q, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	for rs.Next() {
		var line string
		if err := rs.Scan(&line); err != nil {
			return nil, err
		}
		plan = append(plan, line)
	}
	return plan, rs.Err()
}

func (d *sqliteDialect) explain(ctx context.Context, q string, args ...any) ([]string, error) {
	var plan []string
	rs, err := d.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	for rs.Next() {
		var id, parent, unused int
		var detail string
		if err := rs.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		plan = append(plan, detail)
	}
	return plan, rs.Err()
}

// explain returns the database's plan of query, one step a line, failing t on an error.
func explain(t *testing.T, s *Store, query string, args []any) []string {
	t.Helper()
	plan, err := s.explain(context.Background(), query, args...)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// openEmptyStore opens a fresh, empty store on database (a SQLite file, or a database of the
// shared PostgreSQL cluster), closed when t ends.
func openEmptyStore(t *testing.T, database string) *Store {
	t.Helper()
	dsn := filepath.Join(t.TempDir(), "store.db")
	if database == Postgres {
		dsn = pgtest.Shared(t).Database(t)
	}
	s, err := Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// openTestStore opens a fresh store on database (openEmptyStore) with a tenant acme.
func openTestStore(t *testing.T, database string) (*Store, Tenant) {
	t.Helper()
	s := openEmptyStore(t, database)
	ten, err := s.CreateTenant(context.Background(), "acme", Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return s, ten
}
