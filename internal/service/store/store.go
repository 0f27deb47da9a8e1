// Package store keeps what the evaluation service knows: tenants and their policies, API
// keys (only their hashes), runs, evaluations and every result ever produced, with the
// scorer's name and version on each.
//
// One [Store] type serves two databases: embedded SQLite (a file; the default, nothing to
// start; modernc.org/sqlite, pure Go) and PostgreSQL (pgx) for teams and for several
// processes on one database. The SQL is written once (both take $N placeholders, ON
// CONFLICT and RETURNING); what differs between the two is behind one interface with an
// implementation per database (dialect.go), and the migrations, under migrations/, differ
// only in column types. Migrations run when a store is opened.
//
// Every query that reads tenant data takes the tenant's id: another tenant's run, agent
// or evaluation is [ErrNotFound], never data.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pressly/goose/v3"
)

// Databases.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// Errors callers branch on.
var (
	// ErrNotFound: no such tenant, key, run, evaluation or policy for this tenant.
	ErrNotFound = errors.New("not found")
	// ErrExists: a tenant of that name already exists.
	ErrExists = errors.New("already exists")
)

//go:embed migrations
var migrations embed.FS

// Store is the service's data. It is safe for concurrent use.
type Store struct {
	// queries run on the pool of queries.d, the store's database.
	queries
}

// Open opens the store at dsn and migrates it up to date: a postgres:// or postgresql://
// URL opens PostgreSQL; anything else is a SQLite file path (created when missing; a
// "sqlite:" prefix is optional).
func Open(ctx context.Context, dsn string) (*Store, error) {
	s, err := openDatabase(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx, 0); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// openDatabase connects to the store at dsn without migrating it.
func openDatabase(ctx context.Context, dsn string) (*Store, error) {
	d, err := openDialect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return newStore(d), nil
}

// newStore is the store on d.
func newStore(d dialect) *Store { return &Store{queries{q: d.pool(), d: d}} }

// migrate runs the database's migrations up to version to, or to the latest when to is 0
// (a test opens an older schema to migrate rows written under it).
func (s *Store) migrate(ctx context.Context, to int64) error {
	sub, err := Migrations(s.d.database())
	if err != nil {
		return err
	}
	db, gd, release := s.d.migrator()
	defer release()
	p, err := goose.NewProvider(gd, db, sub, goose.WithTableName("scorekit_migrations"))
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	if to > 0 {
		_, err = p.UpTo(ctx, to)
	} else {
		_, err = p.Up(ctx)
	}
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	return nil
}

// Version returns the schema version the store is migrated to.
func (s *Store) Version(ctx context.Context) (int64, error) {
	var v int64
	err := queryRow(ctx, s.q, `SELECT COALESCE(MAX(version_id), 0) FROM scorekit_migrations WHERE is_applied`, nil, &v)
	return v, err
}

// Database is SQLite or Postgres.
func (s *Store) Database() string { return s.d.database() }

// SQLDB is the SQLite pool (nil for PostgreSQL), for River's SQLite driver.
func (s *Store) SQLDB() *sql.DB { return s.d.sqlDB() }

// Pool is the PostgreSQL pool (nil for SQLite), for River's PostgreSQL driver.
func (s *Store) Pool() *pgxpool.Pool { return s.d.pgxPool() }

// Close releases the store's connections.
func (s *Store) Close() { s.d.close() }

// Tx is a transaction. Its methods are the store's writes; River inserts and completes
// jobs in the same transaction through SQLTx or PgxTx.
type Tx struct {
	queries
	conn txConn

	// shared and hooks are what the transaction's functions leave for each other and
	// for the commit (Share, BeforeCommit).
	shared map[any]any
	hooks  []txHook
}

// txHook is a function BeforeCommit registered, under its key.
type txHook struct {
	key any
	fn  func(context.Context, *Tx) error
}

// Shared returns what a function of the transaction kept under key with Share, or nil.
// InSharedTx runs several callers' functions in one transaction: what one learnt (an
// agent's policy, its open evaluation) the next need not read again.
func (tx *Tx) Shared(key any) any { return tx.shared[key] }

// Share keeps v under key for the transaction's later functions. A function that fails
// has what it shared undone with its writes, so v is replaced, never changed in place.
func (tx *Tx) Share(key, v any) {
	if tx.shared == nil {
		tx.shared = map[any]any{}
	}
	tx.shared[key] = v
}

// BeforeCommit runs fn after every function of the transaction and before its commit,
// once for key however many functions register it: the functions of a shared transaction
// can leave a write they all add to (the runs joining an evaluation) to one statement.
// An error of fn fails the transaction, and with it every function that shared it. A
// function that fails has its registrations undone with its writes.
func (tx *Tx) BeforeCommit(key any, fn func(ctx context.Context, tx *Tx) error) {
	for _, h := range tx.hooks {
		if h.key == key {
			return
		}
	}
	tx.hooks = append(tx.hooks, txHook{key, fn})
}

// txState is what Share and BeforeCommit left at some point, to undo a function's.
type txState struct {
	shared map[any]any
	hooks  int
}

func (tx *Tx) save() txState { return txState{maps.Clone(tx.shared), len(tx.hooks)} }

func (tx *Tx) restore(s txState) { tx.shared, tx.hooks = s.shared, tx.hooks[:s.hooks] }

// beforeCommit runs the BeforeCommit functions, in the order they were registered.
func (tx *Tx) beforeCommit(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("store: %w: %v", errPanic, r)
		}
	}()
	for _, h := range tx.hooks {
		if err := h.fn(ctx, tx); err != nil {
			return err
		}
	}
	return nil
}

// SQLTx is the SQLite transaction (nil for PostgreSQL).
func (tx *Tx) SQLTx() *sql.Tx { return tx.conn.sqlTx() }

// PgxTx is the PostgreSQL transaction (nil for SQLite).
func (tx *Tx) PgxTx() pgx.Tx { return tx.conn.pgxTx() }

// InTx runs f in a transaction, committed when f returns nil and rolled back otherwise.
// On SQLite the store has one connection: f must use tx, never s.
func (s *Store) InTx(ctx context.Context, f func(tx *Tx) error) error { return inTx(ctx, s.d, f) }

// readSnapshot runs f with reads of one snapshot of the store, in a read-only transaction
// that holds no writer up: on SQLite on a read connection (WAL keeps the snapshot while
// the writer commits), on PostgreSQL at REPEATABLE READ. A SQLite database in memory has
// one connection, so its snapshot is a transaction on it.
func (s *Store) readSnapshot(ctx context.Context, f func(q queries) error) error {
	c, err := s.d.beginSnapshot(ctx)
	if err != nil {
		return fmt.Errorf("store: begin a snapshot: %w", err)
	}
	defer c.rollback(ctx)
	return f(queries{q: c, d: s.d})
}

// queries are the reads and writes, on the pool (Store) or in a transaction (Tx): q runs
// their statements, d is what they ask of the database they run on.
type queries struct {
	q querier
	d dialect
}

// micros and fromMicros convert times to and from the stored Unix microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// fromMicrosOrNil is fromMicros of a column that may be NULL (nil).
func fromMicrosOrNil(us *int64) *time.Time {
	if us == nil {
		return nil
	}
	t := fromMicros(*us)
	return &t
}

// notFound maps sql.ErrNoRows to ErrNotFound with what was looked for, formatted (as
// fmt.Sprintf does) only then; any other err is returned as it is. A read calls it once
// err is not nil: its arguments are boxed on every call, which a point read need not pay.
func notFound(err error, format string, args ...any) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrNotFound)
	}
	return err
}
