package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
)

// The writer's connection keeps the statements it runs: a statement run again is not
// prepared again, one run while its own rows are still read gets a statement of its own
// (the rows read on, undisturbed), and no more than maxConnStmts are kept.
func TestConnectionKeepsItsStatements(t *testing.T) {
	ctx := context.Background()
	conn, err := newSQLiteConnector("file:" + filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := db.ExecContext(ctx, `INSERT INTO t (n) VALUES (?)`, i); err != nil {
			t.Fatal(err)
		}
	}
	kept := func() *cachingConn {
		var cc *cachingConn
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Raw(func(dc any) error { cc = dc.(*cachingConn); return nil }); err != nil {
			t.Fatal(err)
		}
		return cc
	}
	if n := kept().lru.Len(); n != 2 { // CREATE and INSERT
		t.Errorf("%d statements kept after two texts; want 2", n)
	}

	// The same text inside a loop over its own rows.
	const q = `SELECT n FROM t WHERE n >= ? ORDER BY n`
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	outer, err := tx.QueryContext(ctx, q, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for outer.Next() {
		var n int
		if err := outer.Scan(&n); err != nil {
			t.Fatal(err)
		}
		inner, err := tx.QueryContext(ctx, q, n)
		if err != nil {
			t.Fatal(err)
		}
		count := 0
		for inner.Next() {
			count++
		}
		if err := inner.Close(); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d:%d", n, count))
	}
	if err := outer.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if want := "[0:5 1:4 2:3 3:2 4:1]"; fmt.Sprint(got) != want {
		t.Errorf("nested runs of one text read %v; want %s", got, want)
	}
	if n := kept().lru.Len(); n != 3 {
		t.Errorf("%d statements kept after three texts; want 3", n)
	}

	for i := range maxConnStmts + 10 {
		var n int
		if err := db.QueryRowContext(ctx, fmt.Sprintf(`SELECT %d`, i)).Scan(&n); err != nil || n != i {
			t.Fatalf("SELECT %d: %d, %v", i, n, err)
		}
	}
	cc := kept()
	if n := cc.lru.Len(); n != maxConnStmts || len(cc.stmts) != maxConnStmts {
		t.Errorf("%d statements kept (%d by text) after %d texts; want the bound, %d", n, len(cc.stmts), maxConnStmts+13, maxConnStmts)
	}
}

// numbered turns PostgreSQL's $N into SQLite's placeholders: plain ? when they run in
// order, each once; ?N otherwise; and leaves alone a text without them.
func TestNumbered(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)`, `INSERT INTO t (a, b) VALUES (?, ?), (?, ?)`},
		{`SELECT $2 - $1`, `SELECT ?2 - ?1`},
		{`SELECT a FROM t WHERE a = $1 OR b = $1`, `SELECT a FROM t WHERE a = ?1 OR b = ?1`},
		{`SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11`, `SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?`},
		{`SELECT $1, $12`, `SELECT ?1, ?12`},
		{`DELETE FROM river_job WHERE json_extract(args, '$.tenant') = $1`, `DELETE FROM river_job WHERE json_extract(args, '$.tenant') = ?`},
		// River's own statements number their parameters ?N and hold JSON paths.
		{`UPDATE river_job SET metadata = jsonb_set(metadata, '$.x', ?2) WHERE id = ?1`, `UPDATE river_job SET metadata = jsonb_set(metadata, '$.x', ?2) WHERE id = ?1`},
		{`SELECT 1`, `SELECT 1`},
		{`SELECT '$'`, `SELECT '$'`},
	} {
		if got := numbered(c.in); got != c.want {
			t.Errorf("numbered(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

// A connection takes the store's $N texts: it rewrites one when it prepares its
// statement and keeps the statement under the text it was given, so that running the
// text again finds it.
func TestConnectionTakesNumberedPlaceholders(t *testing.T) {
	ctx := context.Background()
	conn, err := newSQLiteConnector("file:" + filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	const q = `SELECT $2 - $1, $1`
	for range 3 {
		var diff, first int
		if err := db.QueryRowContext(ctx, q, 10, 3).Scan(&diff, &first); err != nil || diff != -7 || first != 10 {
			t.Fatalf("%s with 10, 3: %d, %d, %v; want -7, 10", q, diff, first, err)
		}
	}
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Raw(func(dc any) error {
		cc := dc.(*cachingConn)
		if _, ok := cc.stmts[q]; !ok || cc.lru.Len() != 1 {
			t.Errorf("statements kept: %d, under the text given: %v; want 1, true", cc.lru.Len(), ok)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
