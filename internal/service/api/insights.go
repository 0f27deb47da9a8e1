package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
)

// registerInsights adds the insight operations: what the insight engine found about the
// tenant's agents, each with its evidence.
func (s *Server) registerInsights(op func(scope store.Scope, id, method, path, summary string, more ...int) huma.Operation) {
	ai := op(store.ScopeRead, "list-agent-insights", http.MethodGet, "/v1/agents/{agent}/insights", "The agent's insights, newest first", http.StatusNotFound)
	ai.Description += " Insights are computed per (agent, scorer) over the agent's latest runs (its policy's window, default 100) as results arrive: " +
		"quality, regression, gross_failures and evaluation_health, each warning or critical with its evidence " +
		"(counts, the interval, the scorer version, the worst runs with their reasons). Skipped and failed results never count as low scores."
	huma.Register(s.api, ai, s.listAgentInsights)
	li := op(store.ScopeRead, "list-insights", http.MethodGet, "/v1/insights", "The tenant's insights across agents, newest first")
	li.Description += " By default the open insights of every agent; ?severity=critical keeps the critical ones."
	huma.Register(s.api, li, s.listInsights)
	huma.Register(s.api, op(store.ScopeRead, "get-insight", http.MethodGet, "/v1/insights/{id}", "One insight with its evidence", http.StatusNotFound), s.getInsight)
}

type insightFilter struct {
	Wait     string `query:"wait" doc:"Wait up to this long (e.g. 30s) for the insights being updated after new results (or new settings) to be up to date." example:"30s"`
	Severity string `query:"severity" enum:"warning,critical" doc:"Keep one severity."`
	State    string `query:"state" enum:"open,resolved,all" default:"open" doc:"Open insights (the default), resolved ones, or all."`
	Limit    int    `query:"limit" default:"100" minimum:"1" maximum:"1000" doc:"Insights per page."`
	Cursor   string `query:"cursor" doc:"The next value of the previous page."`
}

func (f insightFilter) query() service.InsightQuery {
	return service.InsightQuery{Severity: f.Severity, State: f.State, Limit: f.Limit, Cursor: f.Cursor}
}

// agentInsightsInput repeats insightFilter's fields: huma reads the query parameters of
// the input struct's own fields.
type agentInsightsInput struct {
	Agent    string `path:"agent"`
	Wait     string `query:"wait" doc:"Wait up to this long (e.g. 30s) for the agent's insights being updated after new results (or new settings) to be up to date." example:"30s"`
	Severity string `query:"severity" enum:"warning,critical" doc:"Keep one severity."`
	State    string `query:"state" enum:"open,resolved,all" default:"open" doc:"Open insights (the default), resolved ones, or all."`
	Limit    int    `query:"limit" default:"100" minimum:"1" maximum:"1000" doc:"Insights per page."`
	Cursor   string `query:"cursor" doc:"The next value of the previous page."`
}

func (s *Server) listAgentInsights(ctx context.Context, in *agentInsightsInput) (*bodyOutput[service.InsightsPage], error) {
	if err := s.waitInsights(ctx, in.Agent, in.Wait); err != nil {
		return nil, err
	}
	f := insightFilter{Severity: in.Severity, State: in.State, Limit: in.Limit, Cursor: in.Cursor}
	p, err := s.svc.AgentInsights(ctx, tenant(ctx), in.Agent, f.query())
	return reply(s, p, err)
}

func (s *Server) listInsights(ctx context.Context, in *insightFilter) (*bodyOutput[service.InsightsPage], error) {
	if err := s.waitInsights(ctx, "", in.Wait); err != nil {
		return nil, err
	}
	p, err := s.svc.Insights(ctx, tenant(ctx), in.query())
	return reply(s, p, err)
}

// waitInsights waits up to wait (a duration, at most MaxWait) for the insights of agent
// ("" for every agent) to be up to date; what is stored then is listed either way.
func (s *Server) waitInsights(ctx context.Context, agent, wait string) error {
	if wait == "" {
		return nil
	}
	d, err := time.ParseDuration(wait)
	if err != nil || d < 0 {
		return problem(http.StatusBadRequest, CodeInvalidRequest, fmt.Sprintf("wait %q: want a duration such as 30s", wait))
	}
	if d > s.opts.MaxWait {
		return problem(http.StatusBadRequest, CodeInvalidRequest, fmt.Sprintf("wait %s: at most %s; ask again to wait longer", wait, s.opts.MaxWait))
	}
	if _, err := s.svc.WaitInsights(ctx, tenant(ctx), agent, d); err != nil {
		return s.fail(err)
	}
	return nil
}

type getInsightInput struct {
	ID string `path:"id" doc:"The insight's id (in_...)."`
}

func (s *Server) getInsight(ctx context.Context, in *getInsightInput) (*bodyOutput[store.Insight], error) {
	v, err := s.svc.Insight(ctx, tenant(ctx), in.ID)
	return reply(s, v, err)
}
