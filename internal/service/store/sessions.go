package store

import (
	"context"
	"fmt"
	"time"
)

// CreateSession stores a dashboard session: the hash of its token, the tenant, the key it
// was opened with (0 in open mode) and when it expires.
func (q queries) CreateSession(ctx context.Context, hash []byte, tenantID, keyID int64, expires time.Time) error {
	var key any
	if keyID != 0 {
		key = keyID
	}
	_, err := q.q.exec(ctx, `INSERT INTO web_sessions (hash, tenant_id, key_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
		hash, tenantID, key, micros(time.Now()), micros(expires))
	if err != nil {
		return fmt.Errorf("store: create session: %w", err)
	}
	return nil
}

// SessionTenant returns the tenant of a live session: not expired at now, and opened
// with a key that is not revoked since (or in open mode), and the scope of that key
// (admin in open mode).
func (q queries) SessionTenant(ctx context.Context, hash []byte, now time.Time) (Tenant, Scope, error) {
	return q.tenantScope(ctx, "session", `SELECT t.id, t.name, t.policy, t.created_at, COALESCE(k.scope, $3)
		FROM web_sessions s JOIN tenants t ON t.id = s.tenant_id LEFT JOIN api_keys k ON k.id = s.key_id
		WHERE s.hash = $1 AND s.expires_at > $2 AND (s.key_id IS NULL OR k.revoked_at IS NULL)`, hash, micros(now), string(ScopeAdmin))
}

// SessionLabeller returns the labeller of the key a live session was opened with: "" for
// a key of another scope, and in open mode.
func (q queries) SessionLabeller(ctx context.Context, hash []byte, now time.Time) (string, error) {
	var l string
	err := queryRow(ctx, q.q, `SELECT COALESCE(k.labeller, '') FROM web_sessions s LEFT JOIN api_keys k ON k.id = s.key_id
		WHERE s.hash = $1 AND s.expires_at > $2`, []any{hash, micros(now)}, &l)
	return l, notFound(err, "session")
}

// DeleteSession ends a session, and every session expired at now.
func (q queries) DeleteSession(ctx context.Context, hash []byte, now time.Time) error {
	_, err := q.q.exec(ctx, `DELETE FROM web_sessions WHERE hash = $1 OR expires_at <= $2`, hash, micros(now))
	return err
}

// KeyByHash returns the live key whose hash is hash.
func (q queries) KeyByHash(ctx context.Context, hash []byte) (Key, error) {
	var (
		k     Key
		scope string
		at    int64
	)
	err := queryRow(ctx, q.q, `SELECT id, tenant_id, prefix, scope, labeller, created_at FROM api_keys WHERE hash = $1 AND revoked_at IS NULL`,
		[]any{hash}, &k.ID, &k.TenantID, &k.Prefix, &scope, &k.Labeller, &at)
	if err != nil {
		return k, notFound(err, "key")
	}
	k.Scope, k.CreatedAt = Scope(scope), fromMicros(at)
	return k, nil
}
