package service

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
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

// ViewOptions say what an evaluation's view carries.
type ViewOptions struct {
	// Results includes every result, with the previous version's beside it.
	Results bool
	// Steps includes each result's pipeline steps (judge prompts; large).
	Steps bool
}

// EvaluationView is an evaluation with its progress and per-scorer summary.
type EvaluationView struct {
	ID      string `json:"id"`
	Agent   string `json:"agent"`
	Trigger string `json:"trigger" enum:"request,arrival"`
	Status  string `json:"status" enum:"running,done,dry_run" doc:"dry_run: an evaluation asked with dry_run, not created."`
	// Open is true for an arrival evaluation still taking the agent's arriving runs: its
	// runs and expected results grow as they arrive, and done means done so far.
	Open      bool       `json:"open,omitempty" doc:"An arrival evaluation still taking the agent's arriving runs: runs and expected_results grow as they arrive (done means every result so far is stored). It closes when it holds the most runs or grows old; later runs open the next."`
	CreatedAt time.Time  `json:"created_at"`
	Limit     int        `json:"limit,omitempty"`
	Since     *time.Time `json:"since,omitempty"`
	Tiered    bool       `json:"tiered"`
	// Runs is how many runs the evaluation covers; ExpectedResults is runs x scorers;
	// DoneResults how many are stored.
	Runs            int64           `json:"runs"`
	ExpectedResults int64           `json:"expected_results"`
	DoneResults     int64           `json:"done_results"`
	Scorers         []ScorerSummary `json:"scorers"`
	// Disagreements are the runs on which versions of one scorer the evaluation ran
	// side by side (e.g. "triage@1" and "triage@2") gave different verdicts.
	Disagreements []VersionDisagreement `json:"disagreements,omitempty"`
	// JudgeEstimate is said when an evaluation is created or asked with dry_run.
	JudgeEstimate *JudgeEstimate `json:"judge_estimate,omitempty"`
	Results       []ResultView   `json:"results,omitempty"`
}

// VersionDisagreement is a run on which versions of one scorer disagree: one passed it and
// another did not, or one scored it and another skipped or failed.
type VersionDisagreement struct {
	RunID  string `json:"run_id"`
	Scorer string `json:"scorer" doc:"The scorer's plain name."`
	// Verdicts are each version's, in the evaluation's order.
	Verdicts []VersionVerdict `json:"verdicts"`
}

// VersionVerdict is one version's result in a VersionDisagreement.
type VersionVerdict struct {
	Scorer  string   `json:"scorer" doc:"The name the results are under: the plain name for the promoted version, name@N for another."`
	Version string   `json:"version"`
	Status  string   `json:"status"`
	Score   *float64 `json:"score"`
	Passed  *bool    `json:"passed"`
	Reason  string   `json:"reason,omitempty"`
}

// ScorerSummary sums up one scorer's results. Mean and pass rate count scored results
// only: skipped and failed results are never scores of 0.
type ScorerSummary struct {
	Name     string   `json:"name"`
	Version  string   `json:"version"`
	Scored   int64    `json:"scored"`
	Skipped  int64    `json:"skipped"`
	Failed   int64    `json:"failed"`
	Pending  int64    `json:"pending"`
	Mean     *float64 `json:"mean"`
	PassRate *float64 `json:"pass_rate"`
	// Previous sums up the same runs' latest results from an earlier version of the
	// scorer, when there are any: the comparison a user checks after a scorer fix.
	Previous *PreviousSummary `json:"previous,omitempty"`
}

// PreviousSummary is what an earlier version of a scorer said about the same runs.
type PreviousSummary struct {
	Versions []string `json:"versions"`
	Runs     int64    `json:"runs"`
	Scored   int64    `json:"scored"`
	Mean     *float64 `json:"mean"`
	PassRate *float64 `json:"pass_rate"`
}

// ResultView is one result as the API shows it.
type ResultView struct {
	EvaluationID  string             `json:"evaluation_id"`
	RunID         string             `json:"run_id"`
	Scorer        string             `json:"scorer"`
	ScorerVersion string             `json:"scorer_version"`
	ScorerDigest  string             `json:"scorer_digest,omitempty" doc:"A published scorer's module digest or config hash."`
	JudgeModel    string             `json:"judge_model,omitempty"`
	Status        string             `json:"status" enum:"scored,skipped,failed"`
	Score         *float64           `json:"score"`
	Passed        *bool              `json:"passed"`
	Dimensions    map[string]float64 `json:"dimensions,omitempty"`
	Flags         []string           `json:"flags,omitempty"`
	Reason        string             `json:"reason,omitempty"`
	Error         *sdk.Error         `json:"error,omitempty"`
	Adjustments   []sdk.Adjustment   `json:"adjustments,omitempty" doc:"What the host changed in the scorer's numbers and why (normalization, citation clamps, the weighted overall)."`
	Steps         []sdk.Step         `json:"steps,omitempty"`
	// DecodeError is set when the stored result cannot be decoded (a damaged row): its
	// status, score and passed come from columns of their own and hold, but its reason,
	// dimensions, flags, error, adjustments and steps are lost.
	DecodeError string    `json:"decode_error,omitempty" doc:"Set when the stored result cannot be decoded: status, score and passed hold (they are stored apart), reason, dimensions, flags, error, adjustments and steps are lost."`
	CreatedAt   time.Time `json:"created_at"`
	// Previous is this run's latest result from an earlier version of the scorer.
	Previous *PreviousResult `json:"previous,omitempty"`
}

// PreviousResult is an earlier version's result on the same run.
type PreviousResult struct {
	EvaluationID  string    `json:"evaluation_id"`
	ScorerVersion string    `json:"scorer_version"`
	Status        string    `json:"status"`
	Score         *float64  `json:"score"`
	Passed        *bool     `json:"passed"`
	CreatedAt     time.Time `json:"created_at"`
}

func resultView(r store.Result, steps bool) ResultView {
	v := ResultView{EvaluationID: r.EvaluationID, RunID: r.RunID, Scorer: r.Scorer, ScorerVersion: r.ScorerVersion,
		ScorerDigest: r.ScorerDigest, JudgeModel: r.JudgeModel, Status: r.Status, Score: r.Score, Passed: r.Passed, CreatedAt: r.CreatedAt}
	var res sdk.Result
	if err := json.Unmarshal(r.Body, &res); err != nil {
		// Reported on the result, not the whole answer: one damaged row must not hide the
		// others, and its own columns still hold.
		v.DecodeError = fmt.Sprintf("the stored result of run %s by %s does not decode (%v); its status, score and passed are shown, its details are lost",
			r.RunID, r.Scorer, strings.TrimPrefix(err.Error(), "json: "))
		return v
	}
	v.Dimensions, v.Flags, v.Reason, v.Error, v.Adjustments = res.Dimensions, res.Flags, res.Reason, res.Error, res.Adjustments
	if steps {
		v.Steps = res.Steps
	}
	return v
}

// Evaluation returns the tenant's evaluation id.
func (s *Service) Evaluation(ctx context.Context, t store.Tenant, id string, o ViewOptions) (EvaluationView, error) {
	ev, err := s.st.Evaluation(ctx, t.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return EvaluationView{}, &Error{kind: ErrNotFound, msg: fmt.Sprintf("no evaluation %q", id)}
	}
	if err != nil {
		return EvaluationView{}, err
	}
	return s.view(ctx, ev, o)
}

// WaitEvaluation is Evaluation after waiting up to wait for the evaluation to be done: for
// an open arrival evaluation, for the results of the runs it had when asked.
func (s *Service) WaitEvaluation(ctx context.Context, t store.Tenant, id string, wait time.Duration, o ViewOptions) (EvaluationView, error) {
	ev, err := s.st.Evaluation(ctx, t.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return EvaluationView{}, &Error{kind: ErrNotFound, msg: fmt.Sprintf("no evaluation %q", id)}
	}
	if err != nil {
		return EvaluationView{}, err
	}
	deadline := time.Now().Add(wait)
	pause := 5 * time.Millisecond
	for {
		// Asked for before counting, so a commit between the count and the wait wakes it.
		var stored <-chan struct{}
		if s.eng != nil {
			stored = s.eng.Stored()
		}
		n, err := s.st.CountResults(ctx, ev.PK)
		if err != nil {
			return EvaluationView{}, err
		}
		left := time.Until(deadline)
		if n >= ev.Expected || left <= 0 {
			break
		}
		// This process's jobs wake the wait when they commit; the poll, backing off to
		// 50 ms, finds what workers elsewhere stored.
		select {
		case <-ctx.Done():
			return EvaluationView{}, ctx.Err()
		case <-stored:
		case <-time.After(min(pause, left)):
			pause = min(pause*2, 50*time.Millisecond)
		}
	}
	// An open arrival evaluation may have grown while waiting: the view is of it now.
	if ev.Open {
		if ev, err = s.st.EvaluationByPK(ctx, ev.TenantID, ev.PK); err != nil {
			return EvaluationView{}, err
		}
	}
	return s.view(ctx, ev, o)
}

func (s *Service) view(ctx context.Context, ev store.Evaluation, o ViewOptions) (EvaluationView, error) {
	v := EvaluationView{ID: ev.ID, Agent: ev.Agent, Trigger: ev.Trigger, CreatedAt: ev.CreatedAt, Limit: ev.Spec.Limit,
		Since: ev.Spec.Since, Tiered: ev.Spec.Tiered, Runs: ev.Runs, ExpectedResults: ev.Expected,
		// One past its age is closed: the next arrival would open another.
		Open: ev.Open && time.Since(ev.CreatedAt) < s.opts.ArrivalMaxAge}
	tallies, err := s.st.Tallies(ctx, ev.PK)
	if err != nil {
		return v, err
	}
	byName := map[string]store.Tally{}
	for _, tl := range tallies {
		byName[tl.Scorer] = tl
		v.DoneResults += tl.Scored + tl.Skipped + tl.Failed
	}
	v.Status = StatusRunning
	if v.DoneResults >= v.ExpectedResults {
		v.Status = StatusDone
	}
	prev := map[store.ResultKey]store.Result{}
	compared := false // several versions of one scorer
	names := map[string]int{}
	for _, ref := range ev.Spec.Scorers {
		names[ref.Name]++
		compared = compared || names[ref.Name] > 1
		key := ref.ResultName()
		tl := byName[key]
		sum := ScorerSummary{Name: key, Version: ref.Version, Scored: tl.Scored, Skipped: tl.Skipped, Failed: tl.Failed,
			Pending: ev.Runs - tl.Scored - tl.Skipped - tl.Failed, Mean: mean(tl.Sum, tl.Scored), PassRate: mean(float64(tl.PassedN), tl.Judged)}
		old, err := s.st.PreviousResults(ctx, ev.TenantID, ev.PK, ref.Name, ref.Version)
		if err != nil {
			return v, err
		}
		if len(old) > 0 {
			sum.Previous = previousSummary(old)
			for _, r := range old {
				prev[store.ResultKey{RunPK: r.RunPK, Scorer: key}] = r
			}
		}
		v.Scorers = append(v.Scorers, sum)
	}
	if !o.Results && !compared {
		return v, nil
	}
	rs, err := s.st.EvaluationResults(ctx, ev.TenantID, ev.PK)
	if err != nil {
		return v, err
	}
	if compared {
		v.Disagreements = disagreements(ev.Spec.Scorers, rs)
	}
	if !o.Results {
		return v, nil
	}
	v.Results = make([]ResultView, 0, len(rs))
	for _, r := range rs {
		rv := resultView(r, o.Steps)
		if p, ok := prev[store.ResultKey{RunPK: r.RunPK, Scorer: r.Scorer}]; ok && p.ScorerVersion != r.ScorerVersion {
			rv.Previous = &PreviousResult{EvaluationID: p.EvaluationID, ScorerVersion: p.ScorerVersion, Status: p.Status, Score: p.Score, Passed: p.Passed, CreatedAt: p.CreatedAt}
		}
		v.Results = append(v.Results, rv)
	}
	return v, nil
}

// disagreements lists the runs on which the versions of a scorer that refs name more
// than once give different verdicts (passed or not, or a different status).
func disagreements(refs []store.ScorerRef, rs []store.Result) []VersionDisagreement {
	byKey := map[store.ResultKey]store.Result{}
	var runs []store.Result // one per run, in the evaluation's order
	seen := map[int64]bool{}
	for _, r := range rs {
		byKey[store.ResultKey{RunPK: r.RunPK, Scorer: r.Scorer}] = r
		if !seen[r.RunPK] {
			seen[r.RunPK] = true
			runs = append(runs, r)
		}
	}
	groups, order := groupBy(refs, func(ref store.ScorerRef) string { return ref.Name })
	var out []VersionDisagreement
	for _, name := range order {
		g := groups[name]
		if len(g) < 2 {
			continue
		}
		for _, run := range runs {
			d := VersionDisagreement{RunID: run.RunID, Scorer: name}
			verdicts := map[string]bool{}
			for _, ref := range g {
				r, ok := byKey[store.ResultKey{RunPK: run.RunPK, Scorer: ref.ResultName()}]
				if !ok {
					continue
				}
				vd := VersionVerdict{Scorer: r.Scorer, Version: r.ScorerVersion, Status: r.Status, Score: r.Score, Passed: r.Passed}
				var res sdk.Result
				if json.Unmarshal(r.Body, &res) == nil {
					vd.Reason = res.Reason
				}
				d.Verdicts = append(d.Verdicts, vd)
				verdicts[fmt.Sprintf("%s/%v", r.Status, r.Passed != nil && *r.Passed)] = true
			}
			if len(verdicts) > 1 {
				out = append(out, d)
			}
		}
	}
	return out
}

func previousSummary(old []store.Result) *PreviousSummary {
	p := &PreviousSummary{Runs: int64(len(old))}
	var sum float64
	var judged, passed int64
	versions := map[string]bool{}
	for _, r := range old {
		versions[r.ScorerVersion] = true
		if r.Status != string(sdk.StatusScored) || r.Score == nil {
			continue
		}
		p.Scored++
		sum += *r.Score
		if r.Passed != nil {
			judged++
			if *r.Passed {
				passed++
			}
		}
	}
	for v := range versions {
		p.Versions = append(p.Versions, v)
	}
	sort.Strings(p.Versions)
	p.Mean, p.PassRate = mean(sum, p.Scored), mean(float64(passed), judged)
	return p
}

// mean is sum/n, or nil when there is nothing to average.
func mean(sum float64, n int64) *float64 {
	if n == 0 {
		return nil
	}
	m := sum / float64(n)
	return &m
}

// Evaluations lists the agent's evaluations, newest first (summaries, no results).
func (s *Service) Evaluations(ctx context.Context, t store.Tenant, agent string, limit int) ([]EvaluationView, error) {
	evs, err := s.st.Evaluations(ctx, t.ID, agent, limit)
	if err != nil {
		return nil, err
	}
	out := make([]EvaluationView, 0, len(evs))
	for _, ev := range evs {
		v, err := s.view(ctx, ev, ViewOptions{})
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
