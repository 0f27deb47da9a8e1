package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
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
	if _, err := s.sqlDB.ExecContext(ctx, `ANALYZE`); err != nil {
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
		rows, err := s.sqlDB.QueryContext(ctx, "EXPLAIN QUERY PLAN "+c.query, c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN ") && !strings.HasPrefix(step, "SCAN CONSTANT") {
				t.Errorf("%s scans a whole table:\n  %s", c.name, strings.Join(plan, "\n  "))
				break
			}
		}
	}
}
