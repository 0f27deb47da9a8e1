package store

import "context"

// OpenAt opens the store at dsn migrated up to version only, for tests of a migration
// over rows written before it.
func OpenAt(ctx context.Context, dsn string, version int64) (*Store, error) {
	s, err := openDatabase(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx, version); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Exec runs a statement on the store, for tests that write rows as they were.
func (s *Store) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	return s.q.exec(ctx, q, args...)
}

// SetBeforeTenantRow makes f run once, in the next tenant deletion, just before the
// tenant's row is deleted.
func SetBeforeTenantRow(f func()) { testHookBeforeTenantRow = f }
