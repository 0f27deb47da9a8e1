package service

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/scorekit/scorekit/internal/service/insights"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/sdk"
)

// Insight states a listing selects.
const (
	InsightsOpen     = "open"
	InsightsResolved = "resolved"
	InsightsAll      = "all"
)

// InsightQuery selects insights.
type InsightQuery struct {
	// Severity keeps one severity: warning or critical. Optional.
	Severity string
	// State is open (the default), resolved or all.
	State string
	// Limit caps a page (1 to MaxPage).
	Limit int
	// Cursor continues a listing: the Next of the previous page.
	Cursor string
}

// InsightsPage is one page of insights, newest first.
type InsightsPage struct {
	Insights []store.Insight `json:"insights"`
	// Next continues the listing (pass it as cursor); empty on the last page.
	Next string `json:"next,omitempty"`
}

func (q InsightQuery) store(agent string) (store.InsightQuery, error) {
	sq := store.InsightQuery{Agent: agent, Limit: q.Limit + 1}
	if err := checkPage(q.Limit); err != nil {
		return sq, err
	}
	switch q.Severity {
	case "", string(insights.SeverityWarning), string(insights.SeverityCritical):
		sq.Severity = q.Severity
	default:
		return sq, invalid("severity %q: want warning or critical", q.Severity)
	}
	switch q.State {
	case "", InsightsOpen:
	case InsightsResolved:
		sq.Resolved = true
	case InsightsAll:
		sq.All = true
	default:
		return sq, invalid("state %q: want open, resolved or all", q.State)
	}
	if q.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		pk, err2 := strconv.ParseInt(string(b), 10, 64)
		if err != nil || err2 != nil || pk <= 0 {
			return sq, invalid("cursor %q: pass the next value of the previous page as it was", q.Cursor)
		}
		sq.Before = pk
	}
	return sq, nil
}

func (s *Service) insightsPage(ctx context.Context, t store.Tenant, agent string, q InsightQuery) (InsightsPage, error) {
	sq, err := q.store(agent)
	if err != nil {
		return InsightsPage{}, err
	}
	ins, err := s.st.Insights(ctx, t.ID, sq)
	if err != nil {
		return InsightsPage{}, err
	}
	p := InsightsPage{Insights: ins}
	if len(ins) > q.Limit {
		p.Insights = ins[:q.Limit]
		p.Next = base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(p.Insights[q.Limit-1].PK, 10)))
	}
	if p.Insights == nil {
		p.Insights = []store.Insight{}
	}
	return p, nil
}

// Insights lists the tenant's insights, newest first: by default the open ones of every
// agent.
func (s *Service) Insights(ctx context.Context, t store.Tenant, q InsightQuery) (InsightsPage, error) {
	return s.insightsPage(ctx, t, "", q)
}

// AgentInsights lists one agent's insights, newest first. An agent the tenant has no run
// of is ErrNotFound.
func (s *Service) AgentInsights(ctx context.Context, t store.Tenant, agent string, q InsightQuery) (InsightsPage, error) {
	if err := s.agentExists(ctx, t, agent); err != nil {
		return InsightsPage{}, err
	}
	return s.insightsPage(ctx, t, agent, q)
}

func (s *Service) agentExists(ctx context.Context, t store.Tenant, agent string) error {
	has, err := s.st.HasRuns(ctx, t.ID, agent)
	if err != nil {
		return err
	}
	if !has {
		return &Error{kind: ErrNotFound, msg: fmt.Sprintf("agent %q has no runs", agent)}
	}
	return nil
}

// Insight returns the tenant's insight id.
func (s *Service) Insight(ctx context.Context, t store.Tenant, id string) (store.Insight, error) {
	in, err := s.st.InsightByID(ctx, t.ID, id)
	return in, notFound(err, "no insight %q", id)
}

// InsightSettings are a tenant's insight settings as they may be shown: the webhook's
// secret is not.
type InsightSettings struct {
	// Experimental names the scorers marked experimental.
	Experimental []string `json:"experimental"`
	// Webhook is told about new critical insights; empty for none.
	Webhook string `json:"webhook,omitempty"`
}

// InsightSettings returns the tenant's insight settings.
func (s *Service) InsightSettings(ctx context.Context, t store.Tenant) (InsightSettings, error) {
	set, err := s.st.InsightSettings(ctx, t.ID)
	if err != nil {
		return InsightSettings{}, err
	}
	exp := set.Experimental
	if exp == nil {
		exp = []string{}
	}
	return InsightSettings{Experimental: exp, Webhook: set.WebhookURL}, nil
}

// SetExperimental marks the tenant's experimental scorers (replacing the list): they
// raise no critical insight until their current version has scored a full window. The
// insights of every series are updated under the new list.
func (s *Service) SetExperimental(ctx context.Context, t store.Tenant, scorers []string) error {
	known := s.ScorerNames(t)
	list := []string{}
	for _, name := range scorers {
		if !slices.Contains(known, name) {
			return &Error{kind: ErrUnknownScorer, msg: fmt.Sprintf("unknown scorer %q (known: %s)", name, strings.Join(known, ", "))}
		}
		if !slices.Contains(list, name) {
			list = append(list, name)
		}
	}
	slices.Sort(list)
	return s.st.InTx(ctx, func(tx *store.Tx) error {
		set, err := tx.InsightSettings(ctx, t.ID)
		if err != nil {
			return err
		}
		set.Experimental = list
		if err := tx.SetInsightSettings(ctx, t.ID, set); err != nil {
			return err
		}
		return s.refreshInsights(ctx, tx, t, "")
	})
}

// WebhookSecretPrefix starts every webhook secret.
const WebhookSecretPrefix = "whsec_"

// SetWebhook sets the URL the tenant's new critical insights are posted to, with a new
// secret that signs each body (returned: it is shown this once). An empty URL removes
// the webhook.
func (s *Service) SetWebhook(ctx context.Context, t store.Tenant, webhook string) (string, error) {
	secret := ""
	if webhook != "" {
		u, err := url.Parse(webhook)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", invalid("webhook %q: want an http:// or https:// URL", webhook)
		}
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		secret = WebhookSecretPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	}
	err := s.st.InTx(ctx, func(tx *store.Tx) error {
		set, err := tx.InsightSettings(ctx, t.ID)
		if err != nil {
			return err
		}
		set.WebhookURL, set.WebhookSecret = webhook, secret
		return tx.SetInsightSettings(ctx, t.ID, set)
	})
	return secret, err
}

// refreshInsights enqueues an update of every series of the agent ("" for every agent).
func (s *Service) refreshInsights(ctx context.Context, tx *store.Tx, t store.Tenant, agent string) error {
	return s.eng.RefreshAgents(ctx, tx, t.ID, agent)
}

// RefreshInsights updates the insights of every scorer of the agent ("" for every
// agent) in the background: after the agent's window changed.
func (s *Service) RefreshInsights(ctx context.Context, t store.Tenant, agent string) error {
	return s.st.InTx(ctx, func(tx *store.Tx) error { return s.refreshInsights(ctx, tx, t, agent) })
}

// checkWindow checks an agent policy's insight window.
func checkWindow(w int) error {
	if w < 0 || w > 10000 {
		return invalid("window %d: want 1 to 10000 runs (0: the default, %d)", w, insights.DefaultConfig().Window)
	}
	return nil
}

// SeriesView is one scorer of one agent as the dashboard shows it: its latest window
// and its trend. Means and pass rates count scored results only.
type SeriesView struct {
	Agent  string
	Scorer string
	// Version is the version of the newest result.
	Version string
	// Window is the agent's insight window; the counts below are over its newest
	// Window runs with a result of this scorer.
	Window                        int
	Runs, Scored, Skipped, Failed int
	Mean, PassRate                *float64
	// Trend is oldest first.
	Trend []TrendPoint
	// TrendRuns is how many runs the trend covers.
	TrendRuns int
}

// TrendPoint sums up consecutive runs.
type TrendPoint struct {
	From, To       time.Time
	Runs, Scored   int
	Mean, PassRate *float64
}

// AgentSeries returns a SeriesView of each scorer with results for the agent (by
// scorer name), its trend over the agent's newest trendRuns runs in at most points
// points. An agent without results has none.
func (s *Service) AgentSeries(ctx context.Context, t store.Tenant, agent string, trendRuns, points int) ([]SeriesView, error) {
	series, err := s.st.SeriesOf(ctx, t.ID, agent)
	if err != nil {
		return nil, err
	}
	cfg, err := jobs.InsightConfig(ctx, s.st, t.ID, agent)
	if err != nil {
		return nil, err
	}
	window := cfg.WithDefaults().Window
	out := make([]SeriesView, 0, len(series))
	for _, se := range series {
		rows, err := s.st.SeriesResults(ctx, t.ID, agent, se.Scorer, max(trendRuns, window), false)
		if err != nil {
			return nil, err
		}
		v := SeriesView{Agent: agent, Scorer: se.Scorer, Window: window}
		if len(rows) > 0 {
			v.Version = rows[0].ScorerVersion
		}
		w := summarize(rows[:min(window, len(rows))])
		v.Runs, v.Scored, v.Skipped, v.Failed, v.Mean, v.PassRate = w.Runs, w.Scored, w.skipped, w.failed, w.Mean, w.PassRate
		trend := rows[:min(trendRuns, len(rows))]
		v.TrendRuns = len(trend)
		v.Trend = trendOf(trend, points)
		out = append(out, v)
	}
	return out, nil
}

type summary struct {
	TrendPoint
	skipped, failed int
}

// summarize sums up rows (any order).
func summarize(rows []store.SeriesRow) summary {
	var (
		s     summary
		tally scoreTally
	)
	for i, r := range rows {
		if i == 0 || r.RunTime.Before(s.From) {
			s.From = r.RunTime
		}
		if r.RunTime.After(s.To) {
			s.To = r.RunTime
		}
		s.Runs++
		switch r.Status {
		case string(sdk.StatusScored):
			tally.add(r.Score, r.Passed)
		case string(sdk.StatusSkipped):
			s.skipped++
		default:
			s.failed++
		}
	}
	s.Scored, s.Mean, s.PassRate = int(tally.scored), tally.mean(), tally.passRate()
	return s
}

// trendOf splits rows (newest first) into at most points groups of consecutive runs,
// oldest first.
func trendOf(rows []store.SeriesRow, points int) []TrendPoint {
	if len(rows) == 0 || points < 1 {
		return nil
	}
	n := min(points, len(rows))
	out := make([]TrendPoint, 0, n)
	for i := n - 1; i >= 0; i-- {
		// Group i holds rows [i*len/n, (i+1)*len/n) of the newest-first rows.
		lo, hi := i*len(rows)/n, (i+1)*len(rows)/n
		out = append(out, summarize(rows[lo:hi]).TrendPoint)
	}
	return out
}

// InsightsUpToDate reports whether the insights of every series of the agent ("" for
// every agent) have seen every result stored and every setting changed.
func (s *Service) InsightsUpToDate(ctx context.Context, t store.Tenant, agent string) (bool, error) {
	series, err := s.st.SeriesOf(ctx, t.ID, agent)
	if err != nil {
		return false, err
	}
	for _, se := range series {
		if !se.UpToDate() {
			return false, nil
		}
	}
	return true, nil
}

// WaitInsights waits up to wait for the insights of the agent ("" for every agent) to be
// up to date, and reports whether they are.
func (s *Service) WaitInsights(ctx context.Context, t store.Tenant, agent string, wait time.Duration) (bool, error) {
	deadline := time.Now().Add(wait)
	pause := 10 * time.Millisecond
	for {
		ok, err := s.InsightsUpToDate(ctx, t, agent)
		if err != nil || ok {
			return ok, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(min(pause, left)):
		}
		pause = min(pause*2, 200*time.Millisecond)
	}
}
