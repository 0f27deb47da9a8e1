package service

import (
	"cmp"
	"context"
	"slices"
	"strconv"

	"github.com/scorekit/scorekit/internal/service/agreement"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/sdk"
)

// versionResults is the latest result of each labelled run by version v of scorer that
// keep accepts (nil: any). A version scored beside the promoted one keeps its results
// under name@N (N the published version, 0 the service's own scorer): see Service.spec.
// Both places are read, the newer result of a run kept.
func (s *Service) versionResults(ctx context.Context, t store.Tenant, criterion, scorer, v string, keep func(store.Result) bool) (map[int64]store.Result, error) {
	key := scorer + "@0"
	if _, err := strconv.Atoi(v); err == nil {
		key = scorer + "@" + v
	}
	m := map[int64]store.Result{}
	for _, name := range []string{scorer, key} {
		rs, err := s.st.LabelledResults(ctx, t.ID, criterion, name, v)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			if old, ok := m[r.RunPK]; (keep == nil || keep(r)) && (!ok || r.ID > old.ID) {
				m[r.RunPK] = r
			}
		}
	}
	return m, nil
}

// VersionTriples returns, for the tenant's runs labelled for criterion that both the
// candidate and the current version of scorer scored, the people's verdict beside each
// version's: the input of agreement.GatePassFail (pass/fail labels) and
// agreement.GateScores (score labels). The promotion gate calls it with the version
// being promoted and the one it replaces; runs either version did not score are left
// out, so both are measured on the same runs.
func (s *Service) VersionTriples(ctx context.Context, t store.Tenant, criterion, scorer, candidate, current string) ([]agreement.Triple[bool], []agreement.Triple[float64], error) {
	if candidate == "" || current == "" {
		return nil, nil, invalid("name both versions: the candidate and the current one")
	}
	if criterion == "" {
		criterion = scorer
	}
	set, err := s.labelSet(ctx, t, criterion, "")
	if err != nil {
		return nil, nil, err
	}
	scored := func(r store.Result) bool { return r.Status == string(sdk.StatusScored) }
	byVersion := func(v string) (map[int64]store.Result, error) {
		return s.versionResults(ctx, t, criterion, scorer, v, scored)
	}
	cand, err := byVersion(candidate)
	if err != nil {
		return nil, nil, err
	}
	cur, err := byVersion(current)
	if err != nil {
		return nil, nil, err
	}
	passed, scores, _, _ := set.reference()
	var pf []agreement.Triple[bool]
	var sc []agreement.Triple[float64]
	for pk, l := range set.runs {
		a, okA := cand[pk]
		b, okB := cur[pk]
		if !okA || !okB {
			continue
		}
		if want, ok := passed[pk]; ok && a.Passed != nil && b.Passed != nil {
			pf = append(pf, agreement.Triple[bool]{RunID: l.RunID, Want: want, Candidate: *a.Passed, Current: *b.Passed})
		}
		if want, ok := scores[pk]; ok && a.Score != nil && b.Score != nil {
			sc = append(sc, agreement.Triple[float64]{RunID: l.RunID, Want: want, Candidate: *a.Score, Current: *b.Score})
		}
	}
	slices.SortFunc(pf, func(x, y agreement.Triple[bool]) int { return cmp.Compare(x.RunID, y.RunID) })
	slices.SortFunc(sc, func(x, y agreement.Triple[float64]) int { return cmp.Compare(x.RunID, y.RunID) })
	return pf, sc, nil
}
