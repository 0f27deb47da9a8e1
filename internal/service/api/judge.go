package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
)

// JudgeRoute is a tenant's choice of judge: an endpoint the operator allows and a model
// there.
type JudgeRoute struct {
	Endpoint string `json:"endpoint,omitempty" doc:"An endpoint the operator allows, by name. Default is \"default\", the operator's main judge." example:"default"`
	Model    string `json:"model,omitempty" doc:"A model the endpoint allows. Default is the endpoint's model." example:"gpt-4o-mini"`
}

func (r *JudgeRoute) route() *broker.Route {
	if r == nil {
		return nil
	}
	return &broker.Route{Endpoint: r.Endpoint, Model: r.Model}
}

func toJudgeRoute(r *broker.Route) *JudgeRoute {
	if r == nil {
		return nil
	}
	return &JudgeRoute{Endpoint: r.Endpoint, Model: r.Model}
}

// registerJudge adds the tenant's judge operations: the endpoints it may choose, and its
// own key for one of them, which is write-only.
func (s *Server) registerJudge(op func(scope store.Scope, id, method, path, summary string, more ...int) huma.Operation) {
	le := op(store.ScopeRead, "list-judge-endpoints", http.MethodGet, "/v1/judge/endpoints", "The judge endpoints the operator allows, with their models")
	le.Description += " An agent policy's judge (or POST /v1/score's) names one of them and a model. Each says whether the tenant stored its own key there (never the key)."
	huma.Register(s.api, le, s.listJudgeEndpoints)
	put := op(store.ScopeAdmin, "put-judge-key", http.MethodPut, "/v1/judge/endpoints/{endpoint}/key", "Store the tenant's own API key for a judge endpoint",
		http.StatusNotFound, http.StatusServiceUnavailable)
	put.DefaultStatus = http.StatusNoContent
	put.Description += " The tenant's judge calls to the endpoint are sent with this key instead of the operator's, within the tenant's limits and budget as ever. " +
		"It is sealed under the operator's secret key before it is stored, and no endpoint ever returns it; store it again to replace it."
	huma.Register(s.api, put, s.putJudgeKey)
	del := op(store.ScopeAdmin, "delete-judge-key", http.MethodDelete, "/v1/judge/endpoints/{endpoint}/key", "Remove the tenant's own API key for a judge endpoint", http.StatusNotFound)
	del.DefaultStatus = http.StatusNoContent
	huma.Register(s.api, del, s.deleteJudgeKey)
}

func (s *Server) listJudgeEndpoints(ctx context.Context, _ *struct{}) (*bodyOutput[[]service.JudgeEndpoint], error) {
	list, err := s.svc.JudgeEndpoints(ctx, tenant(ctx))
	return reply(s, list, err)
}

// judgeKeyInput carries a key: its only checks are the service's, whose messages never
// repeat it (a schema pattern's would).
type judgeKeyInput struct {
	Endpoint string `path:"endpoint" doc:"The endpoint's name (GET /v1/judge/endpoints)."`
	Body     struct {
		Key string `json:"key" doc:"The API key. It is never returned."`
	}
}

func (s *Server) putJudgeKey(ctx context.Context, in *judgeKeyInput) (*struct{}, error) {
	if err := s.svc.SetJudgeKey(ctx, tenant(ctx), in.Endpoint, in.Body.Key); err != nil {
		return nil, s.fail(err)
	}
	return nil, nil
}

type judgeEndpointInput struct {
	Endpoint string `path:"endpoint" doc:"The endpoint's name (GET /v1/judge/endpoints)."`
}

func (s *Server) deleteJudgeKey(ctx context.Context, in *judgeEndpointInput) (*struct{}, error) {
	if err := s.svc.DeleteJudgeKey(ctx, tenant(ctx), in.Endpoint); err != nil {
		return nil, s.fail(err)
	}
	return nil, nil
}
