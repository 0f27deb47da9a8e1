package store

import (
	"context"
	"fmt"
	"time"
)

// JudgeKey is a tenant's own key for a judge endpoint as the store keeps it: sealed
// (internal/service/secrets), never in the clear.
type JudgeKey struct {
	TenantID  int64
	Endpoint  string
	Sealed    []byte
	UpdatedAt time.Time
}

// SetJudgeKey stores the tenant's sealed key for endpoint, replacing any.
func (q queries) SetJudgeKey(ctx context.Context, tenantID int64, endpoint string, sealed []byte) error {
	_, err := q.q.exec(ctx, `INSERT INTO tenant_judge_keys (tenant_id, endpoint, sealed, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (tenant_id, endpoint) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`,
		tenantID, endpoint, sealed, micros(time.Now()))
	if err != nil {
		return fmt.Errorf("store: set judge key of tenant %d for %q: %w", tenantID, endpoint, err)
	}
	return nil
}

// DeleteJudgeKey removes the tenant's key for endpoint; none is [ErrNotFound].
func (q queries) DeleteJudgeKey(ctx context.Context, tenantID int64, endpoint string) error {
	n, err := q.q.exec(ctx, `DELETE FROM tenant_judge_keys WHERE tenant_id = $1 AND endpoint = $2`, tenantID, endpoint)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("judge key of tenant %d for %q: %w", tenantID, endpoint, ErrNotFound)
	}
	return nil
}

// JudgeKeys returns the tenant's sealed keys, by endpoint. tenantID 0 returns every
// tenant's (the rotation reseals them all).
func (q queries) JudgeKeys(ctx context.Context, tenantID int64) ([]JudgeKey, error) {
	query := `SELECT tenant_id, endpoint, sealed, updated_at FROM tenant_judge_keys WHERE tenant_id = $1 ORDER BY endpoint`
	args := []any{tenantID}
	if tenantID == 0 {
		query, args = `SELECT tenant_id, endpoint, sealed, updated_at FROM tenant_judge_keys ORDER BY tenant_id, endpoint`, nil
	}
	return collect(ctx, q.q, query, args, func(s scanner) (JudgeKey, error) {
		var (
			k  JudgeKey
			at int64
		)
		err := s.Scan(&k.TenantID, &k.Endpoint, &k.Sealed, &at)
		k.UpdatedAt = fromMicros(at)
		return k, err
	})
}

// ResealJudgeKey replaces a sealed key with the same key sealed again (a rotation of the
// operator's key), unless it changed since it was read (old is what was read): a tenant
// that stored a new key meanwhile keeps it. It reports whether the row was replaced.
func (q queries) ResealJudgeKey(ctx context.Context, tenantID int64, endpoint string, old, sealed []byte) (bool, error) {
	n, err := q.q.exec(ctx, `UPDATE tenant_judge_keys SET sealed = $1 WHERE tenant_id = $2 AND endpoint = $3 AND sealed = $4`,
		sealed, tenantID, endpoint, old)
	return n == 1, err
}
