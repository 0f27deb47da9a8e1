package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/scorers"
	"github.com/scorekit/scorekit/internal/service/store"
)

// registerPublish adds the operations on a tenant's own scorers. The module travels as
// base64 in a JSON body, like every other body of the API: one content type, validated by
// the same schema machinery, typed in the TypeScript client; it costs a third more bytes,
// which the body limit of this operation allows for.
func (s *Server) registerPublish(op func(scope store.Scope, id, method, path, summary string, more ...int) huma.Operation) {
	maxModule := int64(service.DefaultMaxModuleBytes)
	if s.svc != nil {
		maxModule = s.svc.PublishConfig().MaxModuleBytes
	}
	pub := op(store.ScopeAdmin, "publish-scorer", http.MethodPost, "/v1/scorers", "Publish a new version of one of the tenant's scorers",
		http.StatusForbidden, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity)
	pub.DefaultStatus = http.StatusCreated
	pub.MaxBodyBytes = int64(base64.StdEncoding.EncodedLen(int(maxModule))) + 1<<20
	pub.Description += " A configured scorer (`base` and `config`: one of the service's scorers with the tenant's config pinned) " +
		"or a WASM scorer (`module`, base64, and `manifest`). Each version is immutable and gets the next number N; evaluations and " +
		"policies name it `name@N`. The first version of a new name is promoted at once; later versions, and a version that " +
		"`replaces` one of the service's scorers for this tenant, wait for POST /v1/scorers/{name}/versions/{version}/promote. " +
		"A module is checked before it is stored: its size, that it compiles in time, imports only what the sandbox grants, " +
		"speaks the ABI, answers its Info, and asks for limits within the service's ceilings. A publish past a quota (422, or 413 for " +
		"the stored bytes, which count each module and its compiled code) or repeating a version the tenant has (409) is refused before " +
		"anything compiles; the service checks a few modules at once, and one past the tenant's share or the service's waits briefly, " +
		"then gets 429 with Retry-After."
	huma.Register(s.api, pub, s.publishScorer)
	huma.Register(s.api, op(store.ScopeRead, "list-scorer-versions", http.MethodGet, "/v1/scorers/{name}/versions", "The versions of one of the tenant's scorers", http.StatusNotFound), s.listScorerVersions)
	huma.Register(s.api, op(store.ScopeRead, "get-scorer-version", http.MethodGet, "/v1/scorers/{name}/versions/{version}", "One version of one of the tenant's scorers", http.StatusNotFound), s.getScorerVersion)
	pr := op(store.ScopeAdmin, "promote-scorer-version", http.MethodPost, "/v1/scorers/{name}/versions/{version}/promote", "Make the plain name follow this version (promoting an older one is the rollback)",
		http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity)
	pr.Description = "When the tenant's policy sets `promotion_gate`, the version must agree with the tenant's labels at least as well as the " +
		"version it replaces, on the same labelled runs (Cohen's kappa for pass/fail labels, Spearman's rho for scores): one worse beyond what " +
		"a paired bootstrap at 95% attributes to chance is refused (409, code `agreement_gate`, both figures in the detail) unless the body " +
		"carries `{\"override\": \"the reason\"}`, which is recorded with the promotion (GET /v1/scorers/{name}/versions). Under 30 labelled " +
		"runs in common the gate says so and lets the promotion through. The answer carries the gate's report in `gate`."
	huma.Register(s.api, pr, s.promoteScorer)
	del := op(store.ScopeAdmin, "delete-scorer-version", http.MethodDelete, "/v1/scorers/{name}/versions/{version}", "Delete a version that is not promoted (its results stay)",
		http.StatusNotFound, http.StatusUnprocessableEntity)
	del.DefaultStatus = http.StatusNoContent
	huma.Register(s.api, del, s.deleteScorerVersion)
}

type publishInput struct {
	Body struct {
		Name     string            `json:"name" doc:"The scorer's name in the tenant's namespace: 1 to 64 lower case letters, digits, '_' or '-', starting with a letter." example:"triage"`
		Replaces bool              `json:"replaces,omitempty" doc:"Replace the service's scorer of the same name, for this tenant only, once a version is promoted."`
		Base     string            `json:"base,omitempty" doc:"A configured scorer: the service's scorer it configures." example:"rubric"`
		Config   map[string]any    `json:"config,omitempty" doc:"The config pinned in the version: of base, or given to the module."`
		Module   []byte            `json:"module,omitempty" doc:"A WASM scorer: the module, base64."`
		Manifest *scorers.Manifest `json:"manifest,omitempty" doc:"A WASM scorer: the scorer of the module to publish (when it carries several) and the limits it runs under."`
	}
}

type versionOutput struct {
	Location string `header:"Location"`
	Body     service.PublishedVersion
}

func (s *Server) publishScorer(ctx context.Context, in *publishInput) (*versionOutput, error) {
	req := service.PublishRequest{Name: in.Body.Name, Replaces: in.Body.Replaces, Base: in.Body.Base, Module: in.Body.Module, Manifest: in.Body.Manifest}
	if in.Body.Config != nil {
		b, err := json.Marshal(in.Body.Config)
		if err != nil {
			return nil, problem(http.StatusBadRequest, CodeInvalidRequest, "config: "+err.Error())
		}
		req.Config = b
	}
	v, err := s.svc.Publish(ctx, tenant(ctx), req)
	if err != nil {
		return nil, s.fail(err)
	}
	return &versionOutput{Location: "/v1/scorers/" + v.Name + "/versions/" + strconv.Itoa(v.Version), Body: v}, nil
}

type scorerNameInput struct {
	Name string `path:"name"`
}

func (s *Server) listScorerVersions(ctx context.Context, in *scorerNameInput) (*bodyOutput[[]service.PublishedVersion], error) {
	vs, err := s.svc.ScorerVersions(ctx, tenant(ctx), in.Name)
	return reply(s, vs, err)
}

type scorerVersionInput struct {
	Name    string `path:"name"`
	Version int    `path:"version" minimum:"1"`
}

func (s *Server) getScorerVersion(ctx context.Context, in *scorerVersionInput) (*bodyOutput[service.PublishedVersion], error) {
	v, err := s.svc.ScorerVersion(ctx, tenant(ctx), in.Name, in.Version)
	return reply(s, v, err)
}

type promoteInput struct {
	Name    string `path:"name"`
	Version int    `path:"version" minimum:"1"`
	Body    *struct {
		Override string `json:"override,omitempty" maxLength:"2000" doc:"Why a promotion the agreement gate refuses goes through anyway; recorded with the promotion, with who and when." example:"v2 fixes the refusals the labels predate"`
	}
}

func (s *Server) promoteScorer(ctx context.Context, in *promoteInput) (*bodyOutput[service.PublishedVersion], error) {
	o := service.PromoteOptions{Actor: actor(ctx)}
	if in.Body != nil {
		o.Override = in.Body.Override
	}
	v, err := s.svc.Promote(ctx, tenant(ctx), in.Name, in.Version, o)
	return reply(s, v, err)
}

func (s *Server) deleteScorerVersion(ctx context.Context, in *scorerVersionInput) (*struct{}, error) {
	if err := s.svc.DeleteScorerVersion(ctx, tenant(ctx), in.Name, in.Version); err != nil {
		return nil, s.fail(err)
	}
	return nil, nil
}
