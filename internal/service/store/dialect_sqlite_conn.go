package store

import (
	"container/list"
	"context"
	"database/sql/driver"
	"errors"

	"modernc.org/sqlite"
)

// SQLite parses a statement each time it is run unless it is prepared, and what runs on
// the store's connections comes from callers that prepare nothing: the store's queries,
// and River's (its fetch is a long UPDATE ... RETURNING, most of whose time went to
// parsing it). Every SQLite connection of the store therefore keeps the statements it
// runs, by text, as pgx does on PostgreSQL: a statement run again is bound and stepped,
// not parsed again, in a transaction or not.
//
// The store's queries are written with PostgreSQL's $N placeholders. A connection
// rewrites them for SQLite (numbered) when it prepares a statement, keeping it under the
// text it was given: a statement run again is neither parsed nor rewritten again.

// sqliteConnector opens SQLite connections that keep their statements (cachingConn).
type sqliteConnector struct{ inner driver.Connector }

// newSQLiteConnector returns the connector of the SQLite driver for dsn, its connections
// keeping their statements.
func newSQLiteConnector(dsn string) (driver.Connector, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return sqliteConnector{c}, nil
}

func (c sqliteConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(sqliteConn)
	if !ok {
		_ = conn.Close()
		return nil, errors.New("store: the SQLite driver's connection lacks the methods the store uses")
	}
	return &cachingConn{sqliteConn: sc, stmts: map[string]*list.Element{}, lru: list.New()}, nil
}

func (c sqliteConnector) Driver() driver.Driver { return c.inner.Driver() }

// sqliteConn is what the store and database/sql use of the driver's connection.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// maxConnStmts bounds the statements a connection keeps; the least recently run go.
const maxConnStmts = 512

// cachingConn is a connection that keeps the statements run through ExecContext and
// QueryContext. database/sql uses a connection from one goroutine at a time; a statement
// whose rows are still being read when its text runs again (a query inside a loop over
// another's rows) is not reused: that run prepares a statement of its own.
type cachingConn struct {
	sqliteConn
	stmts map[string]*list.Element // of *connStmt
	lru   *list.List               // most recently run first
}

type connStmt struct {
	query string
	st    driver.Stmt
	busy  bool // its rows are open
}

// stmt returns the statement of query, kept or prepared now, and whether it is kept.
func (c *cachingConn) stmt(ctx context.Context, query string) (*connStmt, bool, error) {
	if el, ok := c.stmts[query]; ok {
		cs := el.Value.(*connStmt)
		if !cs.busy {
			c.lru.MoveToFront(el)
			return cs, true, nil
		}
		st, err := c.PrepareContext(ctx, numbered(query))
		return &connStmt{query: query, st: st}, false, err
	}
	st, err := c.PrepareContext(ctx, numbered(query))
	if err != nil {
		return nil, false, err
	}
	cs := &connStmt{query: query, st: st}
	c.stmts[query] = c.lru.PushFront(cs)
	for c.lru.Len() > maxConnStmts {
		el := c.lru.Back()
		old := el.Value.(*connStmt)
		if old.busy {
			break // read by open rows; it goes when a later statement is kept
		}
		c.lru.Remove(el)
		delete(c.stmts, old.query)
		_ = old.st.Close()
	}
	return cs, true, nil
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, kept, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if !kept {
		defer cs.st.Close()
	}
	return cs.st.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, kept, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	rs, err := cs.st.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		if !kept {
			_ = cs.st.Close()
		}
		return nil, err
	}
	cs.busy = true
	return &connRows{Rows: rs, cs: cs, kept: kept}, nil
}

// Close closes the kept statements, then the connection.
func (c *cachingConn) Close() error {
	for el := c.lru.Front(); el != nil; el = el.Next() {
		_ = el.Value.(*connStmt).st.Close()
	}
	c.lru.Init()
	clear(c.stmts)
	return c.sqliteConn.Close()
}

// connRows are a kept statement's rows: closing them frees the statement for its next run.
type connRows struct {
	driver.Rows
	cs   *connStmt
	kept bool
}

func (r *connRows) Close() error {
	err := r.Rows.Close()
	r.cs.busy = false
	if !r.kept {
		if e := r.cs.st.Close(); err == nil {
			err = e
		}
	}
	return err
}

// numbered rewrites PostgreSQL's $N placeholders for SQLite. When they run $1, $2, ... in
// order, each once (the batch inserts), they become plain ?: SQLite finds a named or
// numbered parameter by scanning a list of those seen so far, which makes a 3,000-parameter
// insert quadratic to prepare and to bind. Otherwise $N becomes ?N, the same argument. A
// text without $N (River's, which number theirs ?N, and JSON paths such as '$.id') is
// returned as it is.
func numbered(q string) string {
	var (
		found      bool
		sequential = true
		next       = 1
	)
	for i := 0; i+1 < len(q); i++ {
		if q[i] != '$' || q[i+1] < '0' || q[i+1] > '9' {
			continue
		}
		found = true
		n := 0
		for i++; i < len(q) && q[i] >= '0' && q[i] <= '9'; i++ {
			n = n*10 + int(q[i]-'0')
		}
		i--
		if n != next {
			sequential = false
		}
		next++
	}
	if !found {
		return q
	}
	out := make([]byte, 0, len(q))
	for i := 0; i < len(q); i++ {
		if q[i] != '$' || i+1 == len(q) || q[i+1] < '0' || q[i+1] > '9' {
			out = append(out, q[i])
			continue
		}
		out = append(out, '?')
		for i+1 < len(q) && q[i+1] >= '0' && q[i+1] <= '9' {
			i++
			if !sequential {
				out = append(out, q[i])
			}
		}
	}
	return string(out)
}
