package store

import (
	"context"
	"database/sql"
)

// querier is what the queries need from a connection pool or a transaction of either
// backend (each driver has its own: sqlQuerier, pgxQuerier). The SQL is written once:
// both backends take $N placeholders, ON CONFLICT and RETURNING; times are Unix
// microseconds and JSON travels as text (jsonText). Every text argument meets the same
// rule on both (text.go).
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
