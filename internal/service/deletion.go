package service

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
)

// ActorRetention is the periodic retention job in the audit log.
const ActorRetention = jobs.ActorRetention

// KeyActor is the audit log's actor for a request made with key: its id (the first
// characters, as keys list shows them), never the key.
func KeyActor(key string) string {
	if len(key) < len(KeyPrefix)+8 {
		return "key"
	}
	return "key " + keyID(key)
}

// DeleteRun deletes the tenant's run with id, its results and its place in evaluations
// and insights, and records who did it in the tenant's audit log; a retried import
// carrying the id within store.TombstoneTTL does not bring it back (its status is
// "deleted").
func (s *Service) DeleteRun(ctx context.Context, t store.Tenant, actor, id string) (store.Deleted, error) {
	var d store.Deleted
	err := s.st.InTx(ctx, func(tx *store.Tx) error {
		r, err := tx.Run(ctx, t.ID, id)
		if err != nil {
			return err
		}
		// Its results may have been in its agent's insight windows: assess them again,
		// after this commits. First, as an insight update takes its series before the
		// insights it writes: the other order deadlocks with one (PostgreSQL).
		if err := s.refreshInsights(ctx, tx, t, r.Agent); err != nil {
			return err
		}
		if d, err = tx.DeleteRun(ctx, t.ID, id); err != nil {
			return err
		}
		return tx.AddAudit(ctx, t, store.AuditEntry{Actor: actor, Action: store.AuditDeleteRun, Subject: id}, d)
	})
	return d, notFound(err, "no run %q", id)
}

// DeleteAgent deletes every run of the agent with its results, and its evaluations,
// insights and policy, in transactions of store.DeleteBatch runs (writers are not held
// up for the whole deletion), and records who did it in the tenant's audit log.
func (s *Service) DeleteAgent(ctx context.Context, t store.Tenant, actor, agent string) (store.Deleted, error) {
	if err := checkAgent(agent); err != nil {
		return store.Deleted{}, err
	}
	d, err := s.st.DeleteAgent(ctx, t.ID, agent, nil)
	if err != nil {
		return d, notFound(err, "no agent %q: it has no runs, evaluations, insights or policy", agent)
	}
	return d, s.st.AddAudit(ctx, t, store.AuditEntry{Actor: actor, Action: store.AuditDeleteAgent, Subject: agent}, d)
}

// DeleteTenant deletes the tenant called name and everything it owns: its keys are
// revoked first, so that nothing new arrives during the deletion; its runs and results go
// in transactions of store.DeleteBatch runs. The record of the deletion (who, when, what
// was removed) is kept without any of the tenant's data. A deletion cut short (by ctx,
// or by a request let in before the keys were revoked) is finished by running it again.
// Its published modules and their compiled code on disk go with it.
func (s *Service) DeleteTenant(ctx context.Context, name, actor string, progress store.DeleteProgress) (store.Deleted, error) {
	t, err := s.Tenant(ctx, name)
	if err != nil {
		return store.Deleted{}, err
	}
	d, err := s.st.DeleteTenant(ctx, t, actor, progress)
	if err == nil {
		// Its published modules and their compiled code on this machine; other processes'
		// folders go when they start (moduleFiles.sweep).
		if ferr := s.files.removeTenant(t); ferr != nil {
			s.files.log.Error("delete tenant: its published modules stay on disk until the service starts again", "tenant", t.Name, "err", ferr)
		}
	}
	return d, err
}

// AuditLog lists the tenant's audit log, newest first: at most limit entries (1-1000)
// with ids below before (0: from the newest).
func (s *Service) AuditLog(ctx context.Context, t store.Tenant, before int64, limit int) ([]store.AuditEntry, error) {
	if limit < 1 || limit > 1000 {
		return nil, invalid("limit %d: want 1 to 1000", limit)
	}
	return s.st.AuditLog(ctx, t.ID, before, limit)
}

// ExportEnd is the kind of an export's last line, whose data counts the lines of each
// kind: an export without it was cut short.
const ExportEnd = "end"

// ExportLine is one line of an export.
type ExportLine struct {
	Kind string `json:"kind"`
	Data any    `json:"data"`
}

// Export writes everything the tenant owns to w as JSONL, one ExportLine a line (kinds
// store.ExportTenant ... store.ExportAudit), and last a line of kind ExportEnd with the
// count of each kind. The export is recorded in the audit log first, so it lists itself.
func (s *Service) Export(ctx context.Context, t store.Tenant, actor string, w io.Writer) error {
	if err := s.st.AddAudit(ctx, t, store.AuditEntry{Actor: actor, Action: store.AuditExport, Subject: t.Name}, nil); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	counts := map[string]int{}
	err := s.st.Export(ctx, t, func(kind string, v any) error {
		counts[kind]++
		return enc.Encode(ExportLine{Kind: kind, Data: v})
	})
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return enc.Encode(ExportLine{Kind: ExportEnd, Data: counts})
}
