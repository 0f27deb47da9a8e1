package service

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/sdk"
)

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
	ev, err := s.tenantEvaluation(ctx, t, id)
	if err != nil {
		return EvaluationView{}, err
	}
	return s.view(ctx, ev, o)
}

// tenantEvaluation finds the tenant's evaluation or says there is none.
func (s *Service) tenantEvaluation(ctx context.Context, t store.Tenant, id string) (store.Evaluation, error) {
	ev, err := s.st.Evaluation(ctx, t.ID, id)
	return ev, notFound(err, "no evaluation %q", id)
}

// WaitEvaluation is Evaluation after waiting up to wait for the evaluation to be done: for
// an open arrival evaluation, for the results of the runs it had when asked.
func (s *Service) WaitEvaluation(ctx context.Context, t store.Tenant, id string, wait time.Duration, o ViewOptions) (EvaluationView, error) {
	ev, err := s.tenantEvaluation(ctx, t, id)
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
	var tally scoreTally
	versions := map[string]bool{}
	for _, r := range old {
		versions[r.ScorerVersion] = true
		if r.Status == string(sdk.StatusScored) {
			tally.add(r.Score, r.Passed)
		}
	}
	for v := range versions {
		p.Versions = append(p.Versions, v)
	}
	sort.Strings(p.Versions)
	p.Scored, p.Mean, p.PassRate = tally.scored, tally.mean(), tally.passRate()
	return p
}

// scoreTally sums up scored results for a mean and a pass rate: the mean is over the
// results with a score, the pass rate over those of them judged passed or not.
type scoreTally struct {
	scored, judged, passed int64
	sum                    float64
}

// add counts a scored result; one without a score counts for nothing.
func (a *scoreTally) add(score *float64, passed *bool) {
	if score == nil {
		return
	}
	a.scored++
	a.sum += *score
	if passed != nil {
		a.judged++
		if *passed {
			a.passed++
		}
	}
}

func (a scoreTally) mean() *float64     { return mean(a.sum, a.scored) }
func (a scoreTally) passRate() *float64 { return mean(float64(a.passed), a.judged) }

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
