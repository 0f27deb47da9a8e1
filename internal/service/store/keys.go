package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Scope is what a key may do. A key has one scope; admin includes the others.
type Scope string

// Scopes of keys.
const (
	// ScopeIngest writes runs and nothing else: for agents' exporters and importers.
	ScopeIngest Scope = "ingest"
	// ScopeRead reads runs, evaluations, results, insights and the dashboard, and changes
	// nothing: for dashboards and reports.
	ScopeRead Scope = "read"
	// ScopeLabel reads what read does and writes labels under one labeller's name, the
	// key's (Key.Labeller): for the people who label runs, who must not be able to
	// change policies, publish or delete.
	ScopeLabel Scope = "label"
	// ScopeAdmin does everything: evaluations, policies, deletion, the tenant's judge
	// settings, publishing. Keys made before scopes existed are admin keys.
	ScopeAdmin Scope = "admin"
)

// Scopes lists every scope, narrowest first.
func Scopes() []Scope { return []Scope{ScopeIngest, ScopeRead, ScopeLabel, ScopeAdmin} }

// ParseScope returns the scope named s, or an error that lists the scopes.
func ParseScope(s string) (Scope, error) {
	all := Scopes()
	for _, sc := range all {
		if string(sc) == s {
			return sc, nil
		}
	}
	names := make([]string, len(all))
	for i, sc := range all {
		names[i] = string(sc)
	}
	return "", fmt.Errorf("scope %q: want one of %s", s, strings.Join(names, ", "))
}

// Grants reports whether a key of scope s may do what needs scope need: admin may do
// everything, label what needs label or read, ingest and read only what needs exactly
// them.
func (s Scope) Grants(need Scope) bool {
	return s == ScopeAdmin || s == need || s == ScopeLabel && need == ScopeRead
}

// Key is an API key as the store knows it: never the key itself, only its SHA-256 (keys
// are 256-bit random strings, so a fast hash is enough) and a prefix to tell keys apart.
type Key struct {
	ID       int64
	TenantID int64
	Prefix   string
	Scope    Scope
	// Labeller is whose labels a key of scope label writes; empty for other scopes.
	Labeller  string
	CreatedAt time.Time
	RevokedAt *time.Time
}

// CreateKey stores the hash of a new key of the tenant with scope; labeller names the
// labeller of a label key and must be empty for the others.
func (q queries) CreateKey(ctx context.Context, tenantID int64, hash []byte, prefix string, scope Scope, labeller string) (Key, error) {
	if _, err := ParseScope(string(scope)); err != nil {
		return Key{}, fmt.Errorf("store: create key: %w", err)
	}
	if (scope == ScopeLabel) != (labeller != "") {
		return Key{}, fmt.Errorf("store: create key: a key of scope label names its labeller, and no other key does (scope %s, labeller %q)", scope, labeller)
	}
	now := time.Now()
	k := Key{TenantID: tenantID, Prefix: prefix, Scope: scope, Labeller: labeller, CreatedAt: fromMicros(micros(now))}
	err := queryRow(ctx, q.q, `INSERT INTO api_keys (tenant_id, hash, prefix, scope, labeller, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		[]any{tenantID, hash, prefix, string(scope), labeller, micros(now)}, &k.ID)
	return k, err
}

// KeyLabeller returns the labeller of the live label key whose hash is hash ("" for a
// key of another scope).
func (q queries) KeyLabeller(ctx context.Context, hash []byte) (string, error) {
	var l string
	err := queryRow(ctx, q.q, `SELECT labeller FROM api_keys WHERE hash = $1 AND revoked_at IS NULL`, []any{hash}, &l)
	return l, notFound(err, "key")
}

// TenantByKey returns the tenant whose live (not revoked) key has hash, and the key's
// scope.
func (q queries) TenantByKey(ctx context.Context, hash []byte) (Tenant, Scope, error) {
	return q.tenantScope(ctx, "key", `SELECT t.id, t.name, t.policy, t.created_at, k.scope FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
		WHERE k.hash = $1 AND k.revoked_at IS NULL`, hash)
}

// tenantScope reads the first row of query: a tenant's columns and a scope. No row is
// [ErrNotFound], of what.
func (q queries) tenantScope(ctx context.Context, what, query string, args ...any) (Tenant, Scope, error) {
	var scope string
	t, err := first(ctx, q.q, query, args, func(s scanner) (Tenant, error) {
		return scanTenant(wider{scanner: s, trail: []any{&scope}})
	})
	if err != nil {
		return Tenant{}, "", notFound(err, "%s", what)
	}
	return t, Scope(scope), nil
}

// Keys lists the tenant's keys, oldest first.
func (q queries) Keys(ctx context.Context, tenantID int64) ([]Key, error) {
	return collect(ctx, q.q, `SELECT id, tenant_id, prefix, scope, labeller, created_at, revoked_at FROM api_keys WHERE tenant_id = $1 ORDER BY id`,
		[]any{tenantID}, func(s scanner) (Key, error) {
			var (
				k       Key
				scope   string
				at      int64
				revoked *int64
			)
			err := s.Scan(&k.ID, &k.TenantID, &k.Prefix, &scope, &k.Labeller, &at, &revoked)
			k.Scope, k.CreatedAt, k.RevokedAt = Scope(scope), fromMicros(at), fromMicrosOrNil(revoked)
			return k, err
		})
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
