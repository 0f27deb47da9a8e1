package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/service/redact"
)

// Tenant is who owns runs, evaluations and keys.
type Tenant struct {
	ID        int64
	Name      string
	Policy    Policy
	CreatedAt time.Time
}

// Policy is a tenant's limits. It is stored as one JSON document, so a new field needs no
// migration. Zero fields take the service's defaults.
type Policy struct {
	// Judge caps the tenant's use of the judge broker. Optional. Default is the broker's.
	Judge JudgeLimits `json:"judge,omitzero"`
	// RequestsPerSecond caps the tenant's API requests (answered 429 beyond it). Optional.
	// Default is 0: unlimited.
	RequestsPerSecond float64 `json:"requests_per_second,omitempty"`
	// MaxRunsPerEvaluation caps an evaluation's limit. Optional. Default is the service's.
	MaxRunsPerEvaluation int `json:"max_runs_per_evaluation,omitempty"`
	// Scorers lists the scorers the tenant may run. Optional. Default is every scorer.
	Scorers []string `json:"scorers,omitempty"`
	// Limits are the ceilings of the tenant's scorers in every runtime (memory, time,
	// result size, instances); they only lower the host's. Optional.
	Limits host.Limits `json:"limits,omitzero"`
	// MaxRunBytes caps one run's JSON. Optional. Default is the service's.
	MaxRunBytes int `json:"max_run_bytes,omitempty"`
	// RetentionDays is how long the tenant's runs are kept, by their time: the retention
	// job deletes older runs with their results (labelled runs stay). Optional. Default
	// is 0: kept until deleted.
	RetentionDays int `json:"retention_days,omitempty"`
	// Redact lists the personal data and secrets replaced in the tenant's runs before
	// they are stored (internal/service/redact). Optional. Default is none.
	Redact redact.Config `json:"redact,omitzero"`
	// PromotionGate requires that a published version being promoted agrees with the
	// tenant's labels at least as well as the version it replaces, on the same labelled
	// runs (Cohen's kappa for pass/fail labels, Spearman's rho for scores), within what a
	// paired bootstrap at 95% attributes to chance; a worse one is refused unless the
	// promotion carries an override. Optional. Default is false: no gate.
	PromotionGate bool `json:"promotion_gate,omitempty"`
	// Quotas cap what the tenant publishes (service.Publish). Optional. Zero fields take
	// the service's (service.PublishConfig).
	Quotas Quotas `json:"quotas,omitzero"`
}

// Retention is RetentionDays as a duration (0: none).
func (p *Policy) Retention() time.Duration { return time.Duration(p.RetentionDays) * 24 * time.Hour }

// Quotas cap a tenant's published scorers: names with a version not deleted, versions not
// deleted, and the bytes of the modules it stores.
type Quotas struct {
	Scorers     int   `json:"scorers,omitempty"`
	Versions    int   `json:"versions,omitempty"`
	StoredBytes int64 `json:"stored_bytes,omitempty"`
}

// JudgeLimits are a tenant's judge broker limits; zero fields take the broker's, and a
// TokenBudget of -1 is unlimited (the broker has a default budget per tenant and window).
type JudgeLimits struct {
	MaxConcurrency    int     `json:"max_concurrency,omitempty"`
	RequestsPerSecond float64 `json:"requests_per_second,omitempty"`
	Burst             int     `json:"burst,omitempty"`
	TokenBudget       int64   `json:"token_budget,omitempty"`
}

// Allows reports whether the policy lets the tenant run scorer.
func (p *Policy) Allows(scorer string) bool {
	if len(p.Scorers) == 0 {
		return true
	}
	for _, s := range p.Scorers {
		if s == scorer {
			return true
		}
	}
	return false
}

const tenantCols = `id, name, policy, created_at`

func scanTenant(r scanner) (Tenant, error) {
	var (
		t      Tenant
		policy string
		at     int64
	)
	if err := r.Scan(&t.ID, &t.Name, &policy, &at); err != nil {
		return t, err
	}
	t.CreatedAt = fromMicros(at)
	if err := json.Unmarshal([]byte(policy), &t.Policy); err != nil {
		return t, fmt.Errorf("store: tenant %s: policy: %w", t.Name, err)
	}
	return t, nil
}

// CreateTenant creates a tenant; a name taken already is [ErrExists].
func (q queries) CreateTenant(ctx context.Context, name string, p Policy) (Tenant, error) {
	pol, err := json.Marshal(p)
	if err != nil {
		return Tenant{}, err
	}
	now := time.Now()
	t := Tenant{Name: name, Policy: p, CreatedAt: fromMicros(micros(now))}
	err = queryRow(ctx, q.q, `INSERT INTO tenants (name, policy, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO NOTHING RETURNING id`, []any{name, jsonText(pol), micros(now)}, &t.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return Tenant{}, fmt.Errorf("tenant %q: %w", name, ErrExists)
	}
	if err != nil {
		return Tenant{}, err
	}
	return t, nil
}

// Tenant returns the tenant called name.
func (q queries) Tenant(ctx context.Context, name string) (Tenant, error) {
	t, err := first(ctx, q.q, `SELECT `+tenantCols+` FROM tenants WHERE name = $1`, []any{name}, scanTenant)
	if err != nil {
		return t, notFound(err, "tenant %q", name)
	}
	return t, nil
}

// TenantByID returns the tenant with id.
func (q queries) TenantByID(ctx context.Context, id int64) (Tenant, error) {
	t, err := first(ctx, q.q, `SELECT `+tenantCols+` FROM tenants WHERE id = $1`, []any{id}, scanTenant)
	if err != nil {
		return t, notFound(err, "tenant %d", id)
	}
	return t, nil
}

// Tenants lists every tenant by name.
func (q queries) Tenants(ctx context.Context) ([]Tenant, error) {
	return collect(ctx, q.q, `SELECT `+tenantCols+` FROM tenants ORDER BY name`, nil, scanTenant)
}

// SetTenantPolicy replaces the tenant's policy.
func (q queries) SetTenantPolicy(ctx context.Context, tenantID int64, p Policy) error {
	pol, err := json.Marshal(p)
	if err != nil {
		return err
	}
	n, err := q.q.exec(ctx, `UPDATE tenants SET policy = $1 WHERE id = $2`, jsonText(pol), tenantID)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("tenant %d: %w", tenantID, ErrNotFound)
	}
	return nil
}
