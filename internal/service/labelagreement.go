package service

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/scorekit/scorekit/internal/service/agreement"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/sdk"
)

// AgreementRequest says which scorer version to hold against which labels.
type AgreementRequest struct {
	// Scorer is the scorer whose results are measured. Required.
	Scorer string
	// Version is the scorer version whose results are measured. Optional. Default is the
	// version most recently used on the labelled runs.
	Version string
	// Criterion names the labels to compare with: a criterion several scorers share, or
	// a scorer's own name. Optional. Default is Scorer.
	Criterion string
	// Labeller takes one person's labels as the reference. Optional. Default is every
	// labeller's: the majority of their pass/fail verdicts (a run they split evenly on is
	// left out and counted) and the mean of their scores.
	Labeller string
	// Tolerance is the score difference above which a run is listed as a disagreement.
	// Optional. Default is agreement.DefaultTolerance.
	Tolerance float64
}

// ScorerAgreement is how well a scorer version agrees with the tenant's labels.
type ScorerAgreement struct {
	Scorer string `json:"scorer"`
	// Version is the version measured; empty when no version has a result on the
	// labelled runs.
	Version string `json:"version"`
	// Versions lists the versions with results on the labelled runs, the most recently
	// used first.
	Versions  []string `json:"versions"`
	Criterion string   `json:"criterion"`
	Labeller  string   `json:"labeller,omitempty"`
	// Labels, LabelledRuns and Labellers count the labels compared with.
	Labels       int      `json:"labels"`
	LabelledRuns int      `json:"labelled_runs"`
	Labellers    []string `json:"labellers"`
	// PassFail compares pass/fail labels with the scorer's passed; absent when no run
	// has both.
	PassFail *agreement.PassFailReport `json:"pass_fail,omitempty"`
	// Scores compares score labels (and choices given with their score) with the
	// scorer's scores; absent when no run has both.
	Scores *agreement.ScoreReport `json:"scores,omitempty"`
	// Disagreements are the runs where the scorer and the people differ, with both sides:
	// pass/fail first, then scores, the largest difference first.
	Disagreements []Disagreement `json:"disagreements"`
	// People is how well each two labellers agree with each other on the runs both
	// labelled: the ceiling a scorer can reach.
	People []PeopleAgreement `json:"people"`
	// NotScored counts the labelled runs the version has no scored result for.
	NotScored NotScored `json:"not_scored"`
	// Notes say which labelled runs were left out of the figures and why.
	Notes []string `json:"notes,omitempty"`
}

// Disagreement is one run where the scorer and the people differ.
type Disagreement struct {
	RunID string `json:"run_id"`
	Agent string `json:"agent"`
	// Kind is pass_fail or score.
	Kind string `json:"kind" enum:"pass_fail,score"`
	// People is the reference verdict (the majority, or the mean score) and Labels every
	// label behind it.
	People VerdictPair `json:"people"`
	Labels []Label     `json:"labels"`
	// Scorer is the scorer's verdict, with its reason and the evaluation it comes from.
	Scorer       VerdictPair `json:"scorer"`
	Reason       string      `json:"reason"`
	EvaluationID string      `json:"evaluation_id"`
}

// VerdictPair is a pass/fail verdict, a score, or both.
type VerdictPair struct {
	Passed *bool    `json:"passed,omitempty"`
	Score  *float64 `json:"score,omitempty"`
}

// PeopleAgreement is how well two labellers agree with each other; B is held against A.
type PeopleAgreement struct {
	A        string                    `json:"a"`
	B        string                    `json:"b"`
	PassFail *agreement.PassFailReport `json:"pass_fail,omitempty"`
	Scores   *agreement.ScoreReport    `json:"scores,omitempty"`
}

// NotScored counts the labelled runs the version has no scored result for, and what
// scoring them would cost.
type NotScored struct {
	// Runs is the total: NoResult + OtherVersion + Skipped + Failed.
	Runs int `json:"runs"`
	// NoResult counts runs no version of the scorer has a result for.
	NoResult int `json:"no_result"`
	// OtherVersion counts runs only other versions have a result for.
	OtherVersion int `json:"other_version"`
	// Skipped and Failed count runs whose latest result of the version is skipped or
	// failed: "could not judge" is never read as a verdict.
	Skipped int `json:"skipped"`
	Failed  int `json:"failed"`
	// NeedsJudge says whether the scorer calls a judge.
	NeedsJudge bool `json:"needs_judge"`
	// JudgeCalls and Tokens estimate what scoring the runs would cost: the mean judge
	// calls and tokens (prompt and completion) of the version's scored results on the
	// labelled runs, times Runs. Basis says what the estimate rests on.
	JudgeCalls float64 `json:"judge_calls"`
	Tokens     float64 `json:"tokens"`
	Basis      string  `json:"basis"`
}

// Kinds of a Disagreement.
const (
	KindPassFail = "pass_fail"
	KindScore    = "score"
)

// maxPeoplePairs caps the pairs of labellers compared: the pairs with the most runs in
// common are kept.
const maxPeoplePairs = 20

// labelSet is the labels of one criterion, grouped.
type labelSet struct {
	all       []store.Label
	byRun     map[int64][]store.Label
	runs      map[int64]store.Label // one label per run, for its id and agent
	labellers []string
}

func (s *Service) labelSet(ctx context.Context, t store.Tenant, criterion, labeller string) (labelSet, error) {
	ls, err := s.st.Labels(ctx, t.ID, store.LabelQuery{Scorer: criterion, Labeller: labeller})
	if err != nil {
		return labelSet{}, err
	}
	set := labelSet{all: ls, byRun: map[int64][]store.Label{}, runs: map[int64]store.Label{}}
	seen := map[string]bool{}
	for _, l := range ls {
		set.byRun[l.RunPK] = append(set.byRun[l.RunPK], l)
		set.runs[l.RunPK] = l
		if !seen[l.Labeller] {
			seen[l.Labeller] = true
			set.labellers = append(set.labellers, l.Labeller)
		}
	}
	slices.Sort(set.labellers)
	return set, nil
}

// reference is the people's verdict of each run: the majority of pass/fail labels and
// the mean of score labels; ties and choices without a score are counted in notes.
func (set labelSet) reference() (passed map[int64]bool, scores map[int64]float64, ties, unscoredChoices int) {
	passed, scores = map[int64]bool{}, map[int64]float64{}
	for pk, ls := range set.byRun {
		var pass, fail, n int
		var sum float64
		for _, l := range ls {
			switch {
			case l.Passed != nil && *l.Passed:
				pass++
			case l.Passed != nil:
				fail++
			case l.Score != nil:
				sum += *l.Score
				n++
			default:
				unscoredChoices++
			}
		}
		switch {
		case pass > fail:
			passed[pk] = true
		case fail > pass:
			passed[pk] = false
		case pass > 0:
			ties++
		}
		if n > 0 {
			scores[pk] = sum / float64(n)
		}
	}
	return passed, scores, ties, unscoredChoices
}

// ScorerAgreement measures how well a scorer version agrees with the tenant's labels:
// for pass/fail labels accuracy, Cohen's kappa, the precision and recall of the failure
// class and the confusion matrix; for scores Spearman's rho, Kendall's tau and the mean
// absolute error; each with its 95% interval and N (internal/service/agreement). Beside them, how
// well each two labellers agree with each other, and how many labelled runs the version
// has not scored, with the judge cost of scoring them. The promotion gate holds a
// candidate version against the current one with VersionTriples.
func (s *Service) ScorerAgreement(ctx context.Context, t store.Tenant, req AgreementRequest) (ScorerAgreement, error) {
	if err := checkLabelName("scorer", req.Scorer); err != nil {
		return ScorerAgreement{}, err
	}
	if req.Criterion == "" {
		req.Criterion = req.Scorer
	}
	if req.Tolerance < 0 || req.Tolerance >= 1 {
		return ScorerAgreement{}, invalid("tolerance %v: want a score difference in [0, 1) (0 means %v)", req.Tolerance, agreement.DefaultTolerance)
	}
	set, err := s.labelSet(ctx, t, req.Criterion, req.Labeller)
	if err != nil {
		return ScorerAgreement{}, err
	}
	if len(set.all) == 0 {
		who := ""
		if req.Labeller != "" {
			who = fmt.Sprintf(" by %q", req.Labeller)
		}
		return ScorerAgreement{}, &Error{kind: ErrNotFound, msg: fmt.Sprintf(
			"no labels for %q%s: label runs first (PUT /v1/runs/{id}/labels/%s, scorekit labels import)", req.Criterion, who, req.Criterion)}
	}
	out := ScorerAgreement{Scorer: req.Scorer, Criterion: req.Criterion, Labeller: req.Labeller, Labels: len(set.all),
		LabelledRuns: len(set.byRun), Labellers: set.labellers, Disagreements: []Disagreement{}, People: []PeopleAgreement{}}
	if out.Versions, err = s.st.ScorerVersions(ctx, t.ID, req.Criterion, req.Scorer); err != nil {
		return out, err
	}
	out.Version = req.Version
	if out.Version == "" && len(out.Versions) > 0 {
		out.Version = out.Versions[0]
	}
	latest, err := s.st.LabelledResults(ctx, t.ID, req.Criterion, req.Scorer, "")
	if err != nil {
		return out, err
	}
	results := map[int64]store.Result{}
	if out.Version != "" {
		if results, err = s.versionResults(ctx, t, req.Criterion, req.Scorer, out.Version, nil); err != nil {
			return out, err
		}
	}
	if req.Version != "" && !slices.Contains(out.Versions, req.Version) {
		if len(results) > 0 { // found under name@N only: scored beside the promoted version
			out.Versions = append(out.Versions, req.Version)
		} else {
			out.Notes = append(out.Notes, fmt.Sprintf("version %q of %s has no result on the labelled runs (versions with results: %v)", req.Version, req.Scorer, out.Versions))
		}
	}
	anyVersion := make(map[int64]bool, len(latest))
	for _, r := range latest {
		anyVersion[r.RunPK] = true
	}
	out.NotScored = s.notScored(t, req.Scorer, set, results, anyVersion)
	if err := s.scoreChoices(ctx, t, req.Scorer, set, results); err != nil {
		return out, err
	}

	passed, scores, ties, choices := set.reference()
	if ties > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d runs left out of pass/fail: their labellers split evenly (add a label, or pick one labeller)", ties))
	}
	if choices > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d choice labels left out: a choice is compared by its score, and neither the label nor the rubric of the result compared gives one "+
			"(give the choice's score with it)", choices))
	}
	id := func(pk int64) string { return set.runs[pk].RunID }
	var pfPairs []agreement.Pair[bool]
	var scPairs []agreement.Pair[float64]
	pkOf := map[string]int64{}
	for pk, l := range set.runs {
		pkOf[l.RunID] = pk
		r, ok := results[pk]
		if !ok || r.Status != string(sdk.StatusScored) {
			continue
		}
		if want, ok := passed[pk]; ok && r.Passed != nil {
			pfPairs = append(pfPairs, agreement.Pair[bool]{RunID: id(pk), Want: want, Got: *r.Passed})
		}
		if want, ok := scores[pk]; ok && r.Score != nil {
			scPairs = append(scPairs, agreement.Pair[float64]{RunID: id(pk), Want: want, Got: *r.Score})
		}
	}
	slices.SortFunc(pfPairs, func(a, b agreement.Pair[bool]) int { return cmp.Compare(a.RunID, b.RunID) })
	slices.SortFunc(scPairs, func(a, b agreement.Pair[float64]) int { return cmp.Compare(a.RunID, b.RunID) })
	if len(pfPairs) > 0 {
		rep, err := agreement.PassFail(pfPairs)
		if err != nil {
			return out, err
		}
		out.PassFail = &rep
		if err := s.recordKappa(ctx, t, req.Scorer, out.Version, rep.Kappa); err != nil {
			return out, err
		}
		for _, d := range rep.Disagreements {
			pk := pkOf[d.RunID]
			want, got := d.Want, d.Got
			out.Disagreements = append(out.Disagreements, disagreement(set, results[pk], KindPassFail,
				VerdictPair{Passed: &want}, VerdictPair{Passed: &got, Score: results[pk].Score}))
		}
	}
	if len(scPairs) > 0 {
		rep, err := agreement.Scores(scPairs, req.Tolerance)
		if err != nil {
			return out, err
		}
		out.Scores = &rep
		for _, d := range rep.Disagreements {
			pk := pkOf[d.RunID]
			want, got := d.Want, d.Got
			out.Disagreements = append(out.Disagreements, disagreement(set, results[pk], KindScore,
				VerdictPair{Score: &want}, VerdictPair{Score: &got, Passed: results[pk].Passed}))
		}
	}
	if req.Labeller == "" {
		if out.People, err = set.people(req.Tolerance); err != nil {
			return out, err
		}
	}
	return out, nil
}

// scoreChoices gives a choice label without a score the score the scorer's rubric gave
// that choice in the evaluation of the result it is compared with: the mapping the
// scorer itself used.
func (s *Service) scoreChoices(ctx context.Context, t store.Tenant, scorer string, set labelSet, results map[int64]store.Result) error {
	cache := map[string]map[string]float64{}
	for pk, ls := range set.byRun {
		r, ok := results[pk]
		for i, l := range ls {
			if l.Choice == nil || l.Score != nil || !ok {
				continue
			}
			m, seen := cache[r.EvaluationID]
			if !seen {
				cs, err := s.EvaluationChoices(ctx, t, r.EvaluationID, scorer)
				if err != nil {
					return err
				}
				m = map[string]float64{}
				for _, c := range cs {
					m[c.Name] = c.Score
				}
				cache[r.EvaluationID] = m
			}
			if sc, ok := m[*l.Choice]; ok {
				ls[i].Score = &sc
			}
		}
	}
	return nil
}

func disagreement(set labelSet, r store.Result, kind string, people, scorer VerdictPair) Disagreement {
	d := Disagreement{RunID: r.RunID, Kind: kind, People: people, Scorer: scorer, EvaluationID: r.EvaluationID}
	for _, l := range set.byRun[r.RunPK] {
		d.Agent = l.Agent
		d.Labels = append(d.Labels, labelView(l))
	}
	var res sdk.Result
	if json.Unmarshal(r.Body, &res) == nil {
		d.Reason = res.Reason
	}
	return d
}

// notScored counts the labelled runs without a scored result of the version and
// estimates the judge cost of scoring them from the version's scored results.
func (s *Service) notScored(t store.Tenant, scorer string, set labelSet, results map[int64]store.Result, anyVersion map[int64]bool) NotScored {
	var ns NotScored
	var calls, tokens float64
	var measured int
	for pk := range set.byRun {
		r, ok := results[pk]
		switch {
		case !ok && anyVersion[pk]:
			ns.OtherVersion++
		case !ok:
			ns.NoResult++
		case r.Status == string(sdk.StatusSkipped):
			ns.Skipped++
		case r.Status != string(sdk.StatusScored):
			ns.Failed++
		default:
			if c, tk, ok := judgeCost(r.Status, r.Body); ok {
				calls, tokens = calls+c, tokens+tk
				measured++
			}
		}
	}
	ns.Runs = ns.NoResult + ns.OtherVersion + ns.Skipped + ns.Failed
	if p, err := s.sc.Host().Registry().Lookup(scorer); err == nil {
		info := p.Info()
		ns.NeedsJudge = info.Has(sdk.CapJudge)
	}
	switch {
	case !ns.NeedsJudge:
		ns.Basis = "the scorer calls no judge: scoring costs no judge calls"
	case measured == 0:
		ns.Basis = "no scored result of this version on the labelled runs to estimate from; expect the judge calls of one evaluation of these runs"
	default:
		ns.JudgeCalls = float64(ns.Runs) * calls / float64(measured)
		ns.Tokens = float64(ns.Runs) * tokens / float64(measured)
		ns.Basis = fmt.Sprintf("the mean of %d scored results of this version on the labelled runs (judge calls including cache hits)", measured)
	}
	return ns
}

// people measures each two labellers against each other on the runs both labelled.
func (set labelSet) people(tolerance float64) ([]PeopleAgreement, error) {
	by := map[string]map[int64]store.Label{}
	for _, l := range set.all {
		if by[l.Labeller] == nil {
			by[l.Labeller] = map[int64]store.Label{}
		}
		by[l.Labeller][l.RunPK] = l
	}
	type pair struct {
		a, b   string
		common int
	}
	var pairs []pair
	for i, a := range set.labellers {
		for _, b := range set.labellers[i+1:] {
			n := 0
			for pk := range by[a] {
				if _, ok := by[b][pk]; ok {
					n++
				}
			}
			if n > 0 {
				pairs = append(pairs, pair{a, b, n})
			}
		}
	}
	slices.SortStableFunc(pairs, func(x, y pair) int { return cmp.Compare(y.common, x.common) })
	out := []PeopleAgreement{}
	for _, p := range pairs[:min(len(pairs), maxPeoplePairs)] {
		var pf []agreement.Pair[bool]
		var sc []agreement.Pair[float64]
		for pk, la := range by[p.a] {
			lb, ok := by[p.b][pk]
			if !ok {
				continue
			}
			if la.Passed != nil && lb.Passed != nil {
				pf = append(pf, agreement.Pair[bool]{RunID: la.RunID, Want: *la.Passed, Got: *lb.Passed})
			}
			if la.Score != nil && lb.Score != nil {
				sc = append(sc, agreement.Pair[float64]{RunID: la.RunID, Want: *la.Score, Got: *lb.Score})
			}
		}
		slices.SortFunc(pf, func(a, b agreement.Pair[bool]) int { return cmp.Compare(a.RunID, b.RunID) })
		slices.SortFunc(sc, func(a, b agreement.Pair[float64]) int { return cmp.Compare(a.RunID, b.RunID) })
		pa := PeopleAgreement{A: p.a, B: p.b}
		if len(pf) > 0 {
			r, err := agreement.PassFail(pf)
			if err != nil {
				return nil, err
			}
			pa.PassFail = &r
		}
		if len(sc) > 0 {
			r, err := agreement.Scores(sc, tolerance)
			if err != nil {
				return nil, err
			}
			pa.Scores = &r
		}
		if pa.PassFail != nil || pa.Scores != nil {
			out = append(out, pa)
		}
	}
	return out, nil
}
