package store

import (
	"context"
	"fmt"
)

// RecordCompiledSize records the bytes of the compiled code of the tenant's module of
// digest, where none is recorded yet (0: a module stored before migration 00015, or one
// being stored). A module's compiled code is the same bytes on every machine of one
// architecture, so the first measure stands.
func (q queries) RecordCompiledSize(ctx context.Context, tenantID int64, digest string, size int64) error {
	if _, err := q.q.exec(ctx, `UPDATE scorer_modules SET compiled_size = $3 WHERE tenant_id = $1 AND digest = $2 AND compiled_size = 0`,
		tenantID, digest, size); err != nil {
		return fmt.Errorf("store: compiled size of module %s: %w", digest, err)
	}
	return nil
}

// StoredBytes is what counts toward the tenant's stored-bytes quota: the bytes of every
// module it stores, and of the compiled code of those a version that is not deleted
// needs (the code of a module no version needs is removed from disk).
func (q queries) StoredBytes(ctx context.Context, tenantID int64) (modules, compiled int64, err error) {
	err = queryRow(ctx, q.q, `SELECT COALESCE(SUM(size), 0),
		COALESCE(SUM(CASE WHEN EXISTS (SELECT 1 FROM scorer_versions v WHERE v.tenant_id = m.tenant_id AND v.digest = m.digest
			AND v.kind = 'wasm' AND v.deleted_at IS NULL) THEN compiled_size ELSE 0 END), 0)
		FROM scorer_modules m WHERE m.tenant_id = $1`, []any{tenantID}, &modules, &compiled)
	return modules, compiled, err
}

// NeedsModule reports whether a version of the tenant's that is not deleted runs the
// module of digest.
func (q queries) NeedsModule(ctx context.Context, tenantID int64, digest string) (bool, error) {
	var n int64
	err := queryRow(ctx, q.q, `SELECT COUNT(*) FROM scorer_versions WHERE tenant_id = $1 AND digest = $2 AND kind = 'wasm' AND deleted_at IS NULL`,
		[]any{tenantID, digest}, &n)
	return n > 0, err
}
