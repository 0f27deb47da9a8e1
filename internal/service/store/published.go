package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Kinds of published scorer.
const (
	// KindConfigured: a scorer the host has (a built-in) with a pinned config.
	KindConfigured = "configured"
	// KindWASM: a WASM module the tenant uploaded, with its manifest.
	KindWASM = "wasm"
)

// ScorerVersion is one immutable version of a tenant's published scorer.
type ScorerVersion struct {
	TenantID int64
	Name     string
	Version  int
	Kind     string
	// Base is the scorer a configured scorer configures.
	Base string
	// Config is the pinned config ({} when none).
	Config json.RawMessage
	// Digest is the module's sha256 (wasm) or the hash of base and config (configured),
	// as "sha256:HEX".
	Digest string
	// Manifest is what a WASM version runs under (limits, the scorer it picks), as JSON.
	Manifest json.RawMessage
	// Info is the scorer's sdk.Info as checked at publish, as JSON.
	Info json.RawMessage
	// JudgeModel is the judge model the version pins; empty for scorers without a judge.
	JudgeModel string
	// Replaces is true when the version takes the place of a scorer the host has under
	// the same name, for this tenant only.
	Replaces  bool
	CreatedAt time.Time
	// Deleted is set when the version was deleted; its results stay.
	Deleted *time.Time
}

// Promotion is one promotion of a version; a name's latest is its promoted version.
type Promotion struct {
	Version    int
	PromotedAt time.Time
	// Gate is what the tenant's agreement gate said of the promotion, as JSON; empty
	// when no gate checked it.
	Gate json.RawMessage
}

const scorerVersionCols = `tenant_id, name, version, kind, base, config, digest, manifest, info, judge_model, replaces, created_at, deleted_at`

// scanScorerVersion reads a row of scorerVersionCols.
func scanScorerVersion(s scanner) (ScorerVersion, error) {
	var (
		v                      ScorerVersion
		config, manifest, info string
		at                     int64
		deleted                *int64
	)
	err := s.Scan(&v.TenantID, &v.Name, &v.Version, &v.Kind, &v.Base, &config, &v.Digest, &manifest, &info,
		&v.JudgeModel, &v.Replaces, &at, &deleted)
	v.Config, v.Manifest, v.Info = json.RawMessage(config), json.RawMessage(manifest), json.RawMessage(info)
	v.CreatedAt, v.Deleted = fromMicros(at), fromMicrosOrNil(deleted)
	return v, err
}

// PublishScorerVersion stores v as the name's next version (v.Version is set by it:
// one more than the highest the name ever had, deleted versions included, so a number
// is never reused). Run it in a transaction with StoreModule.
func (q queries) PublishScorerVersion(ctx context.Context, v ScorerVersion) (ScorerVersion, error) {
	var next int
	if err := queryRow(ctx, q.q, `SELECT COALESCE(MAX(version), 0) + 1 FROM scorer_versions WHERE tenant_id = $1 AND name = $2`,
		[]any{v.TenantID, v.Name}, &next); err != nil {
		return v, fmt.Errorf("store: publish scorer %s: %w", v.Name, err)
	}
	v.Version, v.CreatedAt = next, time.Now().UTC().Truncate(time.Microsecond)
	for _, raw := range []*json.RawMessage{&v.Config, &v.Manifest, &v.Info} {
		if len(*raw) == 0 {
			*raw = json.RawMessage(`{}`)
		}
	}
	_, err := q.q.exec(ctx, `INSERT INTO scorer_versions (tenant_id, name, version, kind, base, config, digest, manifest, info, judge_model, replaces, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		v.TenantID, v.Name, v.Version, v.Kind, v.Base, jsonText(v.Config), v.Digest, jsonText(v.Manifest), jsonText(v.Info),
		v.JudgeModel, v.Replaces, micros(v.CreatedAt))
	if err != nil {
		return v, fmt.Errorf("store: publish scorer %s: %w", v.Name, err)
	}
	return v, nil
}

// ScorerVersionOf returns version n of the tenant's scorer name, deleted or not.
func (q queries) ScorerVersionOf(ctx context.Context, tenantID int64, name string, n int) (ScorerVersion, error) {
	return q.scorerVersionOf(ctx, tenantID, name, n, "")
}

// scorerVersionOf is ScorerVersionOf, its SELECT ended with lock (a dialect's rowLock,
// or "").
func (q queries) scorerVersionOf(ctx context.Context, tenantID int64, name string, n int, lock string) (ScorerVersion, error) {
	v, err := first(ctx, q.q, `SELECT `+scorerVersionCols+` FROM scorer_versions WHERE tenant_id = $1 AND name = $2 AND version = $3`+lock,
		[]any{tenantID, name, n}, scanScorerVersion)
	if err != nil {
		return v, notFound(err, "scorer %s@%d", name, n)
	}
	return v, nil
}

// PublishedVersions lists the tenant's versions of name (every name when name is ""),
// deleted ones included, by name then version.
func (q queries) PublishedVersions(ctx context.Context, tenantID int64, name string) ([]ScorerVersion, error) {
	return collect(ctx, q.q, publishedVersionsSQL, []any{tenantID, name}, scanScorerVersion)
}

const publishedVersionsSQL = `SELECT ` + scorerVersionCols + ` FROM scorer_versions
	WHERE tenant_id = $1 AND ($2 = '' OR name = $2) ORDER BY name, version`

// PromotedVersion returns the version of name the tenant promoted last, or ErrNotFound
// when it promoted none.
func (q queries) PromotedVersion(ctx context.Context, tenantID int64, name string) (int, error) {
	var n int
	err := queryRow(ctx, q.q, `SELECT version FROM scorer_promotions WHERE tenant_id = $1 AND name = $2 ORDER BY id DESC LIMIT 1`,
		[]any{tenantID, name}, &n)
	if err != nil {
		return 0, notFound(err, "promoted version of scorer %q", name)
	}
	return n, nil
}

// Promotions returns the tenant's promotions of name, newest first.
func (q queries) Promotions(ctx context.Context, tenantID int64, name string) ([]Promotion, error) {
	return collect(ctx, q.q, `SELECT `+promotionCols+` FROM scorer_promotions WHERE tenant_id = $1 AND name = $2 ORDER BY id DESC`,
		[]any{tenantID, name}, scanPromotion)
}

const promotionCols = `version, promoted_at, gate`

// scanPromotion reads a row of promotionCols; a promotion no gate checked (gate {}) has
// no Gate.
func scanPromotion(s scanner) (Promotion, error) {
	var (
		p    Promotion
		at   int64
		gate string
	)
	err := s.Scan(&p.Version, &at, &gate)
	p.PromotedAt = fromMicros(at)
	if gate != "{}" && gate != "" {
		p.Gate = json.RawMessage(gate)
	}
	return p, err
}

// LockScorerVersion is ScorerVersionOf with the version's row locked until tx ends on
// PostgreSQL; SQLite's one writer holds the whole store for tx. A promotion and a
// deletion of the same version each lock it first and decide on what they read then, so
// one waits for the other and sees what it did: a version is never both promoted and
// deleted.
func (tx *Tx) LockScorerVersion(ctx context.Context, tenantID int64, name string, n int) (ScorerVersion, error) {
	return tx.scorerVersionOf(ctx, tenantID, name, n, tx.d.rowLock())
}

// PromoteScorerVersion makes version n the one name follows. The caller checks, in the
// same transaction after LockScorerVersion, that the version exists and is not deleted.
func (q queries) PromoteScorerVersion(ctx context.Context, tenantID int64, name string, n int) error {
	return q.RecordPromotion(ctx, tenantID, name, n, nil)
}

// RecordPromotion promotes version n as PromoteScorerVersion does, keeping gate (JSON:
// what the tenant's agreement gate said) with the promotion; nil when no gate checked it.
// The caller checks as PromoteScorerVersion's does.
func (q queries) RecordPromotion(ctx context.Context, tenantID int64, name string, n int, gate json.RawMessage) error {
	if len(gate) == 0 {
		gate = json.RawMessage("{}")
	}
	_, err := q.q.exec(ctx, `INSERT INTO scorer_promotions (tenant_id, name, version, promoted_at, gate) VALUES ($1, $2, $3, $4, $5)`,
		tenantID, name, n, micros(time.Now()), jsonText(gate))
	return err
}

// DeleteScorerVersion marks version n deleted. The caller checks, in the same
// transaction after LockScorerVersion, that it is not the promoted one; its results stay.
func (q queries) DeleteScorerVersion(ctx context.Context, tenantID int64, name string, n int) error {
	c, err := q.q.exec(ctx, `UPDATE scorer_versions SET deleted_at = $4 WHERE tenant_id = $1 AND name = $2 AND version = $3 AND deleted_at IS NULL`,
		tenantID, name, n, micros(time.Now()))
	if err != nil {
		return err
	}
	if c == 0 {
		return fmt.Errorf("scorer %s@%d: %w", name, n, ErrNotFound)
	}
	return nil
}

// StoreModule stores a module under its digest for the tenant, once: storing the same
// digest again is a no-op. Other tenants' modules are never looked at.
func (q queries) StoreModule(ctx context.Context, tenantID int64, digest string, module []byte) error {
	_, err := q.q.exec(ctx, `INSERT INTO scorer_modules (tenant_id, digest, module, size, created_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (tenant_id, digest) DO NOTHING`, tenantID, digest, module, len(module), micros(time.Now()))
	if err != nil {
		return fmt.Errorf("store: module %s: %w", digest, err)
	}
	return nil
}

// Module returns the tenant's module of that digest.
func (q queries) Module(ctx context.Context, tenantID int64, digest string) ([]byte, error) {
	var b []byte
	err := queryRow(ctx, q.q, `SELECT module FROM scorer_modules WHERE tenant_id = $1 AND digest = $2`, []any{tenantID, digest}, &b)
	if err != nil {
		return b, notFound(err, "module %s", digest)
	}
	return b, nil
}

// ModuleUsage is how many modules the tenant stores and their bytes.
func (q queries) ModuleUsage(ctx context.Context, tenantID int64) (count, bytes int64, err error) {
	err = queryRow(ctx, q.q, `SELECT COUNT(*), COALESCE(SUM(size), 0) FROM scorer_modules WHERE tenant_id = $1`, []any{tenantID}, &count, &bytes)
	return count, bytes, err
}

// ScorerUsage counts the tenant's published scorers and versions that are not deleted (a
// name counts while one of its versions is not).
func (q queries) ScorerUsage(ctx context.Context, tenantID int64) (names, versions int64, err error) {
	err = queryRow(ctx, q.q, `SELECT COUNT(DISTINCT name), COUNT(*) FROM scorer_versions WHERE tenant_id = $1 AND deleted_at IS NULL`, []any{tenantID}, &names, &versions)
	return names, versions, err
}

// HasModule reports whether the tenant stores the module with digest.
func (q queries) HasModule(ctx context.Context, tenantID int64, digest string) (bool, error) {
	var n int64
	err := queryRow(ctx, q.q, `SELECT COUNT(*) FROM scorer_modules WHERE tenant_id = $1 AND digest = $2`, []any{tenantID, digest}, &n)
	return n > 0, err
}
