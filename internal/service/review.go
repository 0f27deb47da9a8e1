package service

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"github.com/scorekit/scorekit/internal/service/store"
)

// Why a run is worth a look, in the order a review walks them.
const (
	// WhyVersionsDisagree: two versions of the scorer gave the run different verdicts.
	WhyVersionsDisagree = "versions_disagree"
	// WhyUnsure: the scorer's latest score is near its pass threshold.
	WhyUnsure = "unsure"
	// WhySample: neither; a sample drawn by run id, the same for every reviewer.
	WhySample = "sample"
)

// Bounds of a review queue.
const (
	// reviewWindow is how many of the scorer's latest results a queue is drawn from.
	reviewWindow = 2000
	// UnsureMargin is how near its threshold a score is to count as unsure.
	UnsureMargin = 0.15
)

// ReviewItem is a run worth a person's look for a scorer.
type ReviewItem struct {
	RunID string `json:"run_id"`
	Agent string `json:"agent"`
	// Why is versions_disagree, unsure or sample; Detail says it in words.
	Why    string `json:"why"`
	Detail string `json:"detail"`
	// Version, Score and Passed are the scorer's latest result.
	Version string   `json:"version"`
	Score   *float64 `json:"score,omitempty"`
	Passed  *bool    `json:"passed,omitempty"`
}

// ReviewQueue returns up to limit of the tenant's runs worth a look for scorer that the
// labeller has not labelled for criterion (default the scorer): first the runs two
// versions of the scorer disagree on, then the runs whose latest score is nearest the
// scorer's threshold (within UnsureMargin), then a sample of the rest in an order fixed by
// run id. It draws from the scorer's latest results (reviewWindow of them), so a tenant
// with a million runs reviews as fast as one with a hundred.
func (s *Service) ReviewQueue(ctx context.Context, t store.Tenant, scorer, criterion, labeller string, limit int) ([]ReviewItem, error) {
	if err := checkLabelName("scorer", scorer); err != nil {
		return nil, err
	}
	if criterion == "" {
		criterion = scorer
	}
	heads, err := s.st.RecentResults(ctx, t.ID, scorer, reviewWindow)
	if err != nil {
		return nil, err
	}
	done := map[int64]bool{}
	if labeller != "" {
		ls, err := s.st.Labels(ctx, t.ID, store.LabelQuery{Scorer: criterion, Labeller: labeller})
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			done[l.RunPK] = true
		}
	}
	threshold := 0.5
	if p, err := s.sc.Host().Registry().Lookup(scorer); err == nil {
		threshold = p.Info().Threshold
	}
	type run struct {
		latest   store.ResultHead
		versions map[string]*bool // each version's latest verdict
		order    []string         // versions, the latest first
	}
	runs := map[int64]*run{}
	var pks []int64
	for _, h := range heads { // newest first
		if done[h.RunPK] {
			continue
		}
		r := runs[h.RunPK]
		if r == nil {
			r = &run{latest: h, versions: map[string]*bool{}}
			runs[h.RunPK] = r
			pks = append(pks, h.RunPK)
		}
		if _, ok := r.versions[h.Version]; !ok && h.Status == "scored" {
			r.versions[h.Version] = h.Passed
			r.order = append(r.order, h.Version)
		}
	}
	var disagree, unsure, sample []ReviewItem
	var dist []float64
	for _, pk := range pks {
		r := runs[pk]
		it := ReviewItem{RunID: r.latest.RunID, Agent: r.latest.Agent, Version: r.latest.Version, Score: r.latest.Score, Passed: r.latest.Passed}
		if d := versionsDisagree(r.versions, r.order); d != "" {
			it.Why, it.Detail = WhyVersionsDisagree, d
			disagree = append(disagree, it)
			continue
		}
		if r.latest.Status == "scored" && r.latest.Score != nil && math.Abs(*r.latest.Score-threshold) <= UnsureMargin {
			it.Why = WhyUnsure
			it.Detail = fmt.Sprintf("score %.2f, %.2f from the threshold %.2f", *r.latest.Score, math.Abs(*r.latest.Score-threshold), threshold)
			unsure = append(unsure, it)
			dist = append(dist, math.Abs(*r.latest.Score-threshold))
			continue
		}
		it.Why, it.Detail = WhySample, "a sample of the rest"
		if r.latest.Status != "scored" {
			it.Detail = "a sample of the rest; the scorer's latest result is " + r.latest.Status
		}
		sample = append(sample, it)
	}
	idx := make([]int, len(unsure))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(dist[a], dist[b]) })
	sorted := make([]ReviewItem, len(unsure))
	for i, j := range idx {
		sorted[i] = unsure[j]
	}
	slices.SortStableFunc(sample, func(a, b ReviewItem) int { return cmp.Compare(idHash(a.RunID), idHash(b.RunID)) })
	out := append(append(disagree, sorted...), sample...)
	return out[:min(len(out), limit)], nil
}

// versionsDisagree says how the versions' verdicts differ, or "" when they agree.
func versionsDisagree(v map[string]*bool, order []string) string {
	var pass, fail []string
	for _, ver := range order {
		if p := v[ver]; p != nil {
			if *p {
				pass = append(pass, ver)
			} else {
				fail = append(fail, ver)
			}
		}
	}
	if len(pass) == 0 || len(fail) == 0 {
		return ""
	}
	return fmt.Sprintf("version %s passed it, version %s failed it", strings.Join(pass, ", "), strings.Join(fail, ", "))
}

// idHash orders a sample by run id: stable across requests and reviewers, unrelated to
// time or score.
func idHash(id string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return h.Sum64()
}

// Choice is one of a rubric's named answers and the score it gives.
type Choice struct {
	Name  string  `json:"name"`
	Score float64 `json:"score"`
}

// EvaluationChoices returns the choices the scorer was configured with in the tenant's
// evaluation (a rubric's "choices", name to score), highest score first; none when its
// config has no choices. A label given as one of them carries the score it gives, so it
// can be compared with the scorer's scores.
func (s *Service) EvaluationChoices(ctx context.Context, t store.Tenant, evaluationID, scorer string) ([]Choice, error) {
	ev, err := s.tenantEvaluation(ctx, t, evaluationID)
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Choices map[string]float64 `json:"choices"`
	}
	if raw := ev.Spec.Config[scorer]; raw == nil || json.Unmarshal(raw, &cfg) != nil {
		return nil, nil
	}
	out := make([]Choice, 0, len(cfg.Choices))
	for n, sc := range cfg.Choices {
		out = append(out, Choice{Name: n, Score: sc})
	}
	slices.SortFunc(out, func(a, b Choice) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}
