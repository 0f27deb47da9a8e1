package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// openArrivalSQL finds an agent's open arrival evaluation: the partial unique index
// evaluations_open_arrival answers it.
const openArrivalSQL = `SELECT ` + evalCols + ` FROM evaluations WHERE tenant_id = $1 AND agent = $2 AND open = 1`

// OpenArrival returns the agent's open arrival evaluation, or ErrNotFound. On PostgreSQL
// the row stays locked until tx ends, so concurrent imports of the agent join it one
// after the other; SQLite's writers take turns already. The lock is FOR NO KEY UPDATE:
// it does not keep the jobs' results, whose foreign key takes a key-share lock on the
// row, from being written meanwhile.
func (tx *Tx) OpenArrival(ctx context.Context, tenantID int64, agent string) (Evaluation, error) {
	e, err := first(ctx, tx.q, openArrivalSQL+tx.d.rowLock(), []any{tenantID, agent}, scanEvaluation)
	if errors.Is(err, sql.ErrNoRows) {
		return Evaluation{}, fmt.Errorf("open arrival evaluation of %q: %w", agent, ErrNotFound)
	}
	if err != nil {
		return Evaluation{}, fmt.Errorf("store: open arrival evaluation of %q: %w", agent, err)
	}
	return e, nil
}

// CreateArrival opens an arrival evaluation of the agent, with no runs yet. It returns
// ErrExists when another transaction opened one first (PostgreSQL): OpenArrival finds it.
func (tx *Tx) CreateArrival(ctx context.Context, tenantID int64, agent string, spec Spec) (Evaluation, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return Evaluation{}, err
	}
	now := time.Now()
	e := Evaluation{ID: newPublicID(), TenantID: tenantID, Agent: agent, Trigger: TriggerArrival, Spec: spec,
		CreatedAt: fromMicros(micros(now)), Open: true}
	err = queryRow(ctx, tx.q, `INSERT INTO evaluations (public_id, tenant_id, agent, trigger, spec, runs, expected, created_at, open)
		VALUES ($1, $2, $3, $4, $5, 0, 0, $6, 1)
		ON CONFLICT (tenant_id, agent) WHERE open = 1 DO NOTHING RETURNING id`,
		[]any{e.ID, tenantID, agent, TriggerArrival, jsonText(b), micros(now)}, &e.PK)
	if errors.Is(err, sql.ErrNoRows) {
		return Evaluation{}, fmt.Errorf("store: open an arrival evaluation of %q: %w", agent, ErrExists)
	}
	if err != nil {
		return Evaluation{}, fmt.Errorf("store: open an arrival evaluation of %q: %w", agent, err)
	}
	return e, nil
}

// AddArrivalRuns adds runPKs to the arrival evaluation evalPK at positions from,
// from+1, ...: the places its runs were counted in (UpdateArrival stores the counts).
func (tx *Tx) AddArrivalRuns(ctx context.Context, evalPK, from int64, runPKs []int64) error {
	if err := tx.insertEvaluationRuns(ctx, evalPK, runPKs, from); err != nil {
		return fmt.Errorf("store: add runs to evaluation %d: %w", evalPK, err)
	}
	return nil
}

// UpdateArrival stores what changes as runs join an arrival evaluation: its runs,
// expected results, whether it is open, how many runs are queued and whether a flush
// waits. One statement: it runs once for every run that arrives.
func (tx *Tx) UpdateArrival(ctx context.Context, ev Evaluation) error {
	if _, err := tx.q.exec(ctx, `UPDATE evaluations SET runs = $2, expected = $3, open = $4, queued = $5, flushing = $6, positions = $7 WHERE id = $1`,
		ev.PK, ev.Runs, ev.Expected, flag(ev.Open), ev.Queued, flag(ev.Flushing), ev.Positions); err != nil {
		return fmt.Errorf("store: update evaluation %s: %w", ev.ID, err)
	}
	return nil
}

// CloseArrival stops the arrival evaluation evalPK from taking runs.
func (tx *Tx) CloseArrival(ctx context.Context, evalPK int64) error {
	if _, err := tx.q.exec(ctx, `UPDATE evaluations SET open = 0 WHERE id = $1`, evalPK); err != nil {
		return fmt.Errorf("store: close evaluation %d: %w", evalPK, err)
	}
	return nil
}

// LockEvaluation is EvaluationByPK with the row locked until tx ends on PostgreSQL.
func (tx *Tx) LockEvaluation(ctx context.Context, tenantID, pk int64) (Evaluation, error) {
	return tx.evaluationByPK(ctx, tenantID, pk, tx.d.rowLock())
}

// flag is b as the 0/1 the open and flushing columns hold.
func flag(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// chunkRunsSQL reads a chunk of an evaluation (positions [$2, $3)): each run with the
// scorers whose results the evaluation has for it already (none, or one row per scorer).
const chunkRunsSQL = `SELECT r.id, r.tenant_id, r.run_id, r.agent, r.run_time, r.received_at, r.body, r.repaired, r.redactions, res.scorer
	FROM evaluation_runs er JOIN runs r ON r.id = er.run_pk
	LEFT JOIN results res ON res.evaluation_id = er.evaluation_id AND res.run_pk = er.run_pk
	WHERE er.evaluation_id = $1 AND er.position >= $2 AND er.position < $3 AND r.tenant_id = $4
	ORDER BY er.position`

// ChunkRuns returns, in one query, the runs of the tenant's evaluation at positions
// [from, to) in their order, and which of their results the evaluation has already: what
// a job needs to score its chunk (a retried job scores only what is missing).
func (q queries) ChunkRuns(ctx context.Context, tenantID, evalPK, from, to int64) ([]Run, map[ResultKey]bool, error) {
	var (
		out    = make([]Run, 0, to-from)
		stored = map[ResultKey]bool{}
	)
	err := eachRow(ctx, q.q, chunkRunsSQL, []any{evalPK, from, to, tenantID}, func(s scanner) error {
		var (
			row    runRow
			scorer sql.NullString
		)
		if err := s.Scan(row.dest(&scorer)...); err != nil {
			return err
		}
		r, err := row.run()
		if err != nil {
			return err
		}
		if scorer.Valid {
			stored[ResultKey{RunPK: r.PK, Scorer: scorer.String}] = true
		}
		if len(out) == 0 || out[len(out)-1].PK != r.PK { // else the same run again, with another stored result
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: read the runs of evaluation %d [%d, %d): %w", evalPK, from, to, err)
	}
	return out, stored, nil
}
