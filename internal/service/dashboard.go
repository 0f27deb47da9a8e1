package service

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"github.com/scorekit/scorekit/internal/service/store"
)

// RunRow is a run in an agent's listing, with the latest result of each scorer.
type RunRow struct {
	ID   string
	Time time.Time
	// Input and Output are the run's, as JSON (a string, or any JSON).
	Input, Output json.RawMessage
	// Latest maps a scorer to its latest result on the run.
	Latest map[string]ResultView
}

// RunRowsPage is one page of an agent's runs, newest first.
type RunRowsPage struct {
	Runs []RunRow
	// Scorers names every scorer with a result on the page's runs, sorted.
	Scorers []string
	// Next continues the listing; empty on the last page.
	Next string
}

// AgentRuns lists the agent's runs, newest first, limit per page after cursor (the
// Next of the previous page, as Runs takes it), each with the latest result of each
// scorer. An agent the tenant has no run of is ErrNotFound.
func (s *Service) AgentRuns(ctx context.Context, t store.Tenant, agent string, limit int, cursor string) (RunRowsPage, error) {
	runs, next, err := s.runPage(ctx, t, agent, limit, cursor)
	if err != nil {
		return RunRowsPage{}, err
	}
	if len(runs) == 0 && cursor == "" {
		if err := s.agentExists(ctx, t, agent); err != nil {
			return RunRowsPage{}, err
		}
	}
	out := RunRowsPage{Next: next}
	pks := make([]int64, len(runs))
	for i, r := range runs {
		pks[i] = r.PK
	}
	latest, err := s.st.LatestResults(ctx, t.ID, pks)
	if err != nil {
		return out, err
	}
	byRun := map[int64]map[string]ResultView{}
	scorers := map[string]bool{}
	for _, r := range latest {
		if byRun[r.RunPK] == nil {
			byRun[r.RunPK] = map[string]ResultView{}
		}
		byRun[r.RunPK][r.Scorer] = resultView(r, false)
		scorers[r.Scorer] = true
	}
	out.Runs = make([]RunRow, 0, len(runs))
	for _, r := range runs {
		var body struct {
			Input  json.RawMessage `json:"input"`
			Output json.RawMessage `json:"output"`
		}
		_ = json.Unmarshal(r.Body, &body)
		out.Runs = append(out.Runs, RunRow{ID: r.ID, Time: r.Time, Input: body.Input, Output: body.Output, Latest: byRun[r.PK]})
	}
	for name := range scorers {
		out.Scorers = append(out.Scorers, name)
	}
	sort.Strings(out.Scorers)
	return out, nil
}

// EvaluationPage is an evaluation with the results of one page of its runs.
type EvaluationPage struct {
	EvaluationView
	// Page is 1-based; Pages is how many there are of PerPage runs each.
	Page, Pages, PerPage int
}

// EvaluationResults returns the tenant's evaluation id with the results of page (1-based)
// of its runs, perPage runs a page, in the evaluation's order (newest run first).
func (s *Service) EvaluationResults(ctx context.Context, t store.Tenant, id string, page, perPage int) (EvaluationPage, error) {
	if err := checkPage(perPage); err != nil {
		return EvaluationPage{}, err
	}
	ev, err := s.tenantEvaluation(ctx, t, id)
	if err != nil {
		return EvaluationPage{}, err
	}
	v, err := s.view(ctx, ev, ViewOptions{})
	if err != nil {
		return EvaluationPage{}, err
	}
	p := EvaluationPage{EvaluationView: v, PerPage: perPage, Pages: max(1, int((ev.Runs+int64(perPage)-1)/int64(perPage)))}
	if page < 1 || page > p.Pages {
		return p, invalid("page %d: the evaluation has pages 1 to %d", page, p.Pages)
	}
	p.Page = page
	rs, err := s.st.EvaluationResultsPage(ctx, t.ID, ev.PK, (page-1)*perPage, perPage)
	if err != nil {
		return p, err
	}
	p.Results = make([]ResultView, 0, len(rs))
	for _, r := range rs {
		p.Results = append(p.Results, resultView(r, false))
	}
	return p, nil
}
