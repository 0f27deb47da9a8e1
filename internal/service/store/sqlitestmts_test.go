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
