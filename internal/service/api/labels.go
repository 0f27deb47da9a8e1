package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
)

// MaxLabelsBodyBytes caps a POST /v1/labels body.
const MaxLabelsBodyBytes = 16 << 20

// registerLabels adds the label operations: people's judgements of runs, and how well a
// scorer version agrees with them.
//
// Reading labels and agreement needs read; writing or removing a label, and scoring the
// labelled runs (which spends the judge budget), need admin.
func (s *Server) registerLabels(op func(scope store.Scope, id, method, path, summary string, more ...int) huma.Operation) {
	put := op(store.ScopeLabel, "put-label", http.MethodPut, "/v1/runs/{id}/labels/{scorer}", "Record a person's judgement of a run for a scorer or criterion", http.StatusNotFound)
	put.Description += " The body names the labeller and gives exactly one of passed, score (0 to 1) or choice (a rubric's choice, optionally with its score), " +
		"and optionally a note. {scorer} is a scorer's name or a criterion several scorers share. A labeller labelling the same run and scorer again replaces " +
		"their label (200); a new label answers 201. Several people may label the same run. Another tenant's run is a 404."
	huma.Register(s.api, put, s.putLabel)
	if item := s.api.OpenAPI().Paths[put.Path]; item != nil && item.Put != nil && item.Put.Responses["200"] != nil {
		created := *item.Put.Responses["200"]
		created.Description = "Created: the labeller's first label of the run for the scorer"
		item.Put.Responses["201"] = &created
	}

	huma.Register(s.api, op(store.ScopeRead, "list-run-labels", http.MethodGet, "/v1/runs/{id}/labels", "A run's labels", http.StatusNotFound), s.listRunLabels)

	del := op(store.ScopeLabel, "delete-label", http.MethodDelete, "/v1/runs/{id}/labels/{scorer}", "Remove a labeller's label of a run", http.StatusNotFound)
	del.DefaultStatus = http.StatusNoContent
	huma.Register(s.api, del, s.deleteLabel)

	huma.Register(s.api, op(store.ScopeRead, "list-labels", http.MethodGet, "/v1/labels", "The tenant's labels, in the order they were given"), s.listLabels)

	imp := op(store.ScopeLabel, "import-labels", http.MethodPost, "/v1/labels", "Store labels from JSONL; a bad line is reported, the others kept", http.StatusRequestEntityTooLarge)
	imp.MaxBodyBytes = MaxLabelsBodyBytes
	imp.Description += ` One label a line: {"run_id": "r1", "scorer": "relevancy", "labeller": "ana", "passed": false, "note": "..."} ` +
		"(or score, or choice). A line that is not JSON, has an unknown field, names no stored run of the tenant or gives a value out of range " +
		"is rejected with its line number and the reason; the good lines are stored."
	huma.Register(s.api, imp, s.importLabels)
	s.describeLabelsBody(imp)

	ag := op(store.ScopeRead, "get-agreement", http.MethodGet, "/v1/scorers/{scorer}/agreement", "How well a scorer version agrees with the tenant's labels", http.StatusNotFound)
	ag.Description += " For pass/fail labels: accuracy, Cohen's kappa, precision and recall of the failure class and the confusion matrix; for score labels: " +
		"Spearman's rho, Kendall's tau and the mean absolute error; each with its 95% interval and the number of runs. The disagreements with both sides, " +
		"each two labellers' agreement with each other (the ceiling a scorer can reach), and the labelled runs the version has not scored with the judge " +
		"cost of scoring them. Several labels of one run are combined: the majority verdict, the mean score."
	huma.Register(s.api, ag, s.getAgreement)

	sl := op(store.ScopeAdmin, "score-labelled", http.MethodPost, "/v1/scorers/{scorer}/agreement/score", "Score the labelled runs the scorer's current version has not scored",
		http.StatusNotFound)
	sl.DefaultStatus = http.StatusAccepted
	sl.Description += " Enqueues evaluations (one per agent) of the runs labelled for the criterion that the service's version of the scorer has no scored result for. " +
		"GET /v1/scorers/{scorer}/agreement says how many and their judge cost first (not_scored); GET /v1/evaluations/{id} follows each evaluation."
	huma.Register(s.api, sl, s.scoreLabelled)
}

type scoreLabelledInput struct {
	Scorer    string `path:"scorer" doc:"The scorer to score the labelled runs with." example:"relevancy"`
	Criterion string `query:"criterion" doc:"The labels whose runs to score. Default: the scorer's own."`
}

func (s *Server) scoreLabelled(ctx context.Context, in *scoreLabelledInput) (*bodyOutput[service.ScoreLabelledResult], error) {
	res, err := s.svc.ScoreLabelled(ctx, tenant(ctx), in.Scorer, in.Criterion)
	return reply(s, res, err)
}

type putLabelInput struct {
	ID     string `path:"id" doc:"The run's id."`
	Scorer string `path:"scorer" doc:"The scorer, or a criterion several scorers share." example:"relevancy"`
	Body   service.LabelInput
}

type labelOutput struct {
	Status int
	Body   service.Label
}

func (s *Server) putLabel(ctx context.Context, in *putLabelInput) (*labelOutput, error) {
	l, created, err := s.svc.PutLabel(ctx, tenant(ctx), in.ID, in.Scorer, in.Body)
	if err != nil {
		return nil, s.fail(err)
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return &labelOutput{Status: status, Body: l}, nil
}

type runLabelsInput struct {
	ID     string `path:"id" doc:"The run's id."`
	Scorer string `query:"scorer" doc:"Keep one scorer's (or criterion's) labels."`
}

func (s *Server) listRunLabels(ctx context.Context, in *runLabelsInput) (*bodyOutput[[]service.Label], error) {
	ls, err := s.svc.RunLabels(ctx, tenant(ctx), in.ID, in.Scorer)
	return reply(s, ls, err)
}

type deleteLabelInput struct {
	ID       string `path:"id" doc:"The run's id."`
	Scorer   string `path:"scorer" doc:"The scorer, or criterion, of the label."`
	Labeller string `query:"labeller" required:"true" doc:"Whose label to remove."`
}

func (s *Server) deleteLabel(ctx context.Context, in *deleteLabelInput) (*struct{}, error) {
	if err := s.svc.DeleteLabel(ctx, tenant(ctx), in.ID, in.Scorer, in.Labeller); err != nil {
		return nil, s.fail(err)
	}
	return nil, nil
}

type listLabelsInput struct {
	Scorer   string `query:"scorer" doc:"Keep one scorer's (or criterion's) labels."`
	Labeller string `query:"labeller" doc:"Keep one labeller's labels."`
	Limit    int    `query:"limit" default:"100" minimum:"1" maximum:"1000" doc:"Labels per page."`
	Cursor   string `query:"cursor" doc:"The next value of the previous page."`
}

func (s *Server) listLabels(ctx context.Context, in *listLabelsInput) (*bodyOutput[service.LabelsPage], error) {
	p, err := s.svc.Labels(ctx, tenant(ctx), service.LabelQuery{Scorer: in.Scorer, Labeller: in.Labeller, Limit: in.Limit, Cursor: in.Cursor})
	return reply(s, p, err)
}

type importLabelsInput struct {
	RawBody []byte
}

func (s *Server) importLabels(ctx context.Context, in *importLabelsInput) (*bodyOutput[service.LabelImportResult], error) {
	res, err := s.svc.ImportLabels(ctx, tenant(ctx), in.RawBody)
	return reply(s, res, err)
}

// describeLabelsBody documents POST /v1/labels's body, which the handler reads raw, line
// by line.
func (s *Server) describeLabelsBody(op huma.Operation) {
	item := s.api.OpenAPI().Paths[op.Path]
	if item == nil || item.Post == nil {
		return
	}
	item.Post.RequestBody = &huma.RequestBody{
		Required:    true,
		Description: "JSONL: one label a line (run_id, scorer, labeller, and one of passed, score or choice; note optional). Blank lines are ignored.",
		Content: map[string]*huma.MediaType{
			"application/x-ndjson": {Schema: &huma.Schema{Type: "string", Description: "One label a line."}},
		},
	}
}

type agreementInput struct {
	Scorer    string  `path:"scorer" doc:"The scorer whose results are measured." example:"relevancy"`
	Version   string  `query:"version" doc:"The scorer version. Default: the version most recently used on the labelled runs."`
	Criterion string  `query:"criterion" doc:"Compare with the labels of this criterion (one several scorers share). Default: the scorer's own labels."`
	Labeller  string  `query:"labeller" doc:"Take one person's labels as the reference. Default: every labeller's, combined."`
	Tolerance float64 `query:"tolerance" minimum:"0" maximum:"0.99" doc:"The score difference above which a run is a disagreement. Default 0.3."`
}

func (s *Server) getAgreement(ctx context.Context, in *agreementInput) (*bodyOutput[service.ScorerAgreement], error) {
	a, err := s.svc.ScorerAgreement(ctx, tenant(ctx), service.AgreementRequest{Scorer: in.Scorer, Version: in.Version,
		Criterion: in.Criterion, Labeller: in.Labeller, Tolerance: in.Tolerance})
	if err != nil {
		return nil, s.fail(err)
	}
	return &bodyOutput[service.ScorerAgreement]{Body: a}, nil
}
