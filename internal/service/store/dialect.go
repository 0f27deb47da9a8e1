package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"
)

// dialect is one database's side of the store, as River has a driver per database:
// every way SQLite and PostgreSQL differ is a method of it, implemented once for each
// (dialect_sqlite.go, dialect_postgres.go), and nothing else in the store asks which
// database it runs on. The SQL of the queries is written once, in PostgreSQL's dialect
// ($N placeholders, ON CONFLICT, RETURNING), which SQLite takes as it is but for the
// placeholders, rewritten when a connection prepares a statement
// (dialect_sqlite_conn.go). Times are Unix microseconds and JSON travels as text on both.
// The migrations differ only in the column types each database maps
// (TestMigrationTreesAgree).
type dialect interface {
	// database is SQLite or Postgres: Store.Database, and the folder of migrations/ that
	// holds the database's tree.
	database() string
	// pool runs statements outside a transaction.
	pool() querier
	// begin starts a write transaction.
	begin(ctx context.Context) (txConn, error)
	// beginSnapshot starts a read-only transaction that reads one snapshot of the store
	// and holds no writer up.
	beginSnapshot(ctx context.Context) (txConn, error)
	// migrator returns the handle and goose's dialect the migrations run with, and what
	// releases the handle.
	migrator() (*sql.DB, goose.Dialect, func())
	// sqlDB and pgxPool are the handles River's driver of the database takes (nil on the
	// other database).
	sqlDB() *sql.DB
	pgxPool() *pgxpool.Pool
	// withHandle calls the function of h for this database (Store.WithHandle).
	withHandle(h Handles) error
	// close releases the connections.
	close()

	// inSharedTx is Store.InSharedTx.
	inSharedTx(ctx context.Context, f func(context.Context, *Tx) error) error
	// withOpenSpans is Store.WithOpenSpans: the tenant's turn to keep spans.
	withOpenSpans(ctx context.Context, tenantID int64, now time.Time, f func(tx *Tx, taken int64) error) error
	// pauseAfterDeletion runs between the batches of a deletion, the last of which took
	// took: time for the writers that waited behind it.
	pauseAfterDeletion(ctx context.Context, took time.Duration)
	// concurrentWrite reports whether err is the database's refusal of a write because
	// of another transaction's (a deletion that met a row committed meanwhile).
	concurrentWrite(err error) bool

	// rowLock is the clause a SELECT in a transaction ends with to lock the rows it
	// reads until the transaction ends: " FOR NO KEY UPDATE", which the foreign-key
	// checks of other writes do not wait for; "" where one writer holds the whole store
	// for its transaction.
	rowLock() string
	// deleteTenantJobsSQL deletes the jobs of the tenant $1 from River's table: their
	// arguments name the tenant (and evaluation, run and insight ids), which must not
	// outlive it.
	deleteTenantJobsSQL() string
	// insertEvaluationRuns adds runPKs to the evaluation evalPK at positions first,
	// first+1, ...
	insertEvaluationRuns(ctx context.Context, q querier, evalPK int64, runPKs []int64, first int64) error
}

// Handles are what a library with a driver per database (River, goose) is given: the
// function for the store's database is called with its handle, so the caller does not ask
// which database the store runs on.
type Handles struct {
	SQLite   func(db *sql.DB) error
	Postgres func(pool *pgxpool.Pool) error
}

// WithHandle calls the function of h for the store's database with its handle.
func (s *Store) WithHandle(h Handles) error { return s.d.withHandle(h) }

// txConn is a transaction of a dialect: its statements, its end, and its handle for
// River's driver (SQLTx or PgxTx; nil on the other database).
type txConn interface {
	querier
	commit(ctx context.Context) error
	// rollback ends the transaction without its writes; after a commit it does nothing.
	rollback(ctx context.Context)
	sqlTx() *sql.Tx
	pgxTx() pgx.Tx
}

// IsPostgres reports whether dsn names a PostgreSQL database.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// openDialect connects to the database dsn names: a postgres:// or postgresql:// URL is
// PostgreSQL; anything else is a SQLite file path (a "sqlite:" prefix is optional). It is
// where the store picks its database, once.
func openDialect(ctx context.Context, dsn string) (dialect, error) {
	if IsPostgres(dsn) {
		return openPostgres(ctx, dsn)
	}
	return openSQLite(strings.TrimPrefix(dsn, "sqlite:"))
}

// databases are the databases a store runs on (Store.Database), each with a tree of
// migrations/ by its name.
var databases = []string{SQLite, Postgres}

// Migrations returns the goose migrations of database (SQLite or Postgres), for tools that
// apply or time them outside Open (bench/size times the newest at ten million runs).
func Migrations(database string) (fs.FS, error) {
	if !slices.Contains(databases, database) {
		return nil, fmt.Errorf("store: migrations: database %q: want %q or %q", database, SQLite, Postgres)
	}
	return fs.Sub(migrations, "migrations/"+database)
}

// inTx runs f in a transaction of d, committed when f and the BeforeCommit functions
// return nil and rolled back otherwise.
func inTx(ctx context.Context, d dialect, f func(tx *Tx) error) error {
	c, err := d.begin(ctx)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer c.rollback(ctx)
	tx := &Tx{queries: queries{q: c, d: d}, conn: c}
	if err := f(tx); err != nil {
		return err
	}
	if err := tx.beforeCommit(ctx); err != nil {
		return err
	}
	if err := c.commit(ctx); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}
