package service

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/sdk"
)

// LabelCount is how many labels a scorer or criterion has.
type LabelCount struct {
	Scorer    string `json:"scorer"`
	Labels    int64  `json:"labels"`
	Runs      int64  `json:"runs"`
	Labellers int64  `json:"labellers"`
}

// LabelCounts counts the tenant's labels per scorer or criterion.
func (s *Service) LabelCounts(ctx context.Context, t store.Tenant) ([]LabelCount, error) {
	cs, err := s.st.LabelCounts(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	out := make([]LabelCount, 0, len(cs))
	for _, c := range cs {
		out = append(out, LabelCount(c))
	}
	return out, nil
}

// ScoreLabelledResult says what ScoreLabelled started.
type ScoreLabelledResult struct {
	Scorer string `json:"scorer"`
	// Version is the scorer version the evaluations run: the one the service has now.
	Version string `json:"version"`
	// Runs is how many labelled runs are being scored.
	Runs int `json:"runs"`
	// Evaluations follow the scoring, one per agent (GET /v1/evaluations/{id}).
	Evaluations []string `json:"evaluations"`
}

// ScoreLabelled enqueues the scoring of the tenant's runs labelled for criterion
// (default the scorer) that the service's current version of scorer has no scored result
// for, as evaluations of explicit runs, one per agent, with the agent policy's config of
// the scorer when it has one. Say the judge cost first: ScorerAgreement's NotScored.
func (s *Service) ScoreLabelled(ctx context.Context, t store.Tenant, scorer, criterion string) (ScoreLabelledResult, error) {
	if err := checkLabelName("scorer", scorer); err != nil {
		return ScoreLabelledResult{}, err
	}
	if criterion == "" {
		criterion = scorer
	}
	base, err := s.spec(ctx, s.st, t, []string{scorer}, nil, false)
	if err != nil {
		return ScoreLabelledResult{}, err
	}
	out := ScoreLabelledResult{Scorer: scorer, Version: base.Scorers[0].Version, Evaluations: []string{}}
	set, err := s.labelSet(ctx, t, criterion, "")
	if err != nil {
		return out, err
	}
	if len(set.all) == 0 {
		return out, &Error{kind: ErrNotFound, msg: fmt.Sprintf("no labels for %q: label runs first", criterion)}
	}
	have, err := s.st.LabelledResults(ctx, t.ID, criterion, scorer, out.Version)
	if err != nil {
		return out, err
	}
	scored := map[int64]bool{}
	for _, r := range have {
		scored[r.RunPK] = r.Status == string(sdk.StatusScored)
	}
	byAgent := map[string][]int64{}
	var agents []string
	for pk, l := range set.runs {
		if scored[pk] {
			continue
		}
		if byAgent[l.Agent] == nil {
			agents = append(agents, l.Agent)
		}
		byAgent[l.Agent] = append(byAgent[l.Agent], pk)
	}
	slices.Sort(agents)
	for _, agent := range agents {
		pks := byAgent[agent]
		slices.Sort(pks)
		spec := base
		if pol, err := s.st.AgentPolicy(ctx, t.ID, agent); err == nil && pol.Config[scorer] != nil {
			if spec, err = s.spec(ctx, s.st, t, []string{scorer}, map[string]json.RawMessage{scorer: pol.Config[scorer]}, false); err != nil {
				return out, err
			}
		}
		for lo := 0; lo < len(pks); lo += s.maxRuns(t) {
			chunk := pks[lo:min(lo+s.maxRuns(t), len(pks))]
			spec.Limit = len(chunk)
			err := s.st.InTx(ctx, func(tx *store.Tx) error {
				ev, err := tx.CreateEvaluation(ctx, store.NewEvaluation{TenantID: t.ID, Agent: agent, Trigger: store.TriggerRequest, Spec: spec, RunPKs: chunk})
				if err != nil {
					return err
				}
				out.Evaluations = append(out.Evaluations, ev.ID)
				return s.eng.Enqueue(ctx, tx, ev, chunk)
			})
			if err != nil {
				return out, err
			}
			out.Runs += len(chunk)
		}
	}
	return out, nil
}
