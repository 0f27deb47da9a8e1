package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

// postgresDialect is the store on PostgreSQL (pgx), for teams and for several processes on
// one database: each connection writes on its own, and rows are locked where two
// transactions must take turns.
type postgresDialect struct {
	p *pgxpool.Pool
}

func openPostgres(ctx context.Context, dsn string) (*postgresDialect, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: connect to PostgreSQL: %w", err)
	}
	return &postgresDialect{p: pool}, nil
}

func (d *postgresDialect) database() string { return Postgres }

func (d *postgresDialect) pool() querier { return pgxQuerier{d.p} }

func (d *postgresDialect) begin(ctx context.Context) (txConn, error) {
	t, err := d.p.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return postgresTx{pgxQuerier{t}, t}, nil
}

// beginSnapshot reads at REPEATABLE READ.
func (d *postgresDialect) beginSnapshot(ctx context.Context) (txConn, error) {
	t, err := d.p.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	return postgresTx{pgxQuerier{t}, t}, nil
}

func (d *postgresDialect) migrator() (*sql.DB, goose.Dialect, func()) {
	db := stdlib.OpenDBFromPool(d.p)
	return db, goose.DialectPostgres, func() { _ = db.Close() }
}

func (d *postgresDialect) sqlDB() *sql.DB { return nil }

func (d *postgresDialect) pgxPool() *pgxpool.Pool { return d.p }

func (d *postgresDialect) withHandle(h Handles) error { return h.Postgres(d.p) }

func (d *postgresDialect) close() { d.p.Close() }

// inSharedTx is a transaction of the caller's own (a panic of f returned as an error all
// the same): each connection commits on its own, and the server flushes concurrent
// commits to its WAL together already.
func (d *postgresDialect) inSharedTx(ctx context.Context, f func(context.Context, *Tx) error) error {
	c := &groupCall{ctx: ctx, f: f}
	return inTx(ctx, d, func(tx *Tx) error { return callF(c, tx) })
}

// withOpenSpans locks the tenant's row first in the transaction, so that the spans' own
// rows are locked after it in the same order by every request, then counts.
func (d *postgresDialect) withOpenSpans(ctx context.Context, tenantID int64, now time.Time, f func(tx *Tx, taken int64) error) error {
	return inTx(ctx, d, func(tx *Tx) error {
		var id int64
		if err := queryRow(ctx, tx.q, `SELECT id FROM tenants WHERE id = $1 FOR NO KEY UPDATE`, []any{tenantID}, &id); err != nil {
			return fmt.Errorf("store: lock the open spans of tenant %d: %w", tenantID, err)
		}
		taken, err := tx.OpenSpanBytes(ctx, tenantID, now)
		if err != nil {
			return err
		}
		return f(tx, taken)
	})
}

// pauseAfterDeletion: writers do not wait for one another.
func (d *postgresDialect) pauseAfterDeletion(context.Context, time.Duration) {}

// concurrentWrite: a row that references the tenant committed after the deletion passed
// its table (a foreign-key violation on the tenant), or a deadlock with that writer.
func (d *postgresDialect) concurrentWrite(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "23503" || pe.Code == "40P01")
}

func (d *postgresDialect) rowLock() string { return ` FOR NO KEY UPDATE` }

func (d *postgresDialect) deleteTenantJobsSQL() string {
	return `DELETE FROM river_job WHERE kind LIKE 'scorekit\_%' AND args->>'tenant' = $1::bigint::text`
}

// insertEvaluationRuns sends one statement, one round trip, one text: the runs travel as
// an array.
func (d *postgresDialect) insertEvaluationRuns(ctx context.Context, q querier, evalPK int64, runPKs []int64, first int64) error {
	_, err := q.exec(ctx, `INSERT INTO evaluation_runs (evaluation_id, run_pk, position)
			SELECT $1, u.run_pk, $3 + u.n - 1 FROM unnest($2::bigint[]) WITH ORDINALITY AS u(run_pk, n)`, evalPK, runPKs, first)
	return err
}

// pgxConn is a pgx pool or transaction.
type pgxConn interface {
	Exec(ctx context.Context, q string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, q string, args ...any) (pgx.Rows, error)
}

// pgxQuerier runs statements on a pool or a transaction; pgx keeps the statements it
// prepares by text.
type pgxQuerier struct{ c pgxConn }

func (p pgxQuerier) exec(ctx context.Context, q string, args ...any) (int64, error) {
	t, err := p.c.Exec(ctx, q, cleanArgs(args)...)
	return t.RowsAffected(), err
}

func (p pgxQuerier) query(ctx context.Context, q string, args ...any) (rows, error) {
	r, err := p.c.Query(ctx, q, cleanArgs(args)...)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// postgresTx is a transaction of the pool.
type postgresTx struct {
	pgxQuerier
	tx pgx.Tx
}

func (t postgresTx) commit(ctx context.Context) error { return t.tx.Commit(ctx) }

// rollback runs even when ctx has ended, so that the connection goes back to the pool clean.
func (t postgresTx) rollback(ctx context.Context) {
	_ = t.tx.Rollback(context.WithoutCancel(ctx))
}

func (t postgresTx) sqlTx() *sql.Tx { return nil }

func (t postgresTx) pgxTx() pgx.Tx { return t.tx }
