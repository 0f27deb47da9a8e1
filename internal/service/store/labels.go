package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Label is a person's judgement of a run for a scorer, or for a criterion several scorers
// share (Scorer holds either name). Exactly one of Passed, Score and Choice is set, except
// that a Choice may carry the Score its rubric gives it.
type Label struct {
	ID       int64
	TenantID int64
	RunPK    int64
	// RunID and Agent are the run's; filled in by reads.
	RunID    string
	Agent    string
	Scorer   string
	Labeller string
	Passed   *bool
	Score    *float64
	Choice   *string
	Note     string
	// CreatedAt is when the labeller first labelled the run for the scorer; UpdatedAt
	// when they last changed it.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// NewLabel is a label to store.
type NewLabel struct {
	RunPK    int64
	Scorer   string
	Labeller string
	Passed   *bool
	Score    *float64
	Choice   *string
	Note     string
}

// PutLabel stores the label of (run, scorer, labeller), replacing the one the labeller
// gave before, and reports whether it is new. The caller checks that the run is the
// tenant's (Run).
func (q queries) PutLabel(ctx context.Context, tenantID int64, l NewLabel) (Label, bool, error) {
	var had int64
	if err := queryRow(ctx, q.q, `SELECT COUNT(*) FROM labels WHERE tenant_id = $1 AND run_pk = $2 AND scorer = $3 AND labeller = $4`,
		[]any{tenantID, l.RunPK, l.Scorer, l.Labeller}, &had); err != nil {
		return Label{}, false, fmt.Errorf("store: put label: %w", err)
	}
	now := micros(time.Now())
	out, err := collect(ctx, q.q, `INSERT INTO labels (tenant_id, run_pk, scorer, labeller, passed, score, choice, note, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
		ON CONFLICT (tenant_id, run_pk, scorer, labeller) DO UPDATE SET
			passed = excluded.passed, score = excluded.score, choice = excluded.choice, note = excluded.note, updated_at = excluded.updated_at
		RETURNING id, tenant_id, run_pk, '', '', scorer, labeller, passed, score, choice, note, created_at, updated_at`,
		[]any{tenantID, l.RunPK, l.Scorer, l.Labeller, l.Passed, l.Score, l.Choice, l.Note, now}, scanLabel)
	if err != nil {
		return Label{}, false, fmt.Errorf("store: put label: %w", err)
	}
	if len(out) != 1 {
		return Label{}, false, fmt.Errorf("store: put label: %d rows returned, want 1", len(out))
	}
	return out[0], had == 0, nil
}

// LabelQuery selects a tenant's labels, in the order they were first given.
type LabelQuery struct {
	// RunPK keeps one run's labels. Optional.
	RunPK int64
	// Scorer keeps the labels of one scorer or criterion. Optional.
	Scorer string
	// Labeller keeps one person's labels. Optional.
	Labeller string
	// AfterID continues a listing after the label with this ID. Optional.
	AfterID int64
	// Limit caps the labels returned. Optional: 0 returns every label selected.
	Limit int
}

const labelCols = `l.id, l.tenant_id, l.run_pk, r.run_id, r.agent, l.scorer, l.labeller, l.passed, l.score, l.choice, l.note, l.created_at, l.updated_at`

// Labels returns the tenant's labels lq selects, by ID.
func (q queries) Labels(ctx context.Context, tenantID int64, lq LabelQuery) ([]Label, error) {
	where, args := []string{"l.tenant_id = $1", "l.id > $2"}, []any{tenantID, lq.AfterID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if lq.RunPK != 0 {
		add("l.run_pk = $%d", lq.RunPK)
	}
	if lq.Scorer != "" {
		add("l.scorer = $%d", lq.Scorer)
	}
	if lq.Labeller != "" {
		add("l.labeller = $%d", lq.Labeller)
	}
	sql := `SELECT ` + labelCols + ` FROM labels l JOIN runs r ON r.id = l.run_pk WHERE ` + strings.Join(where, " AND ") + ` ORDER BY l.id`
	if lq.Limit > 0 {
		args = append(args, lq.Limit)
		sql += fmt.Sprintf(` LIMIT $%d`, len(args))
	}
	return collect(ctx, q.q, sql, args, scanLabel)
}

// DeleteLabel removes the label the labeller gave the run for the scorer.
func (q queries) DeleteLabel(ctx context.Context, tenantID, runPK int64, scorer, labeller string) error {
	n, err := q.q.exec(ctx, `DELETE FROM labels WHERE tenant_id = $1 AND run_pk = $2 AND scorer = $3 AND labeller = $4`,
		tenantID, runPK, scorer, labeller)
	if err != nil {
		return fmt.Errorf("store: delete label: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("label of %q for %q: %w", labeller, scorer, ErrNotFound)
	}
	return nil
}

// RunsWithLabels returns which of the tenant's runs pks have at least one label: runs a
// retention sweep keeps, since a label is a person's work that cannot be made again. A
// query that selects runs itself can keep them with
//
//	NOT EXISTS (SELECT 1 FROM labels l WHERE l.run_pk = runs.id)
//
// Deleting a run deletes its labels (the foreign key cascades).
func (q queries) RunsWithLabels(ctx context.Context, tenantID int64, pks []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	for chunk := range slices.Chunk(pks, runBatch) {
		in, args := inList(chunk, tenantID)
		if err := addKeys(ctx, out, q.q, `SELECT DISTINCT run_pk FROM labels WHERE tenant_id = $1 AND run_pk IN `+in, args, scanValue[int64]); err != nil {
			return nil, fmt.Errorf("store: runs with labels: %w", err)
		}
	}
	return out, nil
}

// LabelCount is how many labels a scorer or criterion has.
type LabelCount struct {
	Scorer    string
	Labels    int64
	Runs      int64
	Labellers int64
}

// LabelCounts counts the tenant's labels per scorer or criterion, by name.
func (q queries) LabelCounts(ctx context.Context, tenantID int64) ([]LabelCount, error) {
	return collect(ctx, q.q, `SELECT scorer, COUNT(*), COUNT(DISTINCT run_pk), COUNT(DISTINCT labeller)
		FROM labels WHERE tenant_id = $1 GROUP BY scorer ORDER BY scorer`, []any{tenantID}, func(s scanner) (c LabelCount, err error) {
		err = s.Scan(&c.Scorer, &c.Labels, &c.Runs, &c.Labellers)
		return c, err
	})
}

// LabelledResults returns, for every run of the tenant labelled for criterion, the latest
// result of scorer, of version when version is not empty; runs the scorer has no such
// result for are left out.
func (q queries) LabelledResults(ctx context.Context, tenantID int64, criterion, scorer, version string) ([]Result, error) {
	return collect(ctx, q.q, labelledResultsSQL, []any{tenantID, criterion, scorer, version}, scanResult)
}

const labelledResultsSQL = `SELECT ` + resultCols + resultFrom + `
	WHERE res.tenant_id = $1 AND res.scorer = $3
	AND res.run_pk IN (SELECT run_pk FROM labels WHERE tenant_id = $1 AND scorer = $2)
	AND res.id = (SELECT MAX(x.id) FROM results x WHERE x.run_pk = res.run_pk AND x.scorer = res.scorer
		AND ($4 = '' OR x.scorer_version = $4))
	ORDER BY res.run_pk`

// ScorerVersions lists the versions of scorer with results on the tenant's runs labelled
// for criterion, the most recently used first.
func (q queries) ScorerVersions(ctx context.Context, tenantID int64, criterion, scorer string) ([]string, error) {
	return collect(ctx, q.q, `SELECT scorer_version, MAX(id) AS last FROM results
		WHERE tenant_id = $1 AND scorer = $3 AND run_pk IN (SELECT run_pk FROM labels WHERE tenant_id = $1 AND scorer = $2)
		GROUP BY scorer_version ORDER BY last DESC`, []any{tenantID, criterion, scorer}, func(s scanner) (v string, err error) {
		var last int64
		err = s.Scan(&v, &last)
		return v, err
	})
}

// scanLabel reads a row of labelCols.
func scanLabel(s scanner) (Label, error) {
	var (
		l       Label
		at, upd int64
	)
	err := s.Scan(&l.ID, &l.TenantID, &l.RunPK, &l.RunID, &l.Agent, &l.Scorer, &l.Labeller, &l.Passed, &l.Score, &l.Choice,
		&l.Note, &at, &upd)
	l.CreatedAt, l.UpdatedAt = fromMicros(at), fromMicros(upd)
	return l, err
}

// ResultHead is a result without its body: what choosing runs to review needs.
type ResultHead struct {
	ID      int64
	RunPK   int64
	RunID   string
	Agent   string
	Version string
	Status  string
	Score   *float64
	Passed  *bool
}

const recentResultsSQL = `SELECT res.id, res.run_pk, r.run_id, r.agent, res.scorer_version, res.status, res.score, res.passed
	FROM results res JOIN runs r ON r.id = res.run_pk
	WHERE res.tenant_id = $1 AND res.scorer = $2 ORDER BY res.id DESC LIMIT $3`

// RecentResults returns the tenant's latest limit results of scorer, newest first,
// without their bodies.
func (q queries) RecentResults(ctx context.Context, tenantID int64, scorer string, limit int) ([]ResultHead, error) {
	return collect(ctx, q.q, recentResultsSQL, []any{tenantID, scorer, limit}, func(s scanner) (h ResultHead, err error) {
		err = s.Scan(&h.ID, &h.RunPK, &h.RunID, &h.Agent, &h.Version, &h.Status, &h.Score, &h.Passed)
		return h, err
	})
}
