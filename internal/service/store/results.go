package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Result is one stored result of one scorer on one run in one evaluation.
type Result struct {
	ID            int64
	TenantID      int64
	EvaluationPK  int64
	EvaluationID  string // public id; filled in by reads
	RunPK         int64
	RunID         string // filled in by reads
	Scorer        string
	ScorerVersion string
	// ScorerDigest is a published scorer's module digest or config hash; empty for the
	// host's own scorers.
	ScorerDigest string
	JudgeModel   string
	Status       string
	Score        *float64
	Passed       *bool
	// Body is the whole sdk.Result as JSON.
	Body      json.RawMessage
	CreatedAt time.Time
}

// InsertResults stores results; one whose (evaluation, run, scorer) is stored already is
// left out, so a job retried after a crash writes each result once. It returns how many
// were stored.
func (q queries) InsertResults(ctx context.Context, rs []Result) (int64, error) {
	now := micros(time.Now())
	n, err := resultInsert.exec(ctx, q.q, len(rs), func(i int, args []any) []any {
		r := &rs[i]
		at := now
		if !r.CreatedAt.IsZero() {
			at = micros(r.CreatedAt)
		}
		return append(args, r.TenantID, r.EvaluationPK, r.RunPK, r.Scorer, r.ScorerVersion, r.ScorerDigest, r.JudgeModel, r.Status, r.Score, r.Passed, jsonText(r.Body), at)
	})
	if err != nil {
		return n, fmt.Errorf("store: insert results: %w", err)
	}
	if err := q.noteResultVersions(ctx, rs); err != nil {
		return n, fmt.Errorf("store: insert results: %w", err)
	}
	return n, nil
}

// noteResultVersions records, for each (tenant, scorer, version) of rs, the first
// evaluation with results of it (result_versions). A row that exists is updated only
// when rs come from an earlier evaluation than it says, so the usual call writes
// nothing and, on PostgreSQL, locks nothing.
func (q queries) noteResultVersions(ctx context.Context, rs []Result) error {
	type key struct {
		tenant          int64
		scorer, version string
	}
	first := map[key]int64{}
	for _, r := range rs {
		k := key{r.TenantID, r.Scorer, r.ScorerVersion}
		if e, ok := first[k]; !ok || r.EvaluationPK < e {
			first[k] = r.EvaluationPK
		}
	}
	for k, e := range first {
		n, err := q.q.exec(ctx, `INSERT INTO result_versions (tenant_id, scorer, scorer_version, first_evaluation_id)
			VALUES ($1, $2, $3, $4) ON CONFLICT (tenant_id, scorer, scorer_version) DO NOTHING`, k.tenant, k.scorer, k.version, e)
		if err != nil {
			return err
		}
		if n == 0 {
			if _, err := q.q.exec(ctx, `UPDATE result_versions SET first_evaluation_id = $4
				WHERE tenant_id = $1 AND scorer = $2 AND scorer_version = $3 AND first_evaluation_id > $4`, k.tenant, k.scorer, k.version, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// resultInsert is InsertResults' statement.
var resultInsert = &batchInsert{
	head: `INSERT INTO results (tenant_id, evaluation_id, run_pk, scorer, scorer_version, scorer_digest, judge_model, status, score, passed, result, created_at) VALUES `,
	tail: ` ON CONFLICT (evaluation_id, run_pk, scorer) DO NOTHING`,
	cols: 12,
}

// ResultKey names a result within an evaluation.
type ResultKey struct {
	RunPK  int64
	Scorer string
}

// StoredResults returns which of the evaluation's results for runPKs are stored already.
func (q queries) StoredResults(ctx context.Context, evalPK int64, runPKs []int64) (map[ResultKey]bool, error) {
	out := map[ResultKey]bool{}
	if len(runPKs) == 0 {
		return out, nil
	}
	in, args := inList(runPKs, evalPK)
	if err := addKeys(ctx, out, q.q, `SELECT run_pk, scorer FROM results WHERE evaluation_id = $1 AND run_pk IN `+in, args,
		func(s scanner) (k ResultKey, err error) {
			err = s.Scan(&k.RunPK, &k.Scorer)
			return k, err
		}); err != nil {
		return nil, err
	}
	return out, nil
}

// inList renders "($n,$n+1,...)" for vals after the leading args.
func inList[T any](vals []T, leading ...any) (string, []any) {
	var b strings.Builder
	args := append([]any(nil), leading...)
	b.WriteByte('(')
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		args = append(args, v)
		fmt.Fprintf(&b, "$%d", len(args))
	}
	b.WriteByte(')')
	return b.String(), args
}

const resultCols = `res.id, res.tenant_id, res.evaluation_id, e.public_id, res.run_pk, r.run_id, res.scorer, res.scorer_version,
	res.scorer_digest, res.judge_model, res.status, res.score, res.passed, res.result, res.created_at`

const resultFrom = ` FROM results res JOIN runs r ON r.id = res.run_pk JOIN evaluations e ON e.id = res.evaluation_id `

// scanResult reads a row of resultCols.
func scanResult(s scanner) (Result, error) {
	var (
		r    Result
		body string
		at   int64
	)
	err := s.Scan(&r.ID, &r.TenantID, &r.EvaluationPK, &r.EvaluationID, &r.RunPK, &r.RunID, &r.Scorer, &r.ScorerVersion,
		&r.ScorerDigest, &r.JudgeModel, &r.Status, &r.Score, &r.Passed, &body, &at)
	r.Body, r.CreatedAt = json.RawMessage(body), fromMicros(at)
	return r, err
}

// EvaluationResults returns the evaluation's results in the order of its runs, then by
// scorer.
func (q queries) EvaluationResults(ctx context.Context, tenantID, evalPK int64) ([]Result, error) {
	return collect(ctx, q.q, `SELECT `+resultCols+resultFrom+`
		JOIN evaluation_runs er ON er.evaluation_id = res.evaluation_id AND er.run_pk = res.run_pk
		WHERE res.tenant_id = $1 AND res.evaluation_id = $2 ORDER BY er.position, res.scorer`, []any{tenantID, evalPK}, scanResult)
}

// RunResults returns every result the run ever had, oldest first.
func (q queries) RunResults(ctx context.Context, tenantID, runPK int64) ([]Result, error) {
	return collect(ctx, q.q, `SELECT `+resultCols+resultFrom+`
		WHERE res.tenant_id = $1 AND res.run_pk = $2 ORDER BY res.id`, []any{tenantID, runPK}, scanResult)
}

// LatestResults returns the latest result per (run, scorer) of the given runs.
func (q queries) LatestResults(ctx context.Context, tenantID int64, runPKs []int64) ([]Result, error) {
	if len(runPKs) == 0 {
		return nil, nil
	}
	in, args := inList(runPKs, tenantID)
	return collect(ctx, q.q, `SELECT `+resultCols+resultFrom+`
		WHERE res.tenant_id = $1 AND res.run_pk IN `+in+`
		AND res.id = (SELECT MAX(x.id) FROM results x WHERE x.run_pk = res.run_pk AND x.scorer = res.scorer)
		ORDER BY res.run_pk, res.scorer`, args, scanResult)
}

// PreviousResults returns, for the evaluation's runs, the latest result of scorer from an
// earlier evaluation made with another version than version: what a user compares with
// after a scorer fix. When no earlier evaluation has results of another version (nearly
// always), result_versions says so in one read; otherwise each run's results are walked
// from its newest back to the first of another version.
func (q queries) PreviousResults(ctx context.Context, tenantID, evalPK int64, scorer, version string) ([]Result, error) {
	var other int64
	if err := queryRow(ctx, q.q, `SELECT COUNT(*) FROM (SELECT 1 FROM result_versions
		WHERE tenant_id = $1 AND scorer = $2 AND scorer_version <> $3 AND first_evaluation_id < $4 LIMIT 1) AS one`,
		[]any{tenantID, scorer, version, evalPK}, &other); err != nil {
		return nil, err
	}
	if other == 0 {
		return nil, nil
	}
	return collect(ctx, q.q, `SELECT `+resultCols+` FROM evaluation_runs er
		JOIN results res ON res.id = (SELECT x.id FROM results x WHERE x.run_pk = er.run_pk AND x.scorer = $3
			AND x.scorer_version <> $4 AND x.evaluation_id < $2 ORDER BY x.id DESC LIMIT 1)
		JOIN runs r ON r.id = res.run_pk JOIN evaluations e ON e.id = res.evaluation_id
		WHERE er.evaluation_id = $2 AND res.tenant_id = $1
		ORDER BY res.run_pk`, []any{tenantID, evalPK, scorer, version}, scanResult)
}

// Tally counts one scorer's results in an evaluation.
type Tally struct {
	Scorer                  string
	Scored, Skipped, Failed int64
	// Sum of the scored results' scores; Judged counts scored results with Passed set,
	// PassedN those that passed.
	Sum             float64
	Judged, PassedN int64
}

// Tallies counts the evaluation's results per scorer, by scorer name.
func (q queries) Tallies(ctx context.Context, evalPK int64) ([]Tally, error) {
	var out []Tally
	err := eachRow(ctx, q.q, `SELECT scorer, status, COUNT(*), COALESCE(SUM(score), 0),
		COUNT(passed), COALESCE(SUM(CASE WHEN passed THEN 1 ELSE 0 END), 0)
		FROM results WHERE evaluation_id = $1 GROUP BY scorer, status ORDER BY scorer`, []any{evalPK}, func(s scanner) error {
		var (
			scorer, status    string
			n, judged, passed int64
			sum               float64
		)
		if err := s.Scan(&scorer, &status, &n, &sum, &judged, &passed); err != nil {
			return err
		}
		if len(out) == 0 || out[len(out)-1].Scorer != scorer {
			out = append(out, Tally{Scorer: scorer})
		}
		t := &out[len(out)-1]
		switch status {
		case "scored":
			t.Scored, t.Sum, t.Judged, t.PassedN = n, sum, judged, passed
		case "skipped":
			t.Skipped = n
		default:
			t.Failed += n
		}
		return nil
	})
	return out, err
}

// CountResults counts the evaluation's stored results.
func (q queries) CountResults(ctx context.Context, evalPK int64) (int64, error) {
	var n int64
	err := queryRow(ctx, q.q, `SELECT COUNT(*) FROM results WHERE evaluation_id = $1`, []any{evalPK}, &n)
	return n, err
}
