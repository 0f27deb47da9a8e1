package store

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

// OpenAt opens the store at dsn migrated up to version only, for tests of a migration
// over rows written before it.
func OpenAt(ctx context.Context, dsn string, version int64) (*Store, error) {
	var (
		s   *Store
		err error
	)
	if IsPostgres(dsn) {
		s, err = openPostgres(ctx, dsn)
	} else {
		s, err = openSQLite(strings.TrimPrefix(dsn, "sqlite:"))
	}
	if err != nil {
		return nil, err
	}
	sub, err := fs.Sub(migrations, "migrations/"+s.backend)
	if err != nil {
		return nil, err
	}
	db, dialect := s.sqlDB, goose.DialectSQLite3
	if s.pool != nil {
		db, dialect = stdlib.OpenDBFromPool(s.pool), goose.DialectPostgres
		defer db.Close()
	}
	p, err := goose.NewProvider(dialect, db, sub, goose.WithTableName("scorekit_migrations"))
	if err != nil {
		return nil, err
	}
	if _, err := p.UpTo(ctx, version); err != nil {
		s.Close()
		return nil, fmt.Errorf("migrate to %d: %w", version, err)
	}
	return s, nil
}

// Exec runs a statement on the store, for tests that write or read rows as they are.
func (s *Store) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	return s.q.exec(ctx, q, args...)
}
