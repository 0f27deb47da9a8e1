package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/scorekit/scorekit/internal/service/store"
)

// Operations that delete or hand out all of a tenant's data, declared together: deleting
// needs an admin key; exporting and reading the audit log, a read key (which reads
// every run and result anyway).
const (
	OpDeleteRun    = "delete-run"
	OpDeleteAgent  = "delete-agent"
	OpDeleteTenant = "delete-tenant"
	OpExport       = "export"
	OpAuditLog     = "audit-log"
)

// actorKey holds the request's actor for the audit log (set by authenticate).
type actorKey struct{}

// actor is who the audit log records for the request: its key's id, or "open".
func actor(ctx context.Context) string {
	a, _ := ctx.Value(actorKey{}).(string)
	return a
}

func (s *Server) registerRetention(op func(scope store.Scope, id, method, path, summary string, more ...int) huma.Operation) {
	dr := op(store.ScopeAdmin, OpDeleteRun, http.MethodDelete, "/v1/runs/{id}", "Delete a run and its results; it is not stored again", http.StatusNotFound)
	dr.Description += " Deletes the run, its results and its place in evaluations and insights, and records the deletion in the audit log. " +
		"An import carrying the run's id within 30 days answers `deleted` for it and stores nothing."
	huma.Register(s.api, dr, s.deleteRun)

	da := op(store.ScopeAdmin, OpDeleteAgent, http.MethodDelete, "/v1/agents/{agent}", "Delete an agent: its runs, results, evaluations, insights and policy", http.StatusNotFound)
	da.Description += " Deletes in transactions of a few hundred runs, so writers are not held up by the whole deletion. Recorded in the audit log."
	huma.Register(s.api, da, s.deleteAgent)

	dt := op(store.ScopeAdmin, OpDeleteTenant, http.MethodDelete, "/v1/tenant", "Delete the key's tenant and everything it owns")
	dt.Description += " Revokes every key of the tenant first (this one too), so nothing new arrives, then deletes its runs, results, " +
		"evaluations, insights, settings, policies and audit log. Export first (GET /v1/export) to keep a copy. " +
		"A deletion cut short is finished by running it again with the command line (scorekit tenants delete)."
	huma.Register(s.api, dt, s.deleteTenant)

	ex := op(store.ScopeRead, OpExport, http.MethodGet, "/v1/export", "Everything the tenant owns, as JSONL")
	ex.Description += " Streams one JSON object a line, {\"kind\": ..., \"data\": ...}: the tenant, its keys (ids), agent policies, " +
		"runs each followed by its results, evaluations, insights and audit log, then a line of kind `end` that counts each kind. " +
		"An export without its `end` line was cut short."
	ex.Responses = map[string]*huma.Response{"200": {Description: "JSONL", Content: map[string]*huma.MediaType{"application/x-ndjson": {}}}}
	huma.Register(s.api, ex, s.export)

	huma.Register(s.api, op(store.ScopeRead, OpAuditLog, http.MethodGet, "/v1/audit", "The tenant's audit log: who deleted or exported what, and when"), s.auditLog)
}

type deleteRunInput struct {
	ID string `path:"id" doc:"The run's id."`
}

func (s *Server) deleteRun(ctx context.Context, in *deleteRunInput) (*bodyOutput[store.Deleted], error) {
	d, err := s.svc.DeleteRun(ctx, tenant(ctx), actor(ctx), in.ID)
	return reply(s, d, err)
}

type deleteAgentInput struct {
	Agent string `path:"agent" doc:"The agent."`
}

func (s *Server) deleteAgent(ctx context.Context, in *deleteAgentInput) (*bodyOutput[store.Deleted], error) {
	d, err := s.svc.DeleteAgent(ctx, tenant(ctx), actor(ctx), in.Agent)
	return reply(s, d, err)
}

func (s *Server) deleteTenant(ctx context.Context, _ *struct{}) (*bodyOutput[store.Deleted], error) {
	d, err := s.svc.DeleteTenant(ctx, tenant(ctx).Name, actor(ctx), nil)
	return reply(s, d, err)
}

func (s *Server) export(ctx context.Context, _ *struct{}) (*huma.StreamResponse, error) {
	t, who := tenant(ctx), actor(ctx)
	return &huma.StreamResponse{Body: func(hc huma.Context) {
		hc.SetHeader("Content-Type", "application/x-ndjson")
		hc.SetHeader("Content-Disposition", `attachment; filename="`+t.Name+`.jsonl"`)
		if err := s.svc.Export(hc.Context(), t, who, hc.BodyWriter()); err != nil {
			// The status is sent; the missing end line tells the client.
			s.opts.Logger.Error("api: export cut short", "tenant", t.Name, "err", err)
		}
	}}, nil
}

type auditInput struct {
	Before int64 `query:"before" minimum:"0" doc:"List entries older than this id (the last id of the previous page)."`
	Limit  int   `query:"limit" minimum:"1" maximum:"1000" default:"100" doc:"Entries per page."`
}

type auditOutput struct {
	Body struct {
		Entries []store.AuditEntry `json:"entries"`
	}
}

func (s *Server) auditLog(ctx context.Context, in *auditInput) (*auditOutput, error) {
	log, err := s.svc.AuditLog(ctx, tenant(ctx), in.Before, in.Limit)
	if err != nil {
		return nil, s.fail(err)
	}
	out := &auditOutput{}
	out.Body.Entries = log
	return out, nil
}
