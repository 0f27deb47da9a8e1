package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // the database/sql driver "sqlite"
)

// sqliteDialect is the store on an embedded SQLite file (modernc.org/sqlite, pure Go): one
// connection writes, in WAL mode, while others read the last commit beside it.
type sqliteDialect struct {
	db *sql.DB
	// readDB holds the connections for reads outside a transaction (nil for a database in
	// memory, which is its one connection's own).
	readDB *sql.DB
	q      sqlQuerier
	// group batches InSharedTx's callers.
	group group
	// spanTurns are the tenants' turns to keep open spans (WithOpenSpans), by tenant id
	// modulo their number.
	spanTurns [16]sync.Mutex
}

// sqlitePragmas are the settings of every SQLite connection, chosen by measurement
// (BenchmarkSQLiteSettings; RATIONALE.md, "SQLite's settings").
var sqlitePragmas = []string{"busy_timeout(10000)", "journal_mode(WAL)", "foreign_keys(1)", "synchronous(NORMAL)"}

// sqliteReaders is how many connections SQLite's reads outside a transaction take.
const sqliteReaders = 4

func openSQLite(path string) (*sqliteDialect, error) {
	if path == "" {
		return nil, errors.New("store: empty SQLite path; give a file name such as scorekit.db")
	}
	// One connection: SQLite writes one at a time, and River's SQLite driver asks for a
	// single connection to avoid SQLITE_BUSY between its own operations. WAL keeps other
	// processes (scorekit eval beside serve) reading while one writes; busy_timeout makes
	// them wait for the write lock instead of failing.
	v := url.Values{}
	for _, p := range sqlitePragmas {
		v.Add("_pragma", p)
	}
	v.Set("_txlock", "immediate")
	conn, err := newSQLiteConnector("file:" + path + "?" + v.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	d := &sqliteDialect{db: db, q: sqlQuerier{c: db}}
	if !strings.HasPrefix(path, ":memory:") && !strings.Contains(path, "mode=memory") {
		// Reads outside a transaction take connections of their own: in WAL mode they
		// read the last commit while the one writer writes, instead of waiting for its
		// connection (a key's lookup behind a shared commit of imports, a worker's chunk
		// behind the results of another). A database in memory is the connection's own.
		r := url.Values{}
		r.Add("_pragma", "busy_timeout(10000)")
		r.Add("_pragma", "query_only(1)")
		rconn, err := newSQLiteConnector("file:" + path + "?" + r.Encode())
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("store: open %s for reading: %w", path, err)
		}
		rdb := sql.OpenDB(rconn)
		rdb.SetMaxOpenConns(sqliteReaders)
		rdb.SetMaxIdleConns(sqliteReaders)
		rdb.SetConnMaxIdleTime(0)
		rdb.SetConnMaxLifetime(0)
		d.readDB, d.q.read = rdb, rdb
	}
	return d, nil
}

func (d *sqliteDialect) database() string { return SQLite }

func (d *sqliteDialect) pool() querier { return d.q }

func (d *sqliteDialect) begin(ctx context.Context) (txConn, error) {
	stx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return sqliteTx{sqlQuerier{c: stx}, stx}, nil
}

// beginSnapshot reads on a read connection: WAL keeps its snapshot while the writer
// commits. A database in memory has one connection, so its snapshot is a transaction on it.
func (d *sqliteDialect) beginSnapshot(ctx context.Context) (txConn, error) {
	if d.readDB == nil {
		return d.begin(ctx)
	}
	stx, err := d.readDB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	return sqliteTx{sqlQuerier{c: stx}, stx}, nil
}

func (d *sqliteDialect) migrator() (*sql.DB, goose.Dialect, func()) {
	return d.db, goose.DialectSQLite3, func() {}
}

func (d *sqliteDialect) sqlDB() *sql.DB { return d.db }

func (d *sqliteDialect) pgxPool() *pgxpool.Pool { return nil }

func (d *sqliteDialect) withHandle(h Handles) error { return h.SQLite(d.db) }

func (d *sqliteDialect) close() {
	_ = d.db.Close()
	if d.readDB != nil {
		_ = d.readDB.Close()
	}
}

// inSharedTx lets the callers of the moment share one transaction and its commit (group).
func (d *sqliteDialect) inSharedTx(ctx context.Context, f func(context.Context, *Tx) error) error {
	return d.group.do(ctx, d, f)
}

// withOpenSpans takes a lock of the process's (SQLite is opened by one process), held from
// the count to the commit: the count (tens of milliseconds at a full cap) runs beside the
// writer, not in its transaction.
func (d *sqliteDialect) withOpenSpans(ctx context.Context, tenantID int64, now time.Time, f func(tx *Tx, taken int64) error) error {
	turn := &d.spanTurns[uint64(tenantID)%uint64(len(d.spanTurns))]
	turn.Lock()
	defer turn.Unlock()
	taken, err := (queries{q: d.q, d: d}).OpenSpanBytes(ctx, tenantID, now)
	if err != nil {
		return err
	}
	return inTx(ctx, d, func(tx *Tx) error { return f(tx, taken) })
}

// pauseAfterDeletion leaves the writers waiting behind a batch (SQLite has one writer)
// as much time as the batch took before the next is taken.
func (d *sqliteDialect) pauseAfterDeletion(ctx context.Context, took time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(took):
	}
}

// concurrentWrite: SQLite's one writer never meets another's uncommitted rows.
func (d *sqliteDialect) concurrentWrite(error) bool { return false }

// rowLock: the one writer holds the whole store for its transaction.
func (d *sqliteDialect) rowLock() string { return "" }

func (d *sqliteDialect) deleteTenantJobsSQL() string {
	return `DELETE FROM river_job WHERE kind LIKE 'scorekit\_%' ESCAPE '\' AND json_extract(args, '$.tenant') = $1`
}

func (d *sqliteDialect) insertEvaluationRuns(ctx context.Context, q querier, evalPK int64, runPKs []int64, first int64) error {
	_, err := evaluationRunsInsert.exec(ctx, q, len(runPKs), func(i int, args []any) []any {
		return append(args, evalPK, runPKs[i], first+int64(i))
	})
	return err
}

// evaluationRunsInsert is insertEvaluationRuns' statement.
var evaluationRunsInsert = &batchInsert{head: `INSERT INTO evaluation_runs (evaluation_id, run_pk, position) VALUES `, cols: 3}

// sqlConn is a database/sql pool or transaction.
type sqlConn interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// sqlQuerier runs statements on a pool or a transaction. Its connections keep the
// statements they run (cachingConn), so it prepares nothing itself.
type sqlQuerier struct {
	c sqlConn
	// read, when set, runs the SELECTs of a pool (not a transaction): the read
	// connections beside the writer.
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

// sqliteTx is a transaction on the writer's connection or, read-only, on a reader's.
type sqliteTx struct {
	sqlQuerier
	tx *sql.Tx
}

func (t sqliteTx) commit(context.Context) error { return t.tx.Commit() }

func (t sqliteTx) rollback(context.Context) { _ = t.tx.Rollback() }

func (t sqliteTx) sqlTx() *sql.Tx { return t.tx }

func (t sqliteTx) pgxTx() pgx.Tx { return nil }
