package store

import (
	"context"
	"database/sql"
	"slices"
)

// querier is what the queries need from a connection pool or a transaction of either
// database (each driver has its own: sqlQuerier, pgxQuerier). The SQL is written once:
// both databases take $N placeholders, ON CONFLICT and RETURNING; times are Unix
// microseconds and JSON travels as text (jsonText). Every text argument meets the same
// rule on both (text.go).
type querier interface {
	exec(ctx context.Context, q string, args ...any) (int64, error)
	query(ctx context.Context, q string, args ...any) (rows, error)
}

// scanner is a row to read: the Scan of rows, for the functions that read one row into a
// value (scanRun, scanTenant, ...).
type scanner interface {
	Scan(dest ...any) error
}

// rows is the part of *sql.Rows and pgx.Rows the queries use.
type rows interface {
	scanner
	Next() bool
	Err() error
	Close()
}

// eachRow runs query and calls f on each of its rows until f fails. The rows are closed
// when it returns, so that the caller may run its next statement on the connection (a
// transaction's, or SQLite's one writer).
func eachRow(ctx context.Context, q querier, query string, args []any, f func(scanner) error) error {
	rs, err := q.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		if err := f(rs); err != nil {
			return err
		}
	}
	return rs.Err()
}

// appendRows appends to out the value scan reads from each row of query.
func appendRows[T any](ctx context.Context, out []T, q querier, query string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	err := eachRow(ctx, q, query, args, func(s scanner) error {
		v, err := scan(s)
		if err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// collect returns the value scan reads from each row of query, in their order; nil when
// there is none.
func collect[T any](ctx context.Context, q querier, query string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	return appendRows(ctx, nil, q, query, args, scan)
}

// addKeys sets in set the key scan reads from each row of query.
func addKeys[K comparable](ctx context.Context, set map[K]bool, q querier, query string, args []any, key func(scanner) (K, error)) error {
	return eachRow(ctx, q, query, args, func(s scanner) error {
		k, err := key(s)
		if err != nil {
			return err
		}
		set[k] = true
		return nil
	})
}

// scanValue reads a row of one column.
func scanValue[T any](s scanner) (T, error) {
	var v T
	err := s.Scan(&v)
	return v, err
}

// firstRow runs query and reads its first row with f; no row is sql.ErrNoRows.
func firstRow(ctx context.Context, q querier, query string, args []any, f func(scanner) error) error {
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
	if err := f(rs); err != nil {
		return err
	}
	return rs.Err()
}

// first returns the value scan reads from the first row of query; no row is
// sql.ErrNoRows (notFound names what was looked for).
func first[T any](ctx context.Context, q querier, query string, args []any, scan func(scanner) (T, error)) (T, error) {
	var v T
	err := firstRow(ctx, q, query, args, func(s scanner) (err error) {
		v, err = scan(s)
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// queryRow runs query and scans its first row into dest; no row is sql.ErrNoRows.
func queryRow(ctx context.Context, q querier, query string, args []any, dest ...any) error {
	return firstRow(ctx, q, query, args, func(s scanner) error { return s.Scan(dest...) })
}

// wider reads a row that has columns before and after the ones a scan function reads:
// lead's and trail's destinations take them. It costs the row a slice of its own (runRow
// reads the runs of a chunk without one).
type wider struct {
	scanner
	lead, trail []any
}

func (w wider) Scan(dest ...any) error {
	return w.scanner.Scan(slices.Concat(w.lead, dest, w.trail)...)
}
