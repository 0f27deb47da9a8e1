package store

import (
	"context"
	"database/sql"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// querier is what the queries need from a connection pool or a transaction of either
// backend. The SQL is written once: both backends take $N placeholders, ON CONFLICT and
// RETURNING; times are Unix microseconds and JSON travels as text (jsonText). Every text
// argument meets the same rule on both (text.go).
type querier interface {
	exec(ctx context.Context, q string, args ...any) (int64, error)
	query(ctx context.Context, q string, args ...any) (rows, error)
}

// rows is the part of *sql.Rows and pgx.Rows the queries use.
type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// queryRow runs q and scans its first row into dest; no row is sql.ErrNoRows.
func queryRow(ctx context.Context, q querier, query string, args []any, dest ...any) error {
	rs, err := q.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	if !rs.Next() {
		if err := rs.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := rs.Scan(dest...); err != nil {
		return err
	}
	return rs.Err()
}

// sqlConn is a database/sql pool or transaction (SQLite).
type sqlConn interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// sqlQuerier runs statements on a pool or a transaction (SQLite). Its connections keep
// the statements they run (cachingConn), so it prepares nothing itself.
type sqlQuerier struct {
	c sqlConn
	// read, when set, runs the SELECTs of a pool (not a transaction): SQLite's read
	// connections beside its writer.
	read sqlConn
}

func (s sqlQuerier) exec(ctx context.Context, q string, args ...any) (int64, error) {
	r, err := s.c.ExecContext(ctx, q, cleanArgs(args)...)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

func (s sqlQuerier) query(ctx context.Context, q string, args ...any) (rows, error) {
	c := s.c
	if s.read != nil && strings.HasPrefix(q, "SELECT ") {
		c = s.read
	}
	r, err := c.QueryContext(ctx, q, cleanArgs(args)...)
	if err != nil {
		return nil, err
	}
	return sqlRows{r}, nil
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

// pgxQuerier is a pgx pool or transaction (PostgreSQL).
type pgxQuerier struct {
	exec_  func(ctx context.Context, q string, args ...any) (int64, error)
	query_ func(ctx context.Context, q string, args ...any) (pgx.Rows, error)
}

func (p pgxQuerier) exec(ctx context.Context, q string, args ...any) (int64, error) {
	return p.exec_(ctx, q, cleanArgs(args)...)
}

func (p pgxQuerier) query(ctx context.Context, q string, args ...any) (rows, error) {
	r, err := p.query_(ctx, q, cleanArgs(args)...)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func pgxPoolQuerier(p *pgxpool.Pool) querier {
	return pgxQuerier{
		exec_: func(ctx context.Context, q string, args ...any) (int64, error) {
			t, err := p.Exec(ctx, q, args...)
			return t.RowsAffected(), err
		},
		query_: p.Query,
	}
}

func pgxTxQuerier(tx pgx.Tx) querier {
	return pgxQuerier{
		exec_: func(ctx context.Context, q string, args ...any) (int64, error) {
			t, err := tx.Exec(ctx, q, args...)
			return t.RowsAffected(), err
		},
		query_: tx.Query,
	}
}
