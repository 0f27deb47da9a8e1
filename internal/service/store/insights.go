package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/scorekit/scorekit/internal/service/insights"
)

// Insight is a stored insight: the engine's insight with the store's ids. Its JSON is how
// the API and the webhook show an insight.
type Insight struct {
	PK int64 `json:"-"`
	// ID is the insight's public id, "in_...".
	ID       string `json:"id"`
	TenantID int64  `json:"-"`
	insights.Insight
}

func newInsightID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "in_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

const insightCols = `id, public_id, tenant_id, agent, scorer, kind, severity, title, evidence, opened_at, updated_at, resolved_at`

// scanInsight reads a row of insightCols.
func scanInsight(s scanner) (Insight, error) {
	var (
		in                  Insight
		kind, sev, evidence string
		opened, updated     int64
		resolved            *int64
	)
	if err := s.Scan(&in.PK, &in.ID, &in.TenantID, &in.Agent, &in.Scorer, &kind, &sev, &in.Title, &evidence, &opened, &updated, &resolved); err != nil {
		return in, err
	}
	in.Kind, in.Severity = insights.Kind(kind), insights.Severity(sev)
	in.OpenedAt, in.UpdatedAt, in.ResolvedAt = fromMicros(opened), fromMicros(updated), fromMicrosOrNil(resolved)
	if err := json.Unmarshal([]byte(evidence), &in.Evidence); err != nil {
		return in, fmt.Errorf("store: insight %s: evidence: %w", in.ID, err)
	}
	return in, nil
}

// OpenInsights returns the insights open for one (agent, scorer) of the tenant.
func (q queries) OpenInsights(ctx context.Context, tenantID int64, agent, scorer string) ([]Insight, error) {
	return collect(ctx, q.q, `SELECT `+insightCols+` FROM insights
		WHERE tenant_id = $1 AND agent = $2 AND scorer = $3 AND resolved_at IS NULL ORDER BY kind`, []any{tenantID, agent, scorer}, scanInsight)
}

// InsightQuery selects a tenant's insights, newest first (by when they were opened).
type InsightQuery struct {
	// Agent keeps one agent's insights. Optional.
	Agent string
	// Severity keeps insights of one severity. Optional.
	Severity string
	// Resolved lists resolved insights instead of open ones; All lists both.
	Resolved, All bool
	// Limit caps the insights returned. Required (> 0).
	Limit int
	// Before continues a listing: insights whose PK is below it. Optional.
	Before int64
}

// Insights returns the tenant's insights q selects, newest first.
func (q queries) Insights(ctx context.Context, tenantID int64, iq InsightQuery) ([]Insight, error) {
	query, args := insightsSQL(tenantID, iq)
	return collect(ctx, q.q, query, args, scanInsight)
}

// insightsSQL is the query of Insights.
func insightsSQL(tenantID int64, iq InsightQuery) (string, []any) {
	where := []string{"tenant_id = $1"}
	args := []any{tenantID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if iq.Agent != "" {
		add("agent = $%d", iq.Agent)
	}
	if iq.Severity != "" {
		add("severity = $%d", iq.Severity)
	}
	if iq.Before > 0 {
		add("id < $%d", iq.Before)
	}
	switch {
	case iq.All:
	case iq.Resolved:
		where = append(where, "resolved_at IS NOT NULL")
	default:
		where = append(where, "resolved_at IS NULL")
	}
	args = append(args, iq.Limit)
	return `SELECT ` + insightCols + ` FROM insights WHERE ` + strings.Join(where, " AND ") +
		fmt.Sprintf(` ORDER BY id DESC LIMIT $%d`, len(args)), args
}

// InsightByID returns the tenant's insight with public id.
func (q queries) InsightByID(ctx context.Context, tenantID int64, id string) (Insight, error) {
	in, err := first(ctx, q.q, `SELECT `+insightCols+` FROM insights WHERE tenant_id = $1 AND public_id = $2`, []any{tenantID, id}, scanInsight)
	if err != nil {
		return in, notFound(err, "insight %q", id)
	}
	return in, nil
}

// ApplyInsights writes an update of one (agent, scorer): it inserts the opened insights,
// rewrites the updated ones and resolves the resolved ones, among open (what the update
// was computed from). It returns the stored insights that became critical, in the order
// of ch.NewCritical.
func (q queries) ApplyInsights(ctx context.Context, tenantID int64, open []Insight, ch insights.Changes) ([]Insight, error) {
	byKey := map[insights.Key]Insight{}
	for _, in := range open {
		byKey[in.Key()] = in
	}
	stored := map[insights.Key]Insight{}
	for _, in := range ch.Opened {
		ev, err := json.Marshal(in.Evidence)
		if err != nil {
			return nil, err
		}
		s := Insight{ID: newInsightID(), TenantID: tenantID, Insight: in}
		err = queryRow(ctx, q.q, `INSERT INTO insights (public_id, tenant_id, agent, scorer, kind, severity, title, evidence, opened_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
			[]any{s.ID, tenantID, in.Agent, in.Scorer, string(in.Kind), string(in.Severity), in.Title, jsonText(ev), micros(in.OpenedAt), micros(in.UpdatedAt)}, &s.PK)
		if err != nil {
			return nil, fmt.Errorf("store: open insight %s/%s/%s: %w", in.Agent, in.Scorer, in.Kind, err)
		}
		stored[in.Key()] = s
	}
	for _, u := range ch.Updated {
		in := u.Insight
		old, ok := byKey[in.Key()]
		if !ok {
			return nil, fmt.Errorf("store: update insight %+v: it is not among the open ones", in.Key())
		}
		ev, err := json.Marshal(in.Evidence)
		if err != nil {
			return nil, err
		}
		if _, err := q.q.exec(ctx, `UPDATE insights SET severity = $1, title = $2, evidence = $3, updated_at = $4 WHERE id = $5`,
			string(in.Severity), in.Title, jsonText(ev), micros(in.UpdatedAt), old.PK); err != nil {
			return nil, fmt.Errorf("store: update insight %s: %w", old.ID, err)
		}
		old.Insight = in
		stored[in.Key()] = old
	}
	for _, in := range ch.Resolved {
		old, ok := byKey[in.Key()]
		if !ok {
			return nil, fmt.Errorf("store: resolve insight %+v: it is not among the open ones", in.Key())
		}
		if _, err := q.q.exec(ctx, `UPDATE insights SET updated_at = $1, resolved_at = $2 WHERE id = $3`,
			micros(in.UpdatedAt), micros(*in.ResolvedAt), old.PK); err != nil {
			return nil, fmt.Errorf("store: resolve insight %s: %w", old.ID, err)
		}
	}
	var out []Insight
	for _, in := range ch.NewCritical() {
		out = append(out, stored[in.Key()])
	}
	return out, nil
}

// OpenCount counts open insights of one severity and kind of one tenant.
type OpenCount struct {
	Tenant   string
	Severity string
	Kind     string
	N        int64
}

// CountOpenInsights counts the open insights of every tenant by severity and kind.
func (q queries) CountOpenInsights(ctx context.Context) ([]OpenCount, error) {
	return collect(ctx, q.q, `SELECT t.name, i.severity, i.kind, COUNT(*) FROM insights i JOIN tenants t ON t.id = i.tenant_id
		WHERE i.resolved_at IS NULL GROUP BY t.name, i.severity, i.kind ORDER BY t.name, i.severity, i.kind`, nil,
		func(s scanner) (c OpenCount, err error) {
			err = s.Scan(&c.Tenant, &c.Severity, &c.Kind, &c.N)
			return c, err
		})
}

// Series is an (agent, scorer) of a tenant that has results.
type Series struct {
	Agent, Scorer string
	// Changes counts the times its results or settings changed; Assessed is the count
	// its latest insight update saw. The series' insights are up to date when they are
	// equal.
	Changes, Assessed int64
	// ChangedAt is when its results or settings last changed; AssessedAt when its
	// insights were last updated (zero before the first update).
	ChangedAt, AssessedAt time.Time
}

// UpToDate reports whether the series' insights have seen every change.
func (s Series) UpToDate() bool { return s.Assessed >= s.Changes }

// TouchSeries counts a change of (agent, scorer) for each scorer: results were stored,
// or settings changed. Call it in the transaction that stores them, before enqueueing the
// update: the row lock it takes orders the update after the transaction (LockSeries).
func (q queries) TouchSeries(ctx context.Context, tenantID int64, agent string, scorers []string) error {
	names := append([]string(nil), scorers...)
	sort.Strings(names) // one lock order, so two transactions cannot deadlock
	now := micros(time.Now())
	for _, s := range names {
		if _, err := q.q.exec(ctx, `INSERT INTO insight_series (tenant_id, agent, scorer, changes, assessed, changed_at) VALUES ($1, $2, $3, 1, 0, $4)
			ON CONFLICT (tenant_id, agent, scorer) DO UPDATE SET changes = insight_series.changes + 1, changed_at = excluded.changed_at`,
			tenantID, agent, s, now); err != nil {
			return fmt.Errorf("store: touch series %s/%s: %w", agent, s, err)
		}
	}
	return nil
}

// LockSeries records that an insight update of (agent, scorer) sees every change counted
// so far and, on PostgreSQL, holds the series' row until the transaction ends: a
// transaction that stores results of the series (and touches it) waits for the update, or
// the update waits for it and then sees its results. SQLite runs one write transaction
// at a time anyway. It reports false when the series does not exist: its agent was
// deleted after the update was enqueued, and the update must not bring it back.
func (q queries) LockSeries(ctx context.Context, tenantID int64, agent, scorer string, now time.Time) (bool, error) {
	n, err := q.q.exec(ctx, `UPDATE insight_series SET assessed = changes, assessed_at = $4 WHERE tenant_id = $1 AND agent = $2 AND scorer = $3`,
		tenantID, agent, scorer, micros(now))
	if err != nil {
		return false, fmt.Errorf("store: lock series %s/%s: %w", agent, scorer, err)
	}
	return n > 0, nil
}

// SeriesOf lists the tenant's series, of one agent when agent is not empty, by agent
// and scorer.
func (q queries) SeriesOf(ctx context.Context, tenantID int64, agent string) ([]Series, error) {
	query := `SELECT agent, scorer, changes, assessed, changed_at, assessed_at FROM insight_series WHERE tenant_id = $1`
	args := []any{tenantID}
	if agent != "" {
		query += ` AND agent = $2`
		args = append(args, agent)
	}
	return collect(ctx, q.q, query+` ORDER BY agent, scorer`, args, func(sc scanner) (Series, error) {
		var (
			s        Series
			changed  int64
			assessed *int64
		)
		err := sc.Scan(&s.Agent, &s.Scorer, &s.Changes, &s.Assessed, &changed, &assessed)
		s.ChangedAt = fromMicros(changed)
		if assessed != nil {
			s.AssessedAt = fromMicros(*assessed)
		}
		return s, err
	})
}

// SeriesRow is the latest result of one scorer on one run.
type SeriesRow struct {
	RunPK         int64
	RunID         string
	RunTime       time.Time
	ScorerVersion string
	Status        string
	Score         *float64
	Passed        *bool
	CreatedAt     time.Time
	// Body is the whole sdk.Result as JSON, when asked for.
	Body json.RawMessage
}

// seriesResultsSQL selects the latest result of a scorer on an agent's newest runs. Its
// last column, an empty string, stands for the result's JSON, read only when asked for.
const seriesResultsSQL = `SELECT r.id, r.run_id, r.run_time, res.scorer_version, res.status, res.score, res.passed, res.created_at, ''
	FROM runs r JOIN results res ON res.id = (SELECT MAX(x.id) FROM results x WHERE x.run_pk = r.id AND x.scorer = $3)
	WHERE r.tenant_id = $1 AND r.agent = $2
	ORDER BY r.run_time DESC, r.id DESC LIMIT $4`

// SeriesResults returns the latest result of scorer on each of the agent's newest runs
// that have one, at most limit, newest first (by the run's time, then ingest order). The
// query walks the agent's runs by the runs_agent_time index and looks each run's latest
// result up by results_run_scorer, so it reads about limit runs however many the agent
// has. withBody adds each result's JSON (reasons, flags, errors).
func (q queries) SeriesResults(ctx context.Context, tenantID int64, agent, scorer string, limit int, withBody bool) ([]SeriesRow, error) {
	query := seriesResultsSQL
	if withBody {
		query = strings.Replace(query, "''", "res.result", 1)
	}
	return appendRows(ctx, make([]SeriesRow, 0, min(limit, 1024)), q.q, query, []any{tenantID, agent, scorer, limit}, func(s scanner) (SeriesRow, error) {
		var (
			r       SeriesRow
			t, at   int64
			content string
		)
		err := s.Scan(&r.RunPK, &r.RunID, &t, &r.ScorerVersion, &r.Status, &r.Score, &r.Passed, &at, &content)
		r.RunTime, r.CreatedAt = fromMicros(t), fromMicros(at)
		if withBody {
			r.Body = json.RawMessage(content)
		}
		return r, err
	})
}

// InsightSettings are a tenant's insight settings.
type InsightSettings struct {
	// Experimental names the scorers the tenant marks experimental: they raise no
	// critical insight until their current version has a full window of results.
	Experimental []string
	// WebhookURL is told about new critical insights, with bodies signed by
	// WebhookSecret. Empty: no webhook.
	WebhookURL    string
	WebhookSecret string
	// Kappas are the scorer versions' last measured Cohen's kappa with the tenant's labels
	// (the agreement report and the promotion gate record them); a version under
	// insights.MinKappa raises no critical insight.
	Kappas    []insights.Agreement
	UpdatedAt time.Time
}

// InsightSettings returns the tenant's insight settings (the zero settings when none were
// set).
func (q queries) InsightSettings(ctx context.Context, tenantID int64) (InsightSettings, error) {
	var (
		s      InsightSettings
		exp    string
		kappas string
		at     int64
	)
	err := queryRow(ctx, q.q, `SELECT experimental, webhook_url, webhook_secret, kappas, updated_at FROM insight_settings WHERE tenant_id = $1`,
		[]any{tenantID}, &exp, &s.WebhookURL, &s.WebhookSecret, &kappas, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return InsightSettings{}, nil
	}
	if err != nil {
		return s, err
	}
	s.UpdatedAt = fromMicros(at)
	if err := json.Unmarshal([]byte(exp), &s.Experimental); err != nil {
		return s, fmt.Errorf("store: insight settings of tenant %d: %w", tenantID, err)
	}
	if err := json.Unmarshal([]byte(kappas), &s.Kappas); err != nil {
		return s, fmt.Errorf("store: insight settings of tenant %d: kappas: %w", tenantID, err)
	}
	return s, nil
}

// SetInsightSettings replaces the tenant's insight settings.
func (q queries) SetInsightSettings(ctx context.Context, tenantID int64, s InsightSettings) error {
	exp := s.Experimental
	if exp == nil {
		exp = []string{}
	}
	b, err := json.Marshal(exp)
	if err != nil {
		return err
	}
	kappas := s.Kappas
	if kappas == nil {
		kappas = []insights.Agreement{}
	}
	k, err := json.Marshal(kappas)
	if err != nil {
		return err
	}
	_, err = q.q.exec(ctx, `INSERT INTO insight_settings (tenant_id, experimental, webhook_url, webhook_secret, kappas, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (tenant_id) DO UPDATE SET experimental = excluded.experimental, webhook_url = excluded.webhook_url,
		webhook_secret = excluded.webhook_secret, kappas = excluded.kappas, updated_at = excluded.updated_at`,
		tenantID, jsonText(b), s.WebhookURL, s.WebhookSecret, jsonText(k), micros(time.Now()))
	return err
}

// EvaluationResultsPage returns the results of the evaluation's runs at positions
// [from, from+runs) in the evaluation's order, then by scorer: one page of a large
// evaluation, read by the evaluation_runs_position index.
func (q queries) EvaluationResultsPage(ctx context.Context, tenantID, evalPK int64, from, runs int) ([]Result, error) {
	return collect(ctx, q.q, evaluationResultsPageSQL, []any{tenantID, evalPK, from, from + runs}, scanResult)
}

// evaluationResultsPageSQL selects the results of an evaluation's runs at positions
// [$3, $4).
const evaluationResultsPageSQL = `SELECT ` + resultCols + resultFrom + `
	JOIN evaluation_runs er ON er.evaluation_id = res.evaluation_id AND er.run_pk = res.run_pk
	WHERE res.tenant_id = $1 AND res.evaluation_id = $2 AND er.evaluation_id = $2 AND er.position >= $3 AND er.position < $4
	ORDER BY er.position, res.scorer`
