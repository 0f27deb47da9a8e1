package service

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/scorers"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/sdk"
)

// Evaluation statuses.
const (
	StatusRunning = "running"
	StatusDone    = "done"
)

// EvaluationRequest asks to evaluate an agent's newest runs.
type EvaluationRequest struct {
	// Limit is how many of the agent's newest runs (by the run's time) to evaluate.
	Limit int
	// Since keeps runs at or after it. Optional.
	Since *time.Time
	// Scorers to run. Optional. Default is the agent policy's scorers, else the service's
	// default (prescreen).
	Scorers []string
	// Config maps a scorer to its config. Optional.
	Config map[string]json.RawMessage
	// Tiered runs the scorers that need a judge only on runs the pre-screen passed.
	// Optional. Default is the agent policy's.
	Tiered *bool
	// DryRun creates nothing: the view says which runs and scorers the evaluation would
	// take and its JudgeEstimate, so the cost is known before anything starts.
	DryRun bool
}

// spec checks the scorers and their configs for t (opening each once, which also warms
// the cache the jobs use) and returns what the evaluation will run.
func (s *Service) spec(ctx context.Context, src scorers.Source, t store.Tenant, names []string, config map[string]json.RawMessage, tiered bool) (store.Spec, error) {
	spec := store.Spec{Config: map[string]json.RawMessage{}, Tiered: tiered}
	seen := map[string]string{}   // plain name -> the first ref that named it
	versions := map[string]bool{} // results name of each version taken
	asked := map[string]bool{}    // the refs taken, as named
	for _, ref := range names {
		r, err := s.sc.ResolveIn(ctx, src, t, ref)
		if err != nil {
			return spec, s.scorerError(t, ref, err)
		}
		// Several versions of one scorer may score the same runs (a comparison); the
		// results of a version other than the current one are kept under name@N, so
		// that only the current one's count as the scorer's.
		key := ""
		if !r.Current {
			n := 0
			if r.Published != nil {
				n = r.Published.Version
			}
			key = fmt.Sprintf("%s@%d", r.Name, n)
		}
		if versions[cmp.Or(key, r.Name)] {
			continue // the same version named twice ("triage" and its promoted "triage@2")
		}
		versions[cmp.Or(key, r.Name)] = true
		asked[ref] = true
		if _, ok := seen[r.Name]; !ok {
			seen[r.Name] = ref
		}
		var info sdk.Info
		if v := r.Published; v != nil {
			// A version was checked when it was published, and its Info kept: it is not
			// opened here (evaluations made on arrival are made inside the import's
			// transaction; the workers open it).
			if _, ok := config[ref]; ok {
				return spec, s.scorerError(t, ref, fmt.Errorf("%w: %s is published with its config; publish a new version to change it", scorers.ErrPinned, ref))
			}
			if v.Kind == store.KindConfigured && !t.Policy.Allows(v.Base) {
				return spec, &Error{kind: ErrNotAllowed, msg: fmt.Sprintf("scorer %s configures %q, which is not allowed for tenant %q (allowed: %s)", ref, v.Base, t.Name, strings.Join(t.Policy.Scorers, ", "))}
			}
			if err := json.Unmarshal(v.Info, &info); err != nil {
				return spec, fmt.Errorf("scorer %s: stored info: %w", ref, err)
			}
		} else {
			sc, release, err := s.sc.Get(ctx, t, r.Name, config[ref])
			if err != nil {
				return spec, s.scorerError(t, ref, err)
			}
			info = sc.Info()
			release()
		}
		sr := store.ScorerRef{Name: r.Name, Version: info.Version, Judge: info.Has(sdk.CapJudge) || info.Has(sdk.CapEmbed), Key: key}
		if v := r.Published; v != nil {
			sr.Version, sr.Published, sr.Digest, sr.JudgeModel = strconv.Itoa(v.Version), v.Version, v.Digest, v.JudgeModel
		}
		spec.Scorers = append(spec.Scorers, sr)
		if c, ok := config[ref]; ok {
			spec.Config[r.Name] = c
		}
	}
	if len(spec.Config) == 0 {
		spec.Config = nil
	}
	for name := range config {
		if !asked[name] {
			return spec, invalid("config names scorer %q, which is not among the scorers evaluated (%s)", name, strings.Join(names, ", "))
		}
	}
	if _, ok := seen[jobs.PrescreenScorer]; tiered && !ok {
		if err := s.checkScreen(ctx, t); err != nil {
			return spec, err
		}
	}
	return spec, nil
}

// checkScreen checks that t may run the pre-screen that screens a tiered evaluation's judge
// scorers. Tiering is refused rather than run on a pre-screen the tenant's policy leaves
// out: the policy says what runs for the tenant, and a screen that cannot run would keep
// every judge scorer from every run.
func (s *Service) checkScreen(ctx context.Context, t store.Tenant) error {
	_, release, err := s.sc.Get(ctx, t, jobs.PrescreenScorer, nil)
	if err == nil {
		release()
		return nil
	}
	if errors.Is(err, scorers.ErrNotAllowed) {
		return &Error{kind: ErrNotAllowed, msg: fmt.Sprintf("tiered: a tiered evaluation runs the judge scorers only on runs the %q scorer passes, and tenant %s's policy does not allow it (allowed: %s); "+
			"add %q to tenant %s's scorers (scorekit tenants set-policy), or set tiered to false",
			jobs.PrescreenScorer, t.Name, strings.Join(t.Policy.Scorers, ", "), jobs.PrescreenScorer, t.Name)}
	}
	var e *Error
	if errors.As(s.scorerError(t, jobs.PrescreenScorer, err), &e) {
		return &Error{kind: e.kind, msg: "tiered: a tiered evaluation needs the pre-screen: " + e.msg + "; or set tiered to false"}
	}
	return fmt.Errorf("tiered: open the pre-screen: %w", err)
}

// scorerError says what is wrong with a scorer a tenant asked for, without the Go
// wrapping.
func (s *Service) scorerError(t store.Tenant, name string, err error) error {
	switch {
	case errors.Is(err, host.ErrUnknownScorer):
		return &Error{kind: ErrUnknownScorer, msg: fmt.Sprintf("unknown scorer %q (known: %s); GET /v1/scorers lists them", name, strings.Join(s.ScorerNames(t), ", "))}
	case errors.Is(err, scorers.ErrNotAllowed):
		return &Error{kind: ErrNotAllowed, msg: fmt.Sprintf("scorer %q is not allowed for tenant %q (allowed: %s)", name, t.Name, strings.Join(t.Policy.Scorers, ", "))}
	case errors.Is(err, scorers.ErrNoVersion):
		return &Error{kind: ErrUnknownScorer, msg: fmt.Sprintf("scorer %q: %s; GET /v1/scorers lists your scorers and their versions", name, unwrapMsg(err))}
	case errors.Is(err, scorers.ErrPinned):
		return &Error{kind: ErrInvalidConfig, msg: fmt.Sprintf("config of scorer %s: %s", name, unwrapMsg(err))}
	case errors.Is(err, host.ErrInvalidConfig):
		return &Error{kind: ErrInvalidConfig, msg: fmt.Sprintf("config of scorer %s: %s", name, strings.TrimPrefix(strings.TrimPrefix(err.Error(), "open "+name+": "), "config: "))}
	}
	return fmt.Errorf("open scorer %s: %w", name, err)
}

// unwrapMsg is err's message after its sentinel's ("no such scorer version: ...").
func unwrapMsg(err error) string {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, ": "); ok {
		return after
	}
	return msg
}

// ScorerNames lists the scorers t may run.
func (s *Service) ScorerNames(t store.Tenant) []string {
	var out []string
	for _, n := range s.sc.Host().Registry().Names() {
		if t.Policy.Allows(n) {
			out = append(out, n)
		}
	}
	return out
}

// CreateEvaluation selects the agent's newest runs and enqueues their scoring, in one
// transaction; the evaluation runs in the background (GET it, or WaitEvaluation).
func (s *Service) CreateEvaluation(ctx context.Context, t store.Tenant, agent string, req EvaluationRequest) (EvaluationView, error) {
	if max := s.maxRuns(t); req.Limit < 1 || req.Limit > max {
		return EvaluationView{}, invalid("limit %d: want 1 to %d runs", req.Limit, max)
	}
	if err := checkAgent(agent); err != nil {
		return EvaluationView{}, err
	}
	has, err := s.st.HasRuns(ctx, t.ID, agent)
	if err != nil {
		return EvaluationView{}, err
	}
	if !has {
		return EvaluationView{}, &Error{kind: ErrNotFound, msg: fmt.Sprintf("agent %q has no runs; POST /v1/runs stores them", agent)}
	}
	names, config, tiered := req.Scorers, req.Config, false
	pol, err := s.st.AgentPolicy(ctx, t.ID, agent)
	switch {
	case err == nil:
		if len(names) == 0 {
			names = pol.Scorers
		}
		if config == nil {
			config = pol.Config
		}
		tiered = pol.Tiered
	case !errors.Is(err, store.ErrNotFound):
		return EvaluationView{}, err
	}
	if len(names) == 0 {
		names = s.opts.DefaultScorers
	}
	if req.Tiered != nil {
		tiered = *req.Tiered
	}
	spec, err := s.spec(ctx, s.st, t, names, config, tiered)
	if err != nil {
		return EvaluationView{}, err
	}
	if spec.Judge, err = s.judgeRoute(pol.Judge); err != nil {
		return EvaluationView{}, err
	}
	spec.Limit, spec.Since = req.Limit, req.Since
	if req.DryRun {
		rq := store.RunQuery{Agent: agent, Limit: req.Limit}
		if req.Since != nil {
			rq.Since = *req.Since
		}
		pks, err := s.st.RunPKs(ctx, t.ID, rq)
		if err != nil {
			return EvaluationView{}, err
		}
		v := EvaluationView{Agent: agent, Trigger: store.TriggerRequest, Status: "dry_run", Limit: req.Limit, Since: req.Since, Tiered: spec.Tiered,
			Runs: int64(len(pks)), ExpectedResults: int64(len(pks) * len(spec.Scorers))}
		for _, ref := range spec.Scorers {
			v.Scorers = append(v.Scorers, ScorerSummary{Name: ref.Name, Version: ref.Version})
		}
		v.JudgeEstimate, err = s.judgeEstimate(ctx, t, agent, spec, int64(len(pks)))
		return v, err
	}
	var ev store.Evaluation
	err = s.st.InTx(ctx, func(tx *store.Tx) error {
		rq := store.RunQuery{Agent: agent, Limit: req.Limit}
		if req.Since != nil {
			rq.Since = *req.Since
		}
		pks, err := tx.RunPKs(ctx, t.ID, rq)
		if err != nil {
			return err
		}
		if len(pks) == 0 {
			return invalid("agent %q has no runs since %s", agent, req.Since.Format(time.RFC3339))
		}
		ev, err = tx.CreateEvaluation(ctx, store.NewEvaluation{TenantID: t.ID, Agent: agent, Trigger: store.TriggerRequest, Spec: spec, RunPKs: pks})
		if err != nil {
			return err
		}
		return s.eng.Enqueue(ctx, tx, ev, pks)
	})
	if err != nil {
		return EvaluationView{}, err
	}
	v, err := s.view(ctx, ev, ViewOptions{})
	if err != nil {
		return v, err
	}
	v.JudgeEstimate, err = s.judgeEstimate(ctx, t, agent, spec, ev.Runs)
	return v, err
}

// JudgeEstimate is what an evaluation's judge calls are expected to cost, said when it is
// created (or asked with dry_run before): for each scorer that calls a judge, the mean
// judge calls and tokens of its latest results on the agent's runs, times the runs; where
// there are none, one call a run and no token figure. Tiered evaluations call the judge
// only on runs the pre-screen passes: the figures are then the most.
type JudgeEstimate struct {
	JudgeCalls float64 `json:"judge_calls" doc:"Judge calls expected (cache hits included)."`
	Tokens     float64 `json:"tokens" doc:"Prompt and completion tokens expected; 0 where no earlier result measured them."`
	// TokenBudget is the tenant's judge token budget per BudgetWindow in each process
	// that scores; 0: none known here, -1: unlimited.
	TokenBudget  int64  `json:"token_budget"`
	BudgetWindow string `json:"budget_window,omitempty"`
	Basis        string `json:"basis" doc:"How the figures were reached, per scorer."`
}

// judgeCost is the judge calls (cache hits included) and tokens a stored result's
// telemetry records; ok is false for a result that is not scored or does not decode.
func judgeCost(status string, body json.RawMessage) (calls, tokens float64, ok bool) {
	var res sdk.Result
	if status != string(sdk.StatusScored) || json.Unmarshal(body, &res) != nil {
		return 0, 0, false
	}
	tel := res.Telemetry
	return float64(tel.JudgeCalls + tel.CacheHits), float64(tel.PromptTokens + tel.CompletionTokens), true
}

// judgeEstimateWindow is how many of an agent's latest results of a scorer the estimate
// reads.
const judgeEstimateWindow = 50

func (s *Service) judgeEstimate(ctx context.Context, t store.Tenant, agent string, spec store.Spec, runs int64) (*JudgeEstimate, error) {
	var est JudgeEstimate
	var basis []string
	for _, ref := range spec.Scorers {
		if !ref.Judge {
			continue
		}
		rows, err := s.st.SeriesResults(ctx, t.ID, agent, ref.ResultName(), judgeEstimateWindow, true)
		if err != nil {
			return nil, err
		}
		var calls, tokens float64
		measured := 0
		for _, r := range rows {
			if c, tk, ok := judgeCost(r.Status, r.Body); ok {
				calls, tokens = calls+c, tokens+tk
				measured++
			}
		}
		if measured == 0 {
			est.JudgeCalls += float64(runs)
			basis = append(basis, fmt.Sprintf("%s: no earlier scored result on this agent's runs, so one call a run and no token figure", ref.ResultName()))
			continue
		}
		est.JudgeCalls += float64(runs) * calls / float64(measured)
		est.Tokens += float64(runs) * tokens / float64(measured)
		basis = append(basis, fmt.Sprintf("%s: the mean of its latest %d scored results on this agent's runs", ref.ResultName(), measured))
	}
	if len(basis) == 0 {
		est.Basis = "no scorer of this evaluation calls a judge"
		return &est, nil
	}
	if spec.Tiered {
		basis = append(basis, "tiered: only runs the pre-screen passes reach the judge, so these are the most")
	}
	est.Basis = strings.Join(basis, "; ")
	if s.opts.Judge != nil {
		// The broker's figures, with the tenant's policy over them: a process that only
		// creates evaluations may not have handed the broker this tenant's limits yet.
		l := s.opts.Judge.TenantLimits(t.Name)
		est.TokenBudget, est.BudgetWindow = l.TokenBudget, l.BudgetWindow.String()
		if b := t.Policy.Judge.TokenBudget; b != 0 {
			est.TokenBudget = b
		}
	}
	return &est, nil
}
