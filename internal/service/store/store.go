// Package store keeps what the evaluation service knows: tenants and their policies, API
// keys (only their hashes), runs, evaluations and every result ever produced, with the
// scorer's name and version on each.
//
// One [Store] type serves two backends: embedded SQLite (a file; the default, nothing to
// start; modernc.org/sqlite, pure Go) and PostgreSQL (pgx) for teams and for several
// processes on one database. The SQL is written once (both take $N placeholders, ON
// CONFLICT and RETURNING); only the migrations, under migrations/, differ in column types.
// Migrations run when a store is opened.
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
	"io/fs"
	"maps"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // the database/sql driver "sqlite"
)

// Backends.
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
	queries
	backend string
	// Exactly one of these is set.
	sqlDB *sql.DB
	pool  *pgxpool.Pool
	// group batches InSharedTx's callers (SQLite).
	group group
	// readDB holds SQLite's connections for reads outside a transaction (nil for a
	// database in memory, and PostgreSQL).
	readDB *sql.DB
	// spanTurns are the tenants' turns to keep open spans on SQLite (WithOpenSpans), by
	// tenant id modulo their number.
	spanTurns [16]sync.Mutex
}

// Open opens the store at dsn and migrates it up to date: a postgres:// or postgresql://
// URL opens PostgreSQL; anything else is a SQLite file path (created when missing; a
// "sqlite:" prefix is optional).
func Open(ctx context.Context, dsn string) (*Store, error) {
	s, err := openBackend(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx, 0); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// openBackend connects to the store at dsn without migrating it.
func openBackend(ctx context.Context, dsn string) (*Store, error) {
	if IsPostgres(dsn) {
		return openPostgres(ctx, dsn)
	}
	return openSQLite(strings.TrimPrefix(dsn, "sqlite:"))
}

// IsPostgres reports whether dsn names a PostgreSQL database.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// sqlitePragmas are the settings of every SQLite connection, chosen by measurement
// (BenchmarkSQLiteSettings; RATIONALE.md, "SQLite's settings").
var sqlitePragmas = []string{"busy_timeout(10000)", "journal_mode(WAL)", "foreign_keys(1)", "synchronous(NORMAL)"}

func openSQLite(path string) (*Store, error) {
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
	st := &Store{backend: SQLite, sqlDB: db}
	q := sqlQuerier{c: db}
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
		st.readDB, q.read = rdb, rdb
	}
	st.queries = queries{q}
	return st, nil
}

// sqliteReaders is how many connections SQLite's reads outside a transaction take.
const sqliteReaders = 4

func openPostgres(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: connect to PostgreSQL: %w", err)
	}
	return &Store{backend: Postgres, queries: queries{pgxPoolQuerier(pool)}, pool: pool}, nil
}

// Migrations returns the goose migrations of backend (SQLite or Postgres), for tools that
// apply or time them outside Open (bench/size times the newest at ten million runs).
func Migrations(backend string) (fs.FS, error) {
	if backend != SQLite && backend != Postgres {
		return nil, fmt.Errorf("store: migrations: backend %q: want %q or %q", backend, SQLite, Postgres)
	}
	return fs.Sub(migrations, "migrations/"+backend)
}

// migrate runs the backend's migrations up to version to, or to the latest when to is 0
// (a test opens an older schema to migrate rows written under it).
func (s *Store) migrate(ctx context.Context, to int64) error {
	sub, err := Migrations(s.backend)
	if err != nil {
		return err
	}
	db, dialect := s.sqlDB, goose.DialectSQLite3
	if s.pool != nil {
		db, dialect = stdlib.OpenDBFromPool(s.pool), goose.DialectPostgres
		defer db.Close()
	}
	p, err := goose.NewProvider(dialect, db, sub, goose.WithTableName("scorekit_migrations"))
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

// Backend is SQLite or Postgres.
func (s *Store) Backend() string { return s.backend }

// SQLDB is the SQLite pool (nil for PostgreSQL), for River's SQLite driver.
func (s *Store) SQLDB() *sql.DB { return s.sqlDB }

// Pool is the PostgreSQL pool (nil for SQLite), for River's PostgreSQL driver.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close releases the store's connections.
func (s *Store) Close() {
	if s.sqlDB != nil {
		_ = s.sqlDB.Close()
	}
	if s.readDB != nil {
		_ = s.readDB.Close()
	}
	if s.pool != nil {
		s.pool.Close()
	}
}

// Tx is a transaction. Its methods are the store's writes; River inserts and completes
// jobs in the same transaction through SQLTx or PgxTx.
type Tx struct {
	queries
	s     *Store
	sqlTx *sql.Tx
	pgxTx pgx.Tx

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
func (tx *Tx) SQLTx() *sql.Tx { return tx.sqlTx }

// PgxTx is the PostgreSQL transaction (nil for SQLite).
func (tx *Tx) PgxTx() pgx.Tx { return tx.pgxTx }

// InTx runs f in a transaction, committed when f returns nil and rolled back otherwise.
// On SQLite the store has one connection: f must use tx, never s.
func (s *Store) InTx(ctx context.Context, f func(tx *Tx) error) error {
	if s.pool != nil {
		ptx, err := s.pool.Begin(ctx)
		if err != nil {
			return fmt.Errorf("store: begin: %w", err)
		}
		defer ptx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after commit it is a no-op
		tx := &Tx{s: s, queries: queries{pgxTxQuerier(ptx)}, pgxTx: ptx}
		if err := f(tx); err != nil {
			return err
		}
		if err := tx.beforeCommit(ctx); err != nil {
			return err
		}
		if err := ptx.Commit(ctx); err != nil {
			return fmt.Errorf("store: commit: %w", err)
		}
		return nil
	}
	stx, err := s.sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	defer stx.Rollback() //nolint:errcheck // after commit it is a no-op
	tx := &Tx{s: s, queries: queries{sqlQuerier{c: stx}}, sqlTx: stx}
	if err := f(tx); err != nil {
		return err
	}
	if err := tx.beforeCommit(ctx); err != nil {
		return err
	}
	if err := stx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// readSnapshot runs f with reads of one snapshot of the store, in a read-only transaction
// that holds no writer up: on SQLite on a read connection (WAL keeps the snapshot while
// the writer commits), on PostgreSQL at REPEATABLE READ. A SQLite database in memory has
// one connection, so its snapshot is a transaction on it.
func (s *Store) readSnapshot(ctx context.Context, f func(q queries) error) error {
	switch {
	case s.pool != nil:
		ptx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return fmt.Errorf("store: begin a snapshot: %w", err)
		}
		defer ptx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only: nothing to keep
		return f(queries{pgxTxQuerier(ptx)})
	case s.readDB != nil:
		stx, err := s.readDB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return fmt.Errorf("store: begin a snapshot: %w", err)
		}
		defer stx.Rollback() //nolint:errcheck // read-only: nothing to keep
		return f(queries{sqlQuerier{c: stx}})
	}
	return s.InTx(ctx, func(tx *Tx) error { return f(tx.queries) })
}

// queries are the reads and writes, on the pool (Store) or in a transaction (Tx).
type queries struct{ q querier }

// micros and fromMicros convert times to and from the stored Unix microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// notFound maps sql.ErrNoRows to ErrNotFound with what was looked for.
func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return err
}
