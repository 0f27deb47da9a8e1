package api

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/sdk"
)

// MaxScoreBodyBytes caps a POST /v1/score body (one run).
const MaxScoreBodyBytes = 8 << 20

func (s *Server) register() {
	errs := []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests}
	op := func(scope store.Scope, id, method, path, summary string, more ...int) huma.Operation {
		needsKey := "Needs a key with scope `" + string(scope) + "` or `admin`."
		if scope == store.ScopeAdmin {
			needsKey = "Needs a key with scope `admin`."
		}
		return huma.Operation{OperationID: id, Method: method, Path: path, Summary: summary,
			Security: needs(scope), Extensions: map[string]any{ScopeExtension: string(scope)},
			Description: needsKey, Errors: append(append([]int(nil), errs...), more...), MaxBodyBytes: 1 << 20}
	}
	huma.Register(s.api, huma.Operation{OperationID: "healthz", Method: http.MethodGet, Path: "/healthz", Summary: "Liveness: ok"}, s.healthz)

	huma.Register(s.api, op(store.ScopeRead, "list-scorers", http.MethodGet, "/v1/scorers", "The scorers the tenant may run"), s.listScorers)

	// Scoring spends the tenant's judge budget: it is not a read.
	sc := op(store.ScopeAdmin, "score", http.MethodPost, "/v1/score", "Score one run with one scorer (nothing is stored)", http.StatusNotFound, http.StatusRequestEntityTooLarge)
	sc.MaxBodyBytes = MaxScoreBodyBytes
	huma.Register(s.api, sc, s.score)

	imp := op(store.ScopeIngest, "import-runs", http.MethodPost, "/v1/runs", "Store runs: one run, a JSON array of runs, or JSONL", http.StatusRequestEntityTooLarge)
	imp.MaxBodyBytes = s.opts.MaxBodyBytes
	imp.Description += " Each run follows the run contract (schemas/run.schema.json) and names its agent (or ?agent= names it for runs that do not). " +
		"Runs are stored once per id: sending the same runs again stores nothing. A bad run is rejected with its line and the reason; the good ones are kept."
	huma.Register(s.api, imp, s.importRuns)
	s.describeRunsBody(imp)

	huma.Register(s.api, op(store.ScopeRead, "get-run", http.MethodGet, "/v1/runs/{id}", "A run with every result it ever had", http.StatusNotFound), s.getRun)
	huma.Register(s.api, op(store.ScopeRead, "list-agents", http.MethodGet, "/v1/agents", "The tenant's agents, by name"), s.listAgents)
	huma.Register(s.api, op(store.ScopeRead, "list-runs", http.MethodGet, "/v1/agents/{agent}/runs", "An agent's runs, newest first", http.StatusNotFound), s.listRuns)

	// An evaluation writes results and spends the tenant's judge budget.
	ce := op(store.ScopeAdmin, "create-evaluation", http.MethodPost, "/v1/agents/{agent}/evaluations", "Evaluate the agent's newest runs",
		http.StatusNotFound)
	ce.DefaultStatus = http.StatusAccepted
	ce.Description += " Selects the agent's last `limit` runs (newest first by the run's time), enqueues their scoring and answers 202 with the evaluation; GET /v1/evaluations/{id} follows it."
	huma.Register(s.api, ce, s.createEvaluation)
	huma.Register(s.api, op(store.ScopeRead, "list-evaluations", http.MethodGet, "/v1/agents/{agent}/evaluations", "The agent's evaluations, newest first"), s.listEvaluations)
	huma.Register(s.api, op(store.ScopeRead, "get-evaluation", http.MethodGet, "/v1/evaluations/{id}", "An evaluation: status, per-scorer summary and results", http.StatusNotFound), s.getEvaluation)

	huma.Register(s.api, op(store.ScopeRead, "get-agent-policy", http.MethodGet, "/v1/agents/{agent}/policy", "How the agent's new runs are evaluated on arrival", http.StatusNotFound), s.getPolicy)
	huma.Register(s.api, op(store.ScopeAdmin, "put-agent-policy", http.MethodPut, "/v1/agents/{agent}/policy", "Set how the agent's new runs are evaluated on arrival", http.StatusNotFound), s.putPolicy)
	del := op(store.ScopeAdmin, "delete-agent-policy", http.MethodDelete, "/v1/agents/{agent}/policy", "Stop evaluating the agent's new runs on arrival", http.StatusNotFound)
	del.DefaultStatus = http.StatusNoContent
	huma.Register(s.api, del, s.deletePolicy)
	s.registerInsights(op)
	s.registerPublish(op)
	s.registerJudge(op)
	s.registerLabels(op)
	s.registerTraces(errs)
	s.registerLogs(errs, op)
	s.registerRetention(op)
}

type healthzOutput struct {
	ContentType string `header:"Content-Type"`
	Body        []byte
}

func (s *Server) healthz(context.Context, *struct{}) (*healthzOutput, error) {
	return &healthzOutput{ContentType: "text/plain; charset=utf-8", Body: []byte("ok\n")}, nil
}

func (s *Server) listScorers(ctx context.Context, _ *struct{}) (*bodyOutput[[]service.ScorerInfo], error) {
	list, err := s.svc.ScorerInfos(ctx, tenant(ctx))
	return reply(s, list, err)
}

type scoreInput struct {
	Body struct {
		Scorer string         `json:"scorer" minLength:"1" doc:"The scorer; GET /v1/scorers lists them." example:"prescreen"`
		Run    RunJSON        `json:"run" doc:"The run to score."`
		Config map[string]any `json:"config,omitempty" doc:"The scorer's config for this call; it replaces the defaults field by field. The scorer is opened once per (tenant, scorer, config) and reused."`
		Steps  bool           `json:"steps,omitempty" doc:"Include the pipeline steps (judge prompts and parsed answers), which are large."`
		Judge  *JudgeRoute    `json:"judge,omitempty" doc:"Where the scorer's judge calls go: an endpoint the operator allows and a model there (GET /v1/judge/endpoints lists them). Default is the operator's default endpoint and model."`
	}
}

func (s *Server) score(ctx context.Context, in *scoreInput) (*bodyOutput[sdk.Result], error) {
	run, err := host.DecodeCheckedRun(in.Body.Run)
	if err != nil {
		return nil, problem(http.StatusBadRequest, CodeInvalidRun, err.Error())
	}
	var cfg json.RawMessage
	if in.Body.Config != nil {
		if cfg, err = json.Marshal(in.Body.Config); err != nil {
			return nil, problem(http.StatusBadRequest, CodeInvalidRequest, "config: "+err.Error())
		}
	}
	res, err := s.svc.Score(ctx, tenant(ctx), in.Body.Scorer, run, cfg, in.Body.Judge.route())
	if err != nil {
		return nil, s.fail(err)
	}
	if !in.Body.Steps {
		res.Steps = nil
	}
	return &bodyOutput[sdk.Result]{Body: res}, nil
}

type importInput struct {
	Agent   string `query:"agent" doc:"Agent of the runs that name none; a run naming another agent is rejected."`
	RawBody []byte
}

func (s *Server) importRuns(ctx context.Context, in *importInput) (*bodyOutput[service.ImportResult], error) {
	res, err := s.svc.ImportRuns(ctx, tenant(ctx), in.RawBody, service.ImportOptions{Agent: in.Agent})
	return reply(s, res, err)
}

// describeRunsBody documents POST /v1/runs's body: the handler reads it raw, line by
// line, so a bad line is reported and the others kept.
func (s *Server) describeRunsBody(op huma.Operation) {
	oapi := s.api.OpenAPI()
	item := oapi.Paths[op.Path]
	if item == nil || item.Post == nil {
		return
	}
	runSchema := RunJSON{}.Schema(oapi.Components.Schemas)
	item.Post.RequestBody = &huma.RequestBody{
		Required:    true,
		Description: "One run, a JSON array of runs, or JSONL (one run a line; blank lines ignored). A UTF-8 BOM is ignored.",
		Content: map[string]*huma.MediaType{
			"application/json":     {Schema: &huma.Schema{OneOf: []*huma.Schema{runSchema, {Type: "array", Items: runSchema}}}},
			"application/x-ndjson": {Schema: &huma.Schema{Type: "string", Description: "One run (the Run schema) a line."}},
		},
	}
}

type getRunInput struct {
	ID    string `path:"id" doc:"The run's id."`
	Steps bool   `query:"steps" doc:"Include each result's pipeline steps (judge prompts; large)."`
}

func (s *Server) getRun(ctx context.Context, in *getRunInput) (*bodyOutput[service.RunView], error) {
	v, err := s.svc.Run(ctx, tenant(ctx), in.ID, in.Steps)
	return reply(s, v, err)
}

type pageInput struct {
	Limit  int    `query:"limit" default:"100" minimum:"1" maximum:"1000" doc:"Items per page."`
	Cursor string `query:"cursor" doc:"The next value of the previous page."`
}

func (s *Server) listAgents(ctx context.Context, in *pageInput) (*bodyOutput[service.AgentsPage], error) {
	p, err := s.svc.Agents(ctx, tenant(ctx), in.Limit, in.Cursor)
	return reply(s, p, err)
}

type listRunsInput struct {
	Agent  string `path:"agent"`
	Limit  int    `query:"limit" default:"100" minimum:"1" maximum:"1000" doc:"Runs per page."`
	Cursor string `query:"cursor" doc:"The next value of the previous page."`
}

func (s *Server) listRuns(ctx context.Context, in *listRunsInput) (*bodyOutput[service.RunsPage], error) {
	p, err := s.svc.Runs(ctx, tenant(ctx), in.Agent, in.Limit, in.Cursor)
	return reply(s, p, err)
}

type createEvaluationInput struct {
	Agent string `path:"agent"`
	Body  struct {
		Limit   Count                     `json:"limit" doc:"How many of the agent's newest runs to evaluate (1 to the tenant's maximum)." example:"10"`
		Since   *time.Time                `json:"since,omitempty" doc:"Only runs at or after this time (RFC 3339)."`
		Scorers []string                  `json:"scorers,omitempty" doc:"Scorers to run. Default: the agent policy's, else prescreen." example:"[\"prescreen\"]"`
		Config  map[string]map[string]any `json:"config,omitempty" doc:"Per-scorer config for this evaluation."`
		Tiered  *bool                     `json:"tiered,omitempty" doc:"Run the scorers that need a judge only on runs the pre-screen passed. Default: the agent policy's, else false."`
		DryRun  bool                      `json:"dry_run,omitempty" doc:"Create nothing: answer 200 with the runs and scorers the evaluation would take and its judge_estimate (judge calls and tokens against the tenant's budget)."`
	}
}

type evaluationOutput struct {
	Status   int
	Location string `header:"Location"`
	Body     service.EvaluationView
}

func rawConfigs(c map[string]map[string]any) (map[string]json.RawMessage, error) {
	if c == nil {
		return nil, nil
	}
	out := make(map[string]json.RawMessage, len(c))
	for k, v := range c {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, problem(http.StatusBadRequest, CodeInvalidRequest, fmt.Sprintf("config.%s: %v", k, err))
		}
		out[k] = b
	}
	return out, nil
}

func (s *Server) createEvaluation(ctx context.Context, in *createEvaluationInput) (*evaluationOutput, error) {
	cfg, err := rawConfigs(in.Body.Config)
	if err != nil {
		return nil, err
	}
	v, err := s.svc.CreateEvaluation(ctx, tenant(ctx), in.Agent, service.EvaluationRequest{
		Limit: int(in.Body.Limit), Since: in.Body.Since, Scorers: in.Body.Scorers, Config: cfg, Tiered: in.Body.Tiered, DryRun: in.Body.DryRun})
	if err != nil {
		return nil, s.fail(err)
	}
	if in.Body.DryRun {
		return &evaluationOutput{Status: http.StatusOK, Body: v}, nil
	}
	return &evaluationOutput{Status: http.StatusAccepted, Location: "/v1/evaluations/" + v.ID, Body: v}, nil
}

type listEvaluationsInput struct {
	Agent string `path:"agent"`
	Limit int    `query:"limit" default:"20" minimum:"1" maximum:"1000"`
}

func (s *Server) listEvaluations(ctx context.Context, in *listEvaluationsInput) (*bodyOutput[[]service.EvaluationView], error) {
	evs, err := s.svc.Evaluations(ctx, tenant(ctx), in.Agent, in.Limit)
	return reply(s, evs, err)
}

type getEvaluationInput struct {
	ID      string `path:"id"`
	Wait    string `query:"wait" doc:"Wait up to this long (e.g. 30s) for the evaluation to be done." example:"30s"`
	Results bool   `query:"results" default:"true" doc:"Include the results."`
	Steps   bool   `query:"steps" doc:"Include each result's pipeline steps (judge prompts; large)."`
}

func (s *Server) getEvaluation(ctx context.Context, in *getEvaluationInput) (*bodyOutput[service.EvaluationView], error) {
	o := service.ViewOptions{Results: in.Results, Steps: in.Steps}
	var wait time.Duration
	if in.Wait != "" {
		d, err := time.ParseDuration(in.Wait)
		if err != nil || d < 0 {
			return nil, problem(http.StatusBadRequest, CodeInvalidRequest, fmt.Sprintf("wait %q: want a duration such as 30s", in.Wait))
		}
		if d > s.opts.MaxWait {
			return nil, problem(http.StatusBadRequest, CodeInvalidRequest, fmt.Sprintf("wait %s: at most %s; ask again to wait longer", in.Wait, s.opts.MaxWait))
		}
		wait = d
	}
	v, err := s.svc.WaitEvaluation(ctx, tenant(ctx), in.ID, wait, o)
	return reply(s, v, err)
}

type agentInput struct {
	Agent string `path:"agent"`
}

// policyBody is an agent's on-arrival policy.
type policyBody struct {
	Scorers    []string                  `json:"scorers" minItems:"1" doc:"Scorers run on arriving runs." example:"[\"prescreen\"]"`
	SampleRate float64                   `json:"sample_rate" minimum:"0" maximum:"1" doc:"Share of arriving runs evaluated; which runs depends only on the run id." example:"1"`
	Tiered     bool                      `json:"tiered,omitempty" doc:"Run the scorers that need a judge only on runs the pre-screen passed."`
	Config     map[string]map[string]any `json:"config,omitempty" doc:"Per-scorer config."`
	Window     int                       `json:"window,omitempty" minimum:"0" maximum:"10000" doc:"How many of the agent's latest runs its insights look at. Default 100." example:"100"`
	Judge      *JudgeRoute               `json:"judge,omitempty" doc:"The judge the agent's runs are scored with, in every evaluation of the agent: an endpoint the operator allows and a model there (GET /v1/judge/endpoints lists them). Default is the operator's default endpoint and model."`
	UpdatedAt  *time.Time                `json:"updated_at,omitempty" readOnly:"true"`
}

func toPolicyBody(p store.AgentPolicy) (policyBody, error) {
	b := policyBody{Scorers: p.Scorers, SampleRate: p.SampleRate, Tiered: p.Tiered, Window: p.Window, Judge: toJudgeRoute(p.Judge)}
	if !p.UpdatedAt.IsZero() {
		at := p.UpdatedAt
		b.UpdatedAt = &at
	}
	if p.Config != nil {
		b.Config = map[string]map[string]any{}
		for k, v := range p.Config {
			var m map[string]any
			if err := json.Unmarshal(v, &m); err != nil {
				return b, err
			}
			b.Config[k] = m
		}
	}
	return b, nil
}

func (s *Server) getPolicy(ctx context.Context, in *agentInput) (*bodyOutput[policyBody], error) {
	p, err := s.svc.AgentPolicy(ctx, tenant(ctx), in.Agent)
	if err != nil {
		return nil, s.fail(err)
	}
	b, err := toPolicyBody(p)
	return reply(s, b, err)
}

type putPolicyInput struct {
	Agent string `path:"agent"`
	Body  policyBody
}

func (s *Server) putPolicy(ctx context.Context, in *putPolicyInput) (*bodyOutput[policyBody], error) {
	cfg, err := rawConfigs(in.Body.Config)
	if err != nil {
		return nil, err
	}
	p, err := s.svc.SetAgentPolicy(ctx, tenant(ctx), in.Agent, store.AgentPolicy{Scorers: in.Body.Scorers, SampleRate: in.Body.SampleRate, Tiered: in.Body.Tiered, Config: cfg, Window: in.Body.Window, Judge: in.Body.Judge.route()})
	if err != nil {
		return nil, s.fail(err)
	}
	b, err := toPolicyBody(p)
	return reply(s, b, err)
}

func (s *Server) deletePolicy(ctx context.Context, in *agentInput) (*struct{}, error) {
	if err := s.svc.DeleteAgentPolicy(ctx, tenant(ctx), in.Agent); err != nil {
		return nil, s.fail(err)
	}
	return nil, nil
}

// Count is a whole number that JSON may write in any number form (10, 1e9): a count out of
// range is then answered with the range, not with a decoding error.
type Count int

// UnmarshalJSON reads a JSON number that is a whole number.
func (c *Count) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("want a whole number, got %s", b)
	}
	if f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		if math.Abs(f) > math.MaxInt32 && f == math.Trunc(f) {
			*c = Count(math.Copysign(math.MaxInt32, f))
			return nil
		}
		return fmt.Errorf("want a whole number, got %s", b)
	}
	*c = Count(f)
	return nil
}

// Schema says Count is an integer.
func (Count) Schema(huma.Registry) *huma.Schema { return &huma.Schema{Type: huma.TypeInteger} }
