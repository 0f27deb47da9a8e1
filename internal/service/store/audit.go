package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Audited actions.
const (
	AuditDeleteRun    = "delete_run"
	AuditDeleteAgent  = "delete_agent"
	AuditDeleteTenant = "delete_tenant"
	AuditRetention    = "retention"
	AuditExport       = "export"
)

// AuditEntry is one record of the audit log: who (Actor: "key sk_abcdefgh" for an API
// key, "cli USER@HOST" for the command line, "retention" for the periodic job) did what
// (Action on Subject: a run id, an agent, the tenant) and when, with what it removed.
type AuditEntry struct {
	ID      int64           `json:"id"`
	At      time.Time       `json:"at"`
	Actor   string          `json:"actor"`
	Action  string          `json:"action" enum:"delete_run,delete_agent,delete_tenant,retention,export"`
	Subject string          `json:"subject"`
	Detail  json.RawMessage `json:"detail,omitempty"`
}

// AddAudit records e in the tenant's audit log, with detail (what was removed) as JSON.
func (q queries) AddAudit(ctx context.Context, t Tenant, e AuditEntry, detail any) error {
	return q.addAudit(ctx, &t.ID, t.Name, e, detail)
}

func (q queries) addAudit(ctx context.Context, tenantID *int64, tenantName string, e AuditEntry, detail any) error {
	b, err := json.Marshal(detail)
	if err != nil {
		return err
	}
	_, err = q.q.exec(ctx, `INSERT INTO audit_log (tenant_id, tenant_name, actor, action, subject, detail, at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		tenantID, tenantName, e.Actor, e.Action, e.Subject, jsonText(b), micros(time.Now()))
	if err != nil {
		return fmt.Errorf("store: audit %s: %w", e.Action, err)
	}
	return nil
}

// auditLogSQL reads a tenant's audit log, newest first, before an id (index
// audit_log_tenant).
const auditLogSQL = `SELECT ` + auditCols + ` FROM audit_log WHERE tenant_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3`

// AuditLog lists the tenant's audit log, newest first: at most limit entries with ids
// below before (0: from the newest).
func (q queries) AuditLog(ctx context.Context, tenantID, before int64, limit int) ([]AuditEntry, error) {
	if before <= 0 {
		before = 1 << 62
	}
	return q.auditEntries(ctx, auditLogSQL, tenantID, before, limit)
}

// TenantDeletions lists the records of deleted tenants (they outlive the tenant, for
// the operator), newest first.
func (q queries) TenantDeletions(ctx context.Context, limit int) ([]AuditEntry, error) {
	return q.auditEntries(ctx, `SELECT `+auditCols+` FROM audit_log WHERE tenant_id IS NULL ORDER BY id DESC LIMIT $1`, limit)
}

const auditCols = `id, actor, action, subject, detail, at`

// auditEntries reads the entries query selects (auditCols); none is an empty list, not nil.
func (q queries) auditEntries(ctx context.Context, query string, args ...any) ([]AuditEntry, error) {
	return appendRows(ctx, []AuditEntry{}, q.q, query, args, func(s scanner) (AuditEntry, error) {
		var (
			e      AuditEntry
			detail string
			at     int64
		)
		err := s.Scan(&e.ID, &e.Actor, &e.Action, &e.Subject, &detail, &at)
		e.At, e.Detail = fromMicros(at), json.RawMessage(detail)
		return e, err
	})
}
