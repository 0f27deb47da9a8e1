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

// numbered rewrites PostgreSQL's $N placeholders for SQLite. When they run $1, $2, ... in
// order, each once (the batch inserts), they become plain ?: SQLite finds a named or
// numbered parameter by scanning a list of those seen so far, which makes a 3,000-parameter
// insert quadratic to prepare and to bind. Otherwise $N becomes ?N, the same argument.
func numbered(q string) string {
	if !strings.Contains(q, "$") {
		return q
	}
	b := []byte(q)
	sequential, next := true, 1
	for i := 0; i+1 < len(b); i++ {
		if b[i] != '$' || b[i+1] < '0' || b[i+1] > '9' {
			continue
		}
		b[i] = '?'
		j := i + 1
		n := 0
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			n = n*10 + int(b[j]-'0')
			j++
		}
		if n != next {
			sequential = false
		}
		next++
	}
	if !sequential {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		out = append(out, b[i])
		if b[i] == '?' {
			for i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '9' {
				i++
			}
		}
	}
	return string(out)
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
	q = numbered(q)
	r, err := s.c.ExecContext(ctx, q, cleanArgs(args)...)
	if err != nil {
		return 0, err
	}
	return r.RowsAffected()
}

func (s sqlQuerier) query(ctx context.Context, q string, args ...any) (rows, error) {
	q = numbered(q)
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
