package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Run is a stored run.
type Run struct {
	// PK is the store's own id; it is also the ingest sequence that orders runs of the
	// same time.
	PK       int64
	TenantID int64
	// ID is the run's id in its tenant (sdk.Run.ID).
	ID    string
	Agent string
	// Time is sdk.Run.Time, or when the run was received when it had none.
	Time       time.Time
	ReceivedAt time.Time
	// Body is the run's JSON.
	Body json.RawMessage
	// Repaired is true when the run was stored with U+FFFD in place of text no database
	// stores (text.go).
	Repaired bool
	// Redactions counts what the tenant's redaction rules replaced in the run, by kind;
	// nil when nothing was.
	Redactions map[string]int
}

// NewRun is a run to store.
type NewRun struct {
	ID    string
	Agent string
	Time  time.Time
	Body  json.RawMessage
	// Repaired says the caller repaired the run's text already (CleanJSON); PutRuns
	// repairs what is left and flags the run either way.
	Repaired bool
	// Redactions counts what redaction replaced in Body, by kind. Optional.
	Redactions map[string]int
}

// runBatch is how many runs one INSERT carries: 8 parameters each, well under both
// databases' parameter limits.
const runBatch = 500

// PutRuns stores runs that the tenant does not have yet (by run id) and returns, in the
// order of runs, the PK of each stored run, or 0 for a run whose id the tenant already
// had: sending the same runs twice stores them once. Ids must be unique within runs.
// Text no database stores is replaced with U+FFFD and the run flagged Repaired (text.go):
// such a run is stored, never refused, and never takes the others with it.
//
// A run whose id the tenant deleted within TombstoneTTL is not stored either (PK 0):
// deleted stays deleted, whichever way a run arrives. PutRunsDeleted says which.
func (q queries) PutRuns(ctx context.Context, tenantID int64, runs []NewRun) ([]int64, error) {
	pks, _, err := q.PutRunsDeleted(ctx, tenantID, runs)
	return pks, err
}

// PutRunsDeleted is PutRuns that also says, in the order of runs, which were not stored
// because the tenant deleted a run of that id (its tombstone).
func (q queries) PutRunsDeleted(ctx context.Context, tenantID int64, runs []NewRun) ([]int64, []bool, error) {
	pks := make([]int64, len(runs))
	deleted := make([]bool, len(runs))
	index := make(map[string]int, len(runs))
	clean := make([]NewRun, len(runs))
	for i, r := range runs {
		var c1, c2, c3 bool
		r.ID, c1 = CleanText(r.ID)
		r.Agent, c2 = CleanText(r.Agent)
		r.Body, c3 = CleanJSON(r.Body)
		r.Repaired = r.Repaired || c1 || c2 || c3
		clean[i] = r
		index[r.ID] = i
	}
	runs = clean
	received := micros(time.Now())
	var b strings.Builder
	args := make([]any, 0, runBatch*8)
	for chunk := range slices.Chunk(runs, runBatch) {
		b.Reset()
		args = args[:0]
		b.WriteString(`INSERT INTO runs (tenant_id, run_id, agent, run_time, received_at, body, repaired, redactions) VALUES `)
		for i, r := range chunk {
			writeRow(&b, i, len(args)+1, 8)
			t := received
			if !r.Time.IsZero() {
				t = micros(r.Time)
			}
			var red any
			if len(r.Redactions) > 0 {
				rb, err := json.Marshal(r.Redactions)
				if err != nil {
					return nil, nil, err
				}
				red = string(rb)
			}
			args = append(args, tenantID, r.ID, r.Agent, t, received, jsonText(r.Body), r.Repaired, red)
		}
		b.WriteString(` ON CONFLICT (tenant_id, run_id) DO NOTHING RETURNING id, run_id`)
		var inserted []string
		if err := eachRow(ctx, q.q, b.String(), args, func(s scanner) error {
			var (
				pk int64
				id string
			)
			if err := s.Scan(&pk, &id); err != nil {
				return err
			}
			pks[index[id]] = pk
			inserted = append(inserted, id)
			return nil
		}); err != nil {
			return nil, nil, fmt.Errorf("store: put runs: %w", err)
		}
		if err := q.buryTombstoned(ctx, tenantID, inserted, index, pks, deleted); err != nil {
			return nil, nil, err
		}
	}
	return pks, deleted, nil
}

// buryTombstoned deletes again, in the inserting transaction, the runs just inserted
// whose id the tenant deleted, and marks them deleted. The check comes after the insert,
// not before: on PostgreSQL an insert that waited on a deletion of the same run (the
// unique index) sees that deletion's tombstone in its next statement, so a retried
// import racing the deletion cannot bring the run back.
func (q queries) buryTombstoned(ctx context.Context, tenantID int64, ids []string, index map[string]int, pks []int64, deleted []bool) error {
	if len(ids) == 0 {
		return nil
	}
	tombstoned := map[string]bool{}
	if err := q.tombstoned(ctx, tenantID, ids, tombstoned); err != nil {
		return fmt.Errorf("store: put runs: tombstones: %w", err)
	}
	if len(tombstoned) == 0 {
		return nil
	}
	var dead []int64
	for _, id := range ids {
		if tombstoned[id] {
			i := index[id]
			dead = append(dead, pks[i])
			pks[i], deleted[i] = 0, true
		}
	}
	din, dargs := inList(dead, tenantID)
	if _, err := q.q.exec(ctx, deleteRunsSQL+din, dargs...); err != nil {
		return fmt.Errorf("store: put runs: tombstones: %w", err)
	}
	return nil
}

// tombstoned sets in set which of ids (at most a few hundred: one statement) the tenant
// deleted: ids with a tombstone.
func (q queries) tombstoned(ctx context.Context, tenantID int64, ids []string, set map[string]bool) error {
	hashes := make([][]byte, len(ids))
	byHash := make(map[string]string, len(ids))
	for i, id := range ids {
		hashes[i] = runHash(id)
		byHash[string(hashes[i])] = id
	}
	in, args := inList(hashes, tenantID)
	return addKeys(ctx, set, q.q, tombstonesSQL+in, args, func(s scanner) (string, error) {
		h, err := scanValue[[]byte](s)
		return byHash[string(h)], err
	})
}

// tombstonesSQL finds which of some run id hashes the tenant deleted (the primary key
// of run_tombstones).
const tombstonesSQL = `SELECT run_hash FROM run_tombstones WHERE tenant_id = $1 AND run_hash IN `

const runCols = `id, tenant_id, run_id, agent, run_time, received_at, body, repaired, redactions`

// scanRun reads a row of runCols.
func scanRun(s scanner) (Run, error) {
	var row runRow
	if err := s.Scan(row.dest()...); err != nil {
		return Run{}, err
	}
	return row.run()
}

// runRow is a row of runCols as read, then more columns (a query that reads runs with
// something of each): one value to scan into, which run makes a Run of.
type runRow struct {
	r       Run
	t, recv int64
	body    string
	red     *string
}

// dest is the destinations of runCols, then more.
func (x *runRow) dest(more ...any) []any {
	d := make([]any, 0, 9+len(more))
	d = append(d, &x.r.PK, &x.r.TenantID, &x.r.ID, &x.r.Agent, &x.t, &x.recv, &x.body, &x.r.Repaired, &x.red)
	return append(d, more...)
}

func (x *runRow) run() (Run, error) {
	if x.red != nil {
		if err := json.Unmarshal([]byte(*x.red), &x.r.Redactions); err != nil {
			return Run{}, fmt.Errorf("store: run %s: redactions: %w", x.r.ID, err)
		}
	}
	x.r.Time, x.r.ReceivedAt, x.r.Body = fromMicros(x.t), fromMicros(x.recv), json.RawMessage(x.body)
	return x.r, nil
}

// Run returns the tenant's run with id.
func (q queries) Run(ctx context.Context, tenantID int64, id string) (Run, error) {
	r, err := first(ctx, q.q, `SELECT `+runCols+` FROM runs WHERE tenant_id = $1 AND run_id = $2`, []any{tenantID, id}, scanRun)
	if err != nil {
		return r, notFound(err, "run %q", id)
	}
	return r, nil
}

// RunsByPK returns the tenant's runs with the given PKs, in no particular order; PKs of
// another tenant are left out.
func (q queries) RunsByPK(ctx context.Context, tenantID int64, pks []int64) ([]Run, error) {
	if len(pks) == 0 {
		return nil, nil
	}
	in, args := inList(pks, tenantID)
	return collect(ctx, q.q, `SELECT `+runCols+` FROM runs WHERE tenant_id = $1 AND id IN `+in, args, scanRun)
}

// RunsByID returns the tenant's runs with the given ids, in no particular order; ids the
// tenant has no run for are left out.
func (q queries) RunsByID(ctx context.Context, tenantID int64, ids []string) ([]Run, error) {
	var (
		out []Run
		err error
	)
	for chunk := range slices.Chunk(ids, runBatch) {
		in, args := inList(chunk, tenantID)
		if out, err = appendRows(ctx, out, q.q, `SELECT `+runCols+` FROM runs WHERE tenant_id = $1 AND run_id IN `+in, args, scanRun); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RunQuery selects an agent's runs, newest first (by run time, then ingest order).
type RunQuery struct {
	Agent string
	// Since keeps runs at or after it. Optional.
	Since time.Time
	// Limit caps the runs returned. Required (> 0).
	Limit int
	// After continues a listing after this run (its Time and PK). Optional.
	After *Run
}

// Runs returns the agent's runs q selects, newest first.
func (q queries) Runs(ctx context.Context, tenantID int64, rq RunQuery) ([]Run, error) {
	query, args := runsSQL(runCols, tenantID, rq)
	return collect(ctx, q.q, query, args, scanRun)
}

// RunPKs returns the PKs of the runs q selects, newest first, without their bodies.
func (q queries) RunPKs(ctx context.Context, tenantID int64, rq RunQuery) ([]int64, error) {
	query, args := runsSQL("id", tenantID, rq)
	return collect(ctx, q.q, query, args, scanValue[int64])
}

// runsSQL selects cols of the runs rq selects, newest first.
func runsSQL(cols string, tenantID int64, rq RunQuery) (string, []any) {
	where := `tenant_id = $1 AND agent = $2`
	args := []any{tenantID, rq.Agent}
	if !rq.Since.IsZero() {
		args = append(args, micros(rq.Since))
		where += fmt.Sprintf(` AND run_time >= $%d`, len(args))
	}
	if rq.After != nil {
		args = append(args, micros(rq.After.Time), rq.After.PK)
		where += fmt.Sprintf(` AND (run_time < $%d OR (run_time = $%d AND id < $%d))`, len(args)-1, len(args)-1, len(args))
	}
	args = append(args, rq.Limit)
	return `SELECT ` + cols + ` FROM runs WHERE ` + where + fmt.Sprintf(` ORDER BY run_time DESC, id DESC LIMIT $%d`, len(args)), args
}

// Agent is an agent as its runs show it.
type Agent struct {
	Name    string
	Runs    int64
	LastRun time.Time
}

// Agents lists the tenant's agents by name, at most limit of them after the name after.
func (q queries) Agents(ctx context.Context, tenantID int64, after string, limit int) ([]Agent, error) {
	return collect(ctx, q.q, `SELECT agent, COUNT(*), MAX(run_time) FROM runs WHERE tenant_id = $1 AND agent > $2
		GROUP BY agent ORDER BY agent LIMIT $3`, []any{tenantID, after, limit}, func(s scanner) (Agent, error) {
		var (
			a    Agent
			last int64
		)
		err := s.Scan(&a.Name, &a.Runs, &last)
		a.LastRun = fromMicros(last)
		return a, err
	})
}

// CountRuns counts the tenant's runs of agent.
func (q queries) CountRuns(ctx context.Context, tenantID int64, agent string) (int64, error) {
	var n int64
	err := queryRow(ctx, q.q, `SELECT COUNT(*) FROM runs WHERE tenant_id = $1 AND agent = $2`, []any{tenantID, agent}, &n)
	return n, err
}

// HasRuns reports whether the tenant has a run of agent: one index entry read, however
// many runs the agent has.
func (q queries) HasRuns(ctx context.Context, tenantID int64, agent string) (bool, error) {
	var n int64
	err := queryRow(ctx, q.q, `SELECT COUNT(*) FROM (SELECT 1 FROM runs WHERE tenant_id = $1 AND agent = $2 LIMIT 1) AS one`, []any{tenantID, agent}, &n)
	return n > 0, err
}
