package store

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/scorekit/scorekit/internal/service/insights"
)

// TombstoneTTL is how long a deleted run's id is remembered: a retried import (or any
// other ingest) carrying the id within it is not stored again. Retries come within
// minutes or hours; 30 days also covers a batch re-sent by hand after an incident,
// while the table stays bounded (the retention sweep drops older tombstones).
const TombstoneTTL = 30 * 24 * time.Hour

// DeleteBatch is how many runs one deletion transaction removes, with their results: a
// transaction of a few milliseconds, so that writers (on SQLite, every writer waits for
// the one write transaction) are held up by one batch at most, never by a whole
// deletion. 100 by measurement (BENCHMARKS.md, BenchmarkRetentionWithWriters): with
// batches of 500 and no pause between them, writers beside a sweep on SQLite made a
// tenth of their commits, at a p99 of 70-115 ms.
const DeleteBatch = 100

// Deleted counts what a deletion removed.
type Deleted struct {
	Runs        int64 `json:"runs"`
	Results     int64 `json:"results"`
	Evaluations int64 `json:"evaluations"`
	Insights    int64 `json:"insights,omitempty"`
}

func (d *Deleted) add(o Deleted) {
	d.Runs += o.Runs
	d.Results += o.Results
	d.Evaluations += o.Evaluations
	d.Insights += o.Insights
}

// runHash is what a tombstone keeps of a run id.
func runHash(id string) []byte {
	h := sha256.Sum256([]byte(id))
	return h[:]
}

// runByIDSQL finds a run by its id (the unique index on tenant_id, run_id).
const runByIDSQL = `SELECT id, agent FROM runs WHERE tenant_id = $1 AND run_id = $2`

// DeleteRun deletes the tenant's run with id, its results, its place in evaluations (an
// evaluation left with no run goes too) and its examples in insights' evidence, and
// leaves a tombstone so that the id is not stored again within TombstoneTTL. Call it in
// a transaction. A run the tenant does not have is [ErrNotFound].
func (q queries) DeleteRun(ctx context.Context, tenantID int64, id string) (Deleted, error) {
	var (
		pk    int64
		agent string
	)
	err := queryRow(ctx, q.q, runByIDSQL, []any{tenantID, id}, &pk, &agent)
	if err != nil {
		return Deleted{}, notFound(err, "run %q", id)
	}
	d, err := q.deleteRunPKs(ctx, tenantID, []int64{pk})
	if err != nil {
		return d, err
	}
	if _, err := q.q.exec(ctx, `INSERT INTO run_tombstones (tenant_id, run_hash, deleted_at) VALUES ($1, $2, $3)
		ON CONFLICT (tenant_id, run_hash) DO UPDATE SET deleted_at = excluded.deleted_at`, tenantID, runHash(id), micros(time.Now())); err != nil {
		return d, fmt.Errorf("store: delete run %q: tombstone: %w", id, err)
	}
	err = q.scrubEvidence(ctx, tenantID, agent, func(e insights.Example) bool { return e.RunID == id })
	return d, err
}

// Deletion statements, by what they remove; the plan test explains each of them.
const (
	// deleteResultsSQL: the results of some runs (index results_run_scorer).
	deleteResultsSQL = `DELETE FROM results WHERE tenant_id = $1 AND run_pk IN `
	// shrinkEvaluationsSQL takes the runs leaving each evaluation out of its counts, so
	// that an evaluation still running is done when its remaining runs are scored.
	// Expected is runs x scorers, so expected / runs is its number of scorers.
	shrinkEvaluationsSQL = `UPDATE evaluations SET
		expected = expected - (expected / runs) * (SELECT COUNT(*) FROM evaluation_runs er WHERE er.evaluation_id = evaluations.id AND er.run_pk IN %[1]s),
		runs = runs - (SELECT COUNT(*) FROM evaluation_runs er WHERE er.evaluation_id = evaluations.id AND er.run_pk IN %[1]s)
		WHERE tenant_id = $1 AND id IN (SELECT evaluation_id FROM evaluation_runs WHERE run_pk IN %[1]s) RETURNING id, runs`
	deleteEvaluationRunsSQL = `DELETE FROM evaluation_runs WHERE run_pk IN `
	deleteRunsSQL           = `DELETE FROM runs WHERE tenant_id = $1 AND id IN `
)

// deleteRunPKs deletes the tenant's runs with pks and everything that hangs on them;
// their labels go with them (labels.run_pk is ON DELETE CASCADE).
func (q queries) deleteRunPKs(ctx context.Context, tenantID int64, pks []int64) (Deleted, error) {
	var d Deleted
	if len(pks) == 0 {
		return d, nil
	}
	in, args := inList(pks, tenantID)
	var err error
	if d.Results, err = q.q.exec(ctx, deleteResultsSQL+in, args...); err != nil {
		return d, fmt.Errorf("store: delete results: %w", err)
	}
	var emptied []int64
	if err := eachRow(ctx, q.q, fmt.Sprintf(shrinkEvaluationsSQL, in), args, func(s scanner) error {
		var id, runs int64
		if err := s.Scan(&id, &runs); err != nil {
			return err
		}
		if runs <= 0 {
			emptied = append(emptied, id)
		}
		return nil
	}); err != nil {
		return d, fmt.Errorf("store: delete runs: evaluations: %w", err)
	}
	pin, pargs := inList(pks)
	if _, err := q.q.exec(ctx, deleteEvaluationRunsSQL+pin, pargs...); err != nil {
		return d, fmt.Errorf("store: delete runs: evaluation runs: %w", err)
	}
	if d.Runs, err = q.q.exec(ctx, deleteRunsSQL+in, args...); err != nil {
		return d, fmt.Errorf("store: delete runs: %w", err)
	}
	if len(emptied) > 0 {
		ein, eargs := inList(emptied, tenantID)
		if d.Evaluations, err = q.q.exec(ctx, `DELETE FROM evaluations WHERE tenant_id = $1 AND runs <= 0 AND id IN `+ein, eargs...); err != nil {
			return d, fmt.Errorf("store: delete emptied evaluations: %w", err)
		}
	}
	return d, nil
}

// scrubEvidence removes from the evidence of the agent's insights (every agent's when
// agent is "") the example runs drop selects: an insight's evidence names runs and
// quotes their results' reasons, which must not outlive the runs.
func (q queries) scrubEvidence(ctx context.Context, tenantID int64, agent string, drop func(insights.Example) bool) error {
	query, args := `SELECT id, evidence FROM insights WHERE tenant_id = $1`, []any{tenantID}
	if agent != "" {
		query, args = query+` AND agent = $2`, append(args, agent)
	}
	type change struct {
		id       int64
		evidence []byte
	}
	var changes []change
	err := eachRow(ctx, q.q, query, args, func(s scanner) error {
		var (
			id   int64
			body string
		)
		if err := s.Scan(&id, &body); err != nil {
			return err
		}
		var ev map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &ev) != nil || ev["worst"] == nil {
			return nil
		}
		var worst []insights.Example
		if json.Unmarshal(ev["worst"], &worst) != nil {
			return nil
		}
		kept := worst[:0]
		for _, e := range worst {
			if !drop(e) {
				kept = append(kept, e)
			}
		}
		if len(kept) == len(worst) {
			return nil
		}
		if len(kept) == 0 {
			delete(ev, "worst")
		} else {
			var err error
			if ev["worst"], err = json.Marshal(kept); err != nil {
				return err
			}
		}
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		changes = append(changes, change{id, b})
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: scrub insights: %w", err)
	}
	for _, c := range changes {
		if _, err := q.q.exec(ctx, `UPDATE insights SET evidence = $1 WHERE id = $2`, jsonText(c.evidence), c.id); err != nil {
			return fmt.Errorf("store: scrub insights: %w", err)
		}
	}
	return nil
}

// Run selections of the batched deletions. Each takes the tenant ($1), continues after
// the last run of the previous batch (its run_time $2 and id $3), so that a batch reads
// through an index from where the last stopped, never from the start, takes at most $4
// runs, and selects by $5 when it needs to.
const (
	// agentRunsBatchSQL: an agent's runs (index runs_agent_time).
	agentRunsBatchSQL = `SELECT id, run_time FROM runs WHERE tenant_id = $1 AND agent = $5
		AND (run_time > $2 OR (run_time = $2 AND id > $3)) ORDER BY run_time, id LIMIT $4`
	// tenantRunsBatchSQL: every run of the tenant (index runs_tenant_time).
	tenantRunsBatchSQL = `SELECT id, run_time FROM runs WHERE tenant_id = $1
		AND (run_time > $2 OR (run_time = $2 AND id > $3)) ORDER BY run_time, id LIMIT $4`
	// expiredRunsBatchSQL: the tenant's runs older than the retention's cutoff ($5)
	// (index runs_tenant_time), but the labelled ones: labels are the tenant's reference
	// data, and their runs are kept past retention until their labels are deleted (index
	// labels_run). The keyset steps over the runs it keeps, so they cost nothing the next
	// batch.
	expiredRunsBatchSQL = `SELECT r.id, r.run_time FROM runs r WHERE r.tenant_id = $1 AND r.run_time < $5
		AND NOT EXISTS (SELECT 1 FROM labels l WHERE l.run_pk = r.id)
		AND (r.run_time > $2 OR (r.run_time = $2 AND r.id > $3)) ORDER BY r.run_time, r.id LIMIT $4`
)

// DeleteProgress is told, after each batch, what has been deleted so far. Optional.
type DeleteProgress func(Deleted)

// deleteRunsInBatches deletes the runs selection finds, DeleteBatch at a time, each batch
// in a transaction of its own.
// With limit > 0 it stops once it has deleted at least limit runs.
func (s *Store) deleteRunsInBatches(ctx context.Context, tenantID int64, selection string, by any, limit int64, progress DeleteProgress) (Deleted, error) {
	var (
		total   Deleted
		lastAt  int64 = -1 << 62
		lastPK  int64
		pks     []int64
		runTime int64
	)
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		pks = pks[:0]
		began := time.Now()
		err := s.InTx(ctx, func(tx *Tx) error {
			args := []any{tenantID, lastAt, lastPK, DeleteBatch}
			if by != nil {
				args = append(args, by)
			}
			if err := eachRow(ctx, tx.q, selection, args, func(s scanner) error {
				var pk int64
				if err := s.Scan(&pk, &runTime); err != nil {
					return err
				}
				pks = append(pks, pk)
				lastAt, lastPK = runTime, pk
				return nil
			}); err != nil {
				return err
			}
			d, err := tx.deleteRunPKs(ctx, tenantID, pks)
			total.add(d)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("store: delete runs of tenant %d: %w", tenantID, err)
		}
		if progress != nil {
			progress(total)
		}
		s.d.pauseAfterDeletion(ctx, time.Since(began))
		if len(pks) < DeleteBatch || (limit > 0 && total.Runs >= limit) {
			return total, nil
		}
	}
}

// agentDeletes remove what an agent has beside its runs: its evaluations (those that
// selected no run: the others went with their last run), insights, insight series and
// policy. Each takes the tenant ($1) and the agent ($2).
var agentDeletes = []string{
	`DELETE FROM evaluations WHERE tenant_id = $1 AND agent = $2
		AND NOT EXISTS (SELECT 1 FROM evaluation_runs er WHERE er.evaluation_id = evaluations.id)`,
	`DELETE FROM insights WHERE tenant_id = $1 AND agent = $2`,
	`DELETE FROM insight_series WHERE tenant_id = $1 AND agent = $2`,
	`DELETE FROM agent_policies WHERE tenant_id = $1 AND agent = $2`,
}

// DeleteAgent deletes the agent's runs with their results (DeleteBatch runs a
// transaction), then its evaluations, insights, insight series and policy. An agent the
// tenant has nothing of is [ErrNotFound].
func (s *Store) DeleteAgent(ctx context.Context, tenantID int64, agent string, progress DeleteProgress) (Deleted, error) {
	d, err := s.deleteRunsInBatches(ctx, tenantID, agentRunsBatchSQL, agent, 0, progress)
	if err != nil {
		return d, err
	}
	var other int64
	err = s.InTx(ctx, func(tx *Tx) error {
		for i, del := range agentDeletes {
			n, err := tx.q.exec(ctx, del, tenantID, agent)
			if err != nil {
				return err
			}
			switch i {
			case 0:
				d.Evaluations += n
			case 1:
				d.Insights = n
			default:
				other += n
			}
		}
		return nil
	})
	if err != nil {
		return d, fmt.Errorf("store: delete agent %q: %w", agent, err)
	}
	if d.Runs == 0 && d.Evaluations == 0 && d.Insights == 0 && other == 0 {
		return d, fmt.Errorf("agent %q: %w", agent, ErrNotFound)
	}
	return d, nil
}

// ExpireRuns deletes the tenant's runs whose time is before cutoff, with their results
// (DeleteBatch runs a transaction), and the examples of those runs in insights' evidence.
// With limit > 0 it stops after about limit runs (the next call goes on), so that one
// tenant's backlog does not hold up the others'.
func (s *Store) ExpireRuns(ctx context.Context, tenantID int64, cutoff time.Time, limit int64) (Deleted, error) {
	d, err := s.deleteRunsInBatches(ctx, tenantID, expiredRunsBatchSQL, micros(cutoff), limit, nil)
	if err != nil || d.Runs == 0 {
		return d, err
	}
	err = s.InTx(ctx, func(tx *Tx) error {
		return tx.scrubEvidence(ctx, tenantID, "", func(e insights.Example) bool { return e.RunTime.Before(cutoff) })
	})
	return d, err
}

// expireTombstonesSQL: the tombstones older than $1 (index run_tombstones_deleted).
const expireTombstonesSQL = `DELETE FROM run_tombstones WHERE deleted_at < $1`

// ExpireTombstones deletes the tombstones older than TombstoneTTL at now and returns
// how many.
func (q queries) ExpireTombstones(ctx context.Context, now time.Time) (int64, error) {
	return q.q.exec(ctx, expireTombstonesSQL, micros(now.Add(-TombstoneTTL)))
}

// RevokeAllKeys revokes every live key of the tenant and ends its dashboard sessions:
// the first step of its deletion, so that nothing new arrives while it runs.
func (q queries) RevokeAllKeys(ctx context.Context, tenantID int64) (int64, error) {
	n, err := q.q.exec(ctx, `UPDATE api_keys SET revoked_at = $1 WHERE tenant_id = $2 AND revoked_at IS NULL`, micros(time.Now()), tenantID)
	if err != nil {
		return 0, fmt.Errorf("store: revoke keys: %w", err)
	}
	if _, err := q.q.exec(ctx, `DELETE FROM web_sessions WHERE tenant_id = $1`, tenantID); err != nil {
		return 0, fmt.Errorf("store: end sessions: %w", err)
	}
	return n, nil
}

// tenantTables are the tables a tenant's deletion empties of its rows after its runs,
// in an order that respects their references. A table added to the store that holds
// tenant rows must be added here: TestDeleteTenantLeavesNothing lists every table and
// fails on one that still holds a row of the deleted tenant.
var tenantTables = []string{
	"labels", "evaluations", "insights", "insight_series", "insight_settings", "agent_policies",
	"open_spans", "open_logs", "open_traces", "ingest_counts", "tenant_judge_keys", "run_tombstones", "audit_log", "web_sessions", "api_keys",
	"scorer_promotions", "scorer_versions", "scorer_modules", "result_versions",
}

// DeleteTenant deletes everything the tenant owns: its keys are revoked first (and its
// sessions ended) in a transaction of their own, so that nothing new arrives; then its
// runs and results go DeleteBatch runs a transaction; then its evaluations, insights,
// settings, policies, tombstones, audit log, queued jobs, keys and the tenant itself.
// What stays is one audit record (tenant_id NULL) of who deleted the tenant, and when.
func (s *Store) DeleteTenant(ctx context.Context, t Tenant, actor string, progress DeleteProgress) (Deleted, error) {
	if _, err := s.RevokeAllKeys(ctx, t.ID); err != nil {
		return Deleted{}, err
	}
	var d Deleted
	for attempt := 1; ; attempt++ {
		err := s.deleteTenantOnce(ctx, t, actor, progress, &d)
		if err == nil {
			return d, nil
		}
		if attempt == deleteTenantAttempts || !s.wroteMeanwhile(err) || ctx.Err() != nil {
			return d, err
		}
	}
}

// deleteTenantAttempts bounds DeleteTenant's attempts. Its keys are revoked before the
// first, so what can still write is a request let in before and a job already running:
// each attempt leaves fewer of them.
const deleteTenantAttempts = 5

// wroteMeanwhile reports whether err is a tenant deletion's failure on something a
// request or a job wrote while it ran: runs that arrived after the batches, or, on
// PostgreSQL, a row that references the tenant committed after the deletion passed its
// table (a foreign-key violation on the tenant) or a deadlock with that writer. Running
// the deletion again takes them too.
func (s *Store) wroteMeanwhile(err error) bool {
	return errors.Is(err, errRetryDeletion) || s.d.concurrentWrite(err)
}

// deleteTenantOnce is one attempt of DeleteTenant after its keys were revoked, adding
// what it deleted to d.
func (s *Store) deleteTenantOnce(ctx context.Context, t Tenant, actor string, progress DeleteProgress, d *Deleted) error {
	batches, err := s.deleteRunsInBatches(ctx, t.ID, tenantRunsBatchSQL, nil, 0, func(b Deleted) {
		if progress != nil {
			sum := *d
			sum.add(b)
			progress(sum)
		}
	})
	d.add(batches)
	if err != nil {
		return err
	}
	hook := testHookBeforeTenantRow
	testHookBeforeTenantRow = nil
	var rest Deleted // what the transaction deletes, counted once it commits
	err = s.InTx(ctx, func(tx *Tx) error {
		rest = Deleted{}
		var n int64
		// A job of the tenant's that was queued (or running) when its keys were revoked.
		if err := queryRow(ctx, tx.q, `SELECT COUNT(*) FROM runs WHERE tenant_id = $1`, []any{t.ID}, &n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%d runs arrived while the tenant was being deleted (from a request let in before its keys were revoked): %w", n, errRetryDeletion)
		}
		if _, err := tx.q.exec(ctx, s.d.deleteTenantJobsSQL(), t.ID); err != nil {
			return fmt.Errorf("queued jobs: %w", err)
		}
		for _, table := range tenantTables {
			n, err := tx.q.exec(ctx, `DELETE FROM `+table+` WHERE tenant_id = $1`, t.ID)
			if err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
			switch table {
			case "evaluations":
				rest.Evaluations = n
			case "insights":
				rest.Insights = n
			}
		}
		if hook != nil {
			hook()
		}
		if _, err := tx.q.exec(ctx, `DELETE FROM tenants WHERE id = $1`, t.ID); err != nil {
			return err
		}
		all := *d
		all.add(rest)
		return tx.addAudit(ctx, nil, t.Name, AuditEntry{Actor: actor, Action: AuditDeleteTenant, Subject: t.Name}, all)
	})
	if err != nil {
		return fmt.Errorf("store: delete tenant %s: %w", t.Name, err)
	}
	d.add(rest)
	return nil
}

// testHookBeforeTenantRow, set by a test, runs once in a tenant's deletion before its
// row is deleted: where a write that came meanwhile fails the deletion.
var testHookBeforeTenantRow func()

// errRetryDeletion says a deletion met data that arrived meanwhile; running it again
// finishes it.
var errRetryDeletion = errors.New("run the deletion again to finish it")
