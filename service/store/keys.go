package store

import (
	"context"
	"fmt"
	"time"
)

// Key is an API key as the store knows it: never the key itself, only its SHA-256 (keys
// are 256-bit random strings, so a fast hash is enough) and a prefix to tell keys apart.
type Key struct {
	ID        int64
	TenantID  int64
	Prefix    string
	CreatedAt time.Time
	RevokedAt *time.Time
}

// CreateKey stores the hash of a new key of the tenant.
func (q queries) CreateKey(ctx context.Context, tenantID int64, hash []byte, prefix string) (Key, error) {
	now := time.Now()
	k := Key{TenantID: tenantID, Prefix: prefix, CreatedAt: fromMicros(micros(now))}
	err := queryRow(ctx, q.q, `INSERT INTO api_keys (tenant_id, hash, prefix, created_at) VALUES ($1, $2, $3, $4) RETURNING id`,
		[]any{tenantID, hash, prefix, micros(now)}, &k.ID)
	return k, err
}

// TenantByKey returns the tenant whose live (not revoked) key has hash.
func (q queries) TenantByKey(ctx context.Context, hash []byte) (Tenant, error) {
	return q.oneTenant(ctx, "key", `id = (SELECT tenant_id FROM api_keys WHERE hash = $1 AND revoked_at IS NULL)`, hash)
}

// Keys lists the tenant's keys, oldest first.
func (q queries) Keys(ctx context.Context, tenantID int64) ([]Key, error) {
	rs, err := q.q.query(ctx, `SELECT id, tenant_id, prefix, created_at, revoked_at FROM api_keys WHERE tenant_id = $1 ORDER BY id`, tenantID)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []Key
	for rs.Next() {
		var (
			k       Key
			at      int64
			revoked *int64
		)
		if err := rs.Scan(&k.ID, &k.TenantID, &k.Prefix, &at, &revoked); err != nil {
			return nil, err
		}
		k.CreatedAt = fromMicros(at)
		if revoked != nil {
			t := fromMicros(*revoked)
			k.RevokedAt = &t
		}
		out = append(out, k)
	}
	return out, rs.Err()
}

// RevokeKey revokes the tenant's live keys whose prefix is prefix and returns how many.
// A revoked key authenticates no more; its row stays for the record.
func (q queries) RevokeKey(ctx context.Context, tenantID int64, prefix string) (int64, error) {
	n, err := q.q.exec(ctx, `UPDATE api_keys SET revoked_at = $1 WHERE tenant_id = $2 AND prefix = $3 AND revoked_at IS NULL`,
		micros(time.Now()), tenantID, prefix)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, fmt.Errorf("live key %q of tenant %d: %w", prefix, tenantID, ErrNotFound)
	}
	return n, nil
}

// CountLiveKeys counts the keys of every tenant that are not revoked.
func (q queries) CountLiveKeys(ctx context.Context) (int64, error) {
	var n int64
	err := queryRow(ctx, q.q, `SELECT COUNT(*) FROM api_keys WHERE revoked_at IS NULL`, nil, &n)
	return n, err
}
