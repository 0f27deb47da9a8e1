package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// planFill gives a store rows enough that each database's planner prefers an index where
// one serves: 2,000 tenants (two keys, a judge key, five agent policies and series each), 50 of them
// with 40,000 runs over 10 agents, 4,000 evaluations, 80,000 results, 5,000 tombstones
// and audit records, 2,000 labels, spans and log records of open traces and open traces, three OTLP counters per tenant, 1,000 insights and sessions. Statistics are then gathered, as
// autovacuum (PostgreSQL) or `PRAGMA optimize` (SQLite) would.
var planFill = map[string][]string{
	SQLite: {
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
		 INSERT INTO tenants (id, name, created_at) SELECT i, 't' || i, 0 FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40000)
		 INSERT INTO runs (id, tenant_id, run_id, agent, run_time, received_at, body)
		 SELECT i, 1 + i % 50, 'r' || i, 'agent-' || (i / 50 % 10), i * 1000, i, '{}' FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 4000)
		 INSERT INTO evaluations (id, public_id, tenant_id, agent, trigger, spec, runs, expected, created_at)
		 SELECT i, 'ev' || i, 1 + i % 50, 'agent-' || (i / 50 % 10), 'arrival', '{}', 10, 20, i FROM n`,
		`INSERT INTO evaluation_runs (evaluation_id, run_pk, position) SELECT 1 + (id - 1) / 10, id, id % 10 FROM runs`,
		`INSERT INTO results (tenant_id, evaluation_id, run_pk, scorer, scorer_version, status, result, created_at)
		 SELECT tenant_id, 1 + (id - 1) / 10, id, s.name, '1', 'scored', '{}', id FROM runs, (SELECT 'a' AS name UNION ALL SELECT 'b') s`,
		`INSERT INTO run_tombstones (tenant_id, run_hash, deleted_at) SELECT 1 + id % 50, randomblob(32), id FROM runs WHERE id <= 5000`,
		`INSERT INTO audit_log (tenant_id, tenant_name, actor, action, subject, at) SELECT 1 + id % 50, 't', 'cli', 'delete_run', 'r', id FROM runs WHERE id <= 5000`,
		`INSERT INTO insights (public_id, tenant_id, agent, scorer, kind, severity, title, evidence, opened_at, updated_at, resolved_at)
		 SELECT 'in' || id, 1 + id % 50, 'agent-' || (id / 50 % 10), 'a', 'quality', 'warning', 't', '{}', id, id, id FROM runs WHERE id <= 1000`,
		`INSERT INTO web_sessions (hash, tenant_id, created_at, expires_at) SELECT randomblob(32), 1 + id % 50, id, id FROM runs WHERE id <= 1000`,
		`INSERT INTO labels (tenant_id, run_pk, scorer, labeller, passed, created_at, updated_at) SELECT tenant_id, id, 'a', 'ann', 1, 0, 0 FROM runs WHERE id % 20 = 0`,
		`INSERT INTO open_spans (tenant_id, trace_id, span_id, parent_span_id, agent, span, received_at, expires_at)
		 SELECT tenant_id, 't' || id, 's' || id, '', 0, x'00', 0, 0 FROM runs WHERE id <= 2000`,
		`INSERT INTO api_keys (tenant_id, hash, prefix, created_at) SELECT id, randomblob(32), 'sk_', 0 FROM tenants, (SELECT 1 UNION ALL SELECT 2)`,
		`INSERT INTO insight_settings (tenant_id, updated_at) SELECT id, 0 FROM tenants`,
		`INSERT INTO tenant_judge_keys (tenant_id, endpoint, sealed, updated_at) SELECT id, 'default', x'00', 0 FROM tenants`,
		`INSERT INTO agent_policies (tenant_id, agent, policy, updated_at) SELECT t.id, 'agent-' || a.i, '{}', 0 FROM tenants t,
		 (SELECT 0 AS i UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4) a`,
		`INSERT INTO insight_series (tenant_id, agent, scorer, changed_at) SELECT tenant_id, agent, 'a', 0 FROM agent_policies`,
		`INSERT INTO scorer_versions (tenant_id, name, version, kind, digest, created_at) SELECT id, 's', 1, 'configured', 'd', 0 FROM tenants`,
		`INSERT INTO scorer_promotions (tenant_id, name, version, promoted_at) SELECT id, 's', 1, 0 FROM tenants`,
		`INSERT INTO scorer_modules (tenant_id, digest, module, size, created_at) SELECT id, 'd', x'00', 1, 0 FROM tenants`,
		`INSERT INTO result_versions (tenant_id, scorer, scorer_version, first_evaluation_id)
		 SELECT t.id, s.name, v.v, 1 FROM tenants t, (SELECT 'a' AS name UNION ALL SELECT 'b') s, (SELECT '1' AS v UNION ALL SELECT '2') v`,
		`INSERT INTO open_logs (tenant_id, trace_id, span_id, event_name, time_nanos, body_hash, seq, record, received_at, expires_at)
		 SELECT tenant_id, 't' || id, 's' || id, 'gen_ai.choice', id, 'h', 0, x'00', 0, 0 FROM runs WHERE id <= 2000`,
		`INSERT INTO open_traces (tenant_id, trace_id, rooted, last_at, done, expires_at) SELECT tenant_id, 't' || id, 0, id, 0, id FROM runs WHERE id <= 2000`,
		`INSERT INTO ingest_counts (tenant_id, name, count, examples) SELECT t.id, c.name, 1, '' FROM tenants t,
		 (SELECT 'spans' AS name UNION ALL SELECT 'runs' UNION ALL SELECT 'ignored') c`,
		`ANALYZE`,
	},
	Postgres: {
		`INSERT INTO tenants (id, name, created_at) OVERRIDING SYSTEM VALUE SELECT i, 't' || i, 0 FROM generate_series(1, 2000) i`,
		`INSERT INTO runs (id, tenant_id, run_id, agent, run_time, received_at, body) OVERRIDING SYSTEM VALUE
		 SELECT i, 1 + i % 50, 'r' || i, 'agent-' || (i / 50 % 10), i * 1000, i, '{}' FROM generate_series(1, 40000) i`,
		`INSERT INTO evaluations (id, public_id, tenant_id, agent, trigger, spec, runs, expected, created_at) OVERRIDING SYSTEM VALUE
		 SELECT i, 'ev' || i, 1 + i % 50, 'agent-' || (i / 50 % 10), 'arrival', '{}', 10, 20, i FROM generate_series(1, 4000) i`,
		`INSERT INTO evaluation_runs (evaluation_id, run_pk, position) SELECT 1 + (id - 1) / 10, id, id % 10 FROM runs`,
		`INSERT INTO results (tenant_id, evaluation_id, run_pk, scorer, scorer_version, status, result, created_at)
		 SELECT tenant_id, 1 + (id - 1) / 10, id, s.name, '1', 'scored', '{}', id FROM runs, (VALUES ('a'), ('b')) s(name)`,
		`INSERT INTO run_tombstones (tenant_id, run_hash, deleted_at) SELECT 1 + id % 50, sha256(id::text::bytea), id FROM runs WHERE id <= 5000`,
		`INSERT INTO audit_log (tenant_id, tenant_name, actor, action, subject, at) SELECT 1 + id % 50, 't', 'cli', 'delete_run', 'r', id FROM runs WHERE id <= 5000`,
		`INSERT INTO insights (public_id, tenant_id, agent, scorer, kind, severity, title, evidence, opened_at, updated_at, resolved_at)
		 SELECT 'in' || id, 1 + id % 50, 'agent-' || (id / 50 % 10), 'a', 'quality', 'warning', 't', '{}', id, id, id FROM runs WHERE id <= 1000`,
		`INSERT INTO web_sessions (hash, tenant_id, created_at, expires_at) SELECT sha256(id::text::bytea), 1 + id % 50, id, id FROM runs WHERE id <= 1000`,
		`INSERT INTO labels (tenant_id, run_pk, scorer, labeller, passed, created_at, updated_at) SELECT tenant_id, id, 'a', 'ann', true, 0, 0 FROM runs WHERE id % 20 = 0`,
		`INSERT INTO open_spans (tenant_id, trace_id, span_id, parent_span_id, agent, span, received_at, expires_at)
		 SELECT tenant_id, 't' || id, 's' || id, '', false, '\x00', 0, 0 FROM runs WHERE id <= 2000`,
		`INSERT INTO api_keys (tenant_id, hash, prefix, created_at) SELECT id, sha256((id * 10 + k)::text::bytea), 'sk_', 0 FROM tenants, generate_series(1, 2) k`,
		`INSERT INTO insight_settings (tenant_id, updated_at) SELECT id, 0 FROM tenants`,
		`INSERT INTO tenant_judge_keys (tenant_id, endpoint, sealed, updated_at) SELECT id, 'default', '\x00', 0 FROM tenants`,
		`INSERT INTO agent_policies (tenant_id, agent, policy, updated_at) SELECT t.id, 'agent-' || a, '{}', 0 FROM tenants t, generate_series(0, 4) a`,
		`INSERT INTO insight_series (tenant_id, agent, scorer, changed_at) SELECT tenant_id, agent, 'a', 0 FROM agent_policies`,
		`INSERT INTO scorer_versions (tenant_id, name, version, kind, digest, created_at) SELECT id, 's', 1, 'configured', 'd', 0 FROM tenants`,
		`INSERT INTO scorer_promotions (tenant_id, name, version, promoted_at) SELECT id, 's', 1, 0 FROM tenants`,
		`INSERT INTO scorer_modules (tenant_id, digest, module, size, created_at) SELECT id, 'd', '\x00', 1, 0 FROM tenants`,
		`INSERT INTO result_versions (tenant_id, scorer, scorer_version, first_evaluation_id)
		 SELECT t.id, s.name, v.v, 1 FROM tenants t, (VALUES ('a'), ('b')) s(name), (VALUES ('1'), ('2')) v(v)`,
		`INSERT INTO open_logs (tenant_id, trace_id, span_id, event_name, time_nanos, body_hash, seq, record, received_at, expires_at)
		 SELECT tenant_id, 't' || id, 's' || id, 'gen_ai.choice', id, 'h', 0, '\x00', 0, 0 FROM runs WHERE id <= 2000`,
		`INSERT INTO open_traces (tenant_id, trace_id, rooted, last_at, done, expires_at) SELECT tenant_id, 't' || id, false, id, false, id FROM runs WHERE id <= 2000`,
		`INSERT INTO ingest_counts (tenant_id, name, count, examples) SELECT t.id, c.name, 1, '' FROM tenants t, (VALUES ('spans'), ('runs'), ('ignored')) c(name)`,
		`ANALYZE`,
	},
}

// The retention and deletion statements read and delete through indexes on a store of
// many tenants: one batch of a deletion touches its own rows, never a whole table, which
// is what keeps each of its transactions short beside the writers it runs among. On
// SQLite a plan step "SCAN t" walks table t in full; on PostgreSQL, "Seq Scan on t".
func TestRetentionQueriesUseIndexes(t *testing.T) {
	ctx := context.Background()
	for _, database := range []string{SQLite, Postgres} {
		t.Run(database, func(t *testing.T) {
			s := openEmptyStore(t, database)
			for _, q := range planFill[database] {
				if _, err := s.q.exec(ctx, q); err != nil {
					t.Fatalf("fill: %v\n%s", err, q)
				}
			}
			// A batch is DeleteBatch runs of millions (0.005% of 10 million); at this
			// size a tenth of a batch is the closer share (0.125% of 40,000), and what
			// the planner weighs is the share.
			pks := make([]int64, DeleteBatch/10)
			hashes := make([][]byte, DeleteBatch/10)
			for i := range pks {
				pks[i] = int64(1 + i*50) // tenant 2's runs
				hashes[i] = runHash(fmt.Sprint("r", pks[i]))
			}
			in, args := inList(pks, int64(2))
			pin, pargs := inList(pks)
			hin, hargs := inList(hashes, int64(2))
			cases := []struct {
				name  string
				query string
				args  []any
			}{
				{"a run by id", runByIDSQL, []any{2, "r51"}},
				{"results of a batch of runs", deleteResultsSQL + in, args},
				{"evaluations shrunk by a batch", fmt.Sprintf(shrinkEvaluationsSQL, in), args},
				{"evaluation runs of a batch", deleteEvaluationRunsSQL + pin, pargs},
				{"runs of a batch", deleteRunsSQL + in, args},
				{"a batch of an agent's runs", agentRunsBatchSQL, []any{2, 5000, 2, DeleteBatch, "agent-3"}},
				{"a batch of a tenant's runs", tenantRunsBatchSQL, []any{2, 5000, 2, DeleteBatch}},
				{"a batch of expired runs", expiredRunsBatchSQL, []any{2, 5000, 2, DeleteBatch, 20_000_000}},
				{"tombstones of a batch of ids", tombstonesSQL + hin, hargs},
				{"expired tombstones", expireTombstonesSQL, []any{100}},
				{"a page of the audit log", auditLogSQL, []any{2, int64(1) << 62, 50}},
				{"export: a page of runs", exportRunsSQL, []any{2, 5000, 2, exportPage}},
				{"export: the results of a page of runs", exportResultsSQL + in + ` ORDER BY res.id`, args},
				{"export: a page of evaluations", exportEvaluationsSQL, []any{2, 0, exportPage}},
				{"export: a page of insights", exportInsightsSQL, []any{2, 0, exportPage}},
				{"export: agent policies", exportPoliciesSQL, []any{2}},
				{"export: scorer versions", publishedVersionsSQL, []any{2, ""}},
				{"export: scorer promotions", exportPromotionsSQL, []any{2}},
				{"export: scorer modules", exportModulesSQL, []any{2}},
			}
			for i, q := range agentDeletes {
				cases = append(cases, struct {
					name  string
					query string
					args  []any
				}{fmt.Sprintf("agent deletion %d", i), q, []any{2, "agent-3"}})
			}
			for _, table := range tenantTables {
				cases = append(cases, struct {
					name  string
					query string
					args  []any
				}{"a tenant's " + table, `DELETE FROM ` + table + ` WHERE tenant_id = $1`, []any{2}})
			}
			for _, c := range cases {
				plan, err := s.explain(ctx, c.query, c.args...)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				for _, step := range plan {
					if full := scannedTable(database, step); full != "" {
						t.Errorf("%s reads all of %s:\n  %s", c.name, full, strings.Join(plan, "\n  "))
						break
					}
				}
			}
		})
	}
}

// scannedTable returns the table a plan step reads in full, or "" (every table: each
// deletion statement reads by an index, however small the table).
func scannedTable(database, step string) string {
	if database == Postgres {
		if _, after, ok := strings.Cut(step, "Seq Scan on "); ok {
			return strings.Fields(after)[0]
		}
		return ""
	}
	if strings.HasPrefix(step, "SCAN ") && !strings.HasPrefix(step, "SCAN CONSTANT") {
		return strings.Fields(step)[1]
	}
	return ""
}
