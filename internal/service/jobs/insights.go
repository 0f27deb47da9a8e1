package jobs

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/scorekit/scorekit/internal/service/insights"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/service/telemetry"
	"github.com/scorekit/scorekit/sdk"
)

// InsightsArgs is one insight update: the insights of one (tenant, agent, scorer)
// recomputed from its latest results (internal/service/insights). The job is unique while it
// waits or runs: results stored meanwhile by many chunks cost one update, not one each.
type InsightsArgs struct {
	TenantID int64  `json:"tenant"`
	Agent    string `json:"agent"`
	Scorer   string `json:"scorer"`
}

// Kind names the job for River.
func (InsightsArgs) Kind() string { return "scorekit_insights" }

// insightStates are the states in which an update is not inserted again: waiting or
// running. Not completed: the update completes in the transaction that writes it, so an
// update enqueued after that transaction runs again and sees what was stored since.
var insightStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
	rivertype.JobStateScheduled, rivertype.JobStateRetryable,
}

// InsertOpts makes the update unique by its args while it waits or runs.
func (InsightsArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: insightStates}}
}

// WebhookArgs is one delivery of a new critical insight to its tenant's webhook. Body is
// the exact JSON delivered and signed (a string, so that no database reformats it).
type WebhookArgs struct {
	TenantID  int64  `json:"tenant"`
	InsightID string `json:"insight"`
	Body      string `json:"body"`
}

// Kind names the job for River.
func (WebhookArgs) Kind() string { return "scorekit_webhook" }

// InsertOpts gives a delivery more attempts than an evaluation: a receiver may be down
// for a while. With River's default backoff (attempt^4 seconds) 10 attempts span about
// three hours.
func (WebhookArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 10} }

// Webhook headers and the event a new critical insight is delivered as.
const (
	// SignatureHeader carries "sha256=" and the hex HMAC-SHA256 of the body, keyed with
	// the tenant's webhook secret.
	SignatureHeader = "Scorekit-Signature"
	// EventHeader names the event; DeliveryHeader is the delivery's id, the same on
	// every retry of it.
	EventHeader    = "Scorekit-Event"
	DeliveryHeader = "Scorekit-Delivery"
	// EventCritical: an insight opened as critical, or raised to critical.
	EventCritical = "insight.critical"
)

// WebhookEvent is the body of a webhook delivery.
type WebhookEvent struct {
	// Event is insight.critical.
	Event string `json:"event"`
	// Delivery identifies the delivery; a receiver that sees it twice (a retry after a
	// lost answer) may ignore the second.
	Delivery string        `json:"delivery"`
	Tenant   string        `json:"tenant"`
	Insight  store.Insight `json:"insight"`
	// CreatedAt is when the insight became critical.
	CreatedAt time.Time `json:"created_at"`
}

// Sign returns the signature header's value for body under secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether signature (the header's value) signs body under secret, in
// constant time: what a receiver does before trusting a delivery.
func Verify(secret string, body []byte, signature string) bool {
	return hmac.Equal([]byte(signature), []byte(Sign(secret, body)))
}

// touchInsights records, in the transaction that stores results, that the series they
// belong to changed, and enqueues one update per series.
func (e *Queue) touchInsights(ctx context.Context, tx *store.Tx, ev store.Evaluation, results []store.Result) error {
	var scorers []string
	for _, r := range results {
		// A version compared beside the promoted one (stored as name@N) is no series of
		// its own: only the promoted version's results make the scorer's insights.
		if strings.Contains(r.Scorer, "@") {
			continue
		}
		if !slices.Contains(scorers, r.Scorer) {
			scorers = append(scorers, r.Scorer)
		}
	}
	return e.RefreshInsights(ctx, tx, ev.TenantID, ev.Agent, scorers)
}

// RefreshInsights enqueues, in tx, an update of the insights of (agent, scorer) for each
// scorer: after their results changed, or the settings they are computed with (the
// agent's window, the tenant's experimental scorers).
func (e *Queue) RefreshInsights(ctx context.Context, tx *store.Tx, tenantID int64, agent string, scorers []string) error {
	if len(scorers) == 0 {
		return nil
	}
	if err := tx.TouchSeries(ctx, tenantID, agent, scorers); err != nil {
		return err
	}
	params := make([]river.InsertManyParams, 0, len(scorers))
	for _, s := range scorers {
		params = append(params, river.InsertManyParams{Args: InsightsArgs{TenantID: tenantID, Agent: agent, Scorer: s}})
	}
	if err := e.q.insert(ctx, tx, params); err != nil {
		return fmt.Errorf("jobs: enqueue insight updates of %s: %w", agent, err)
	}
	return nil
}

// RefreshAgents enqueues, in tx, an update of every insight series of the agent ("" for
// every agent of the tenant): after the results their windows hold were deleted, or the
// settings they are computed with changed.
func (e *Queue) RefreshAgents(ctx context.Context, tx *store.Tx, tenantID int64, agent string) error {
	series, err := tx.SeriesOf(ctx, tenantID, agent)
	if err != nil {
		return err
	}
	byAgent := map[string][]string{}
	var agents []string
	for _, se := range series {
		if _, ok := byAgent[se.Agent]; !ok {
			agents = append(agents, se.Agent)
		}
		byAgent[se.Agent] = append(byAgent[se.Agent], se.Scorer)
	}
	for _, a := range agents {
		if err := e.RefreshInsights(ctx, tx, tenantID, a, byAgent[a]); err != nil {
			return err
		}
	}
	return nil
}

// InsightConfig is the insight engine's config for one agent of a tenant: the agent
// policy's window and the tenant's experimental scorers.
func InsightConfig(ctx context.Context, q interface {
	AgentPolicy(context.Context, int64, string) (store.AgentPolicy, error)
	InsightSettings(context.Context, int64) (store.InsightSettings, error)
}, tenantID int64, agent string) (insights.Config, error) {
	var cfg insights.Config
	p, err := q.AgentPolicy(ctx, tenantID, agent)
	switch {
	case err == nil:
		cfg.Window = p.Window
	case !errors.Is(err, store.ErrNotFound):
		return cfg, err
	}
	set, err := q.InsightSettings(ctx, tenantID)
	if err != nil {
		return cfg, err
	}
	cfg.Experimental, cfg.Agreements = set.Experimental, set.Kappas
	return cfg, nil
}

// SeriesRows adapts a series' stored rows to the insight engine's.
func SeriesRows(scorer string, rows []store.SeriesRow) []insights.Result {
	out := make([]insights.Result, 0, len(rows))
	for _, r := range rows {
		var res sdk.Result
		if err := json.Unmarshal(r.Body, &res); err != nil {
			// A body that does not decode still says its status and score.
			res = sdk.Result{Status: sdk.Status(r.Status), Score: r.Score, Passed: r.Passed}
		}
		out = append(out, insights.FromSDK(r.RunID, r.RunTime, scorer, r.ScorerVersion, res, r.CreatedAt))
	}
	return out
}

// insightsWorker is River's worker of InsightsArgs.
type insightsWorker struct {
	river.WorkerDefaults[InsightsArgs]
	e *Queue
}

// Work updates one series in one transaction: lock the series, load its latest results
// and open insights, Update, write the changes, enqueue a webhook delivery for each new
// critical insight, and complete the job.
func (w *insightsWorker) Work(ctx context.Context, job *river.Job[InsightsArgs]) error {
	e, a := w.e, job.Args
	t, err := e.st.TenantByID(ctx, a.TenantID)
	if err != nil {
		return err
	}
	now := time.Now()
	var (
		critical []store.Insight
		changes  insights.Changes
	)
	err = e.st.InTx(ctx, func(tx *store.Tx) error {
		exists, err := tx.LockSeries(ctx, a.TenantID, a.Agent, a.Scorer, now)
		if err != nil {
			return err
		}
		if !exists {
			// The agent was deleted since the update was enqueued: nothing to assess, and
			// nothing of it may be written again.
			return e.q.completeInsights(ctx, tx, job)
		}
		cfg, err := InsightConfig(ctx, tx, a.TenantID, a.Agent)
		if err != nil {
			return err
		}
		window := cfg.WithDefaults().Window
		rows, err := tx.SeriesResults(ctx, a.TenantID, a.Agent, a.Scorer, 2*window, true)
		if err != nil {
			return err
		}
		open, err := tx.OpenInsights(ctx, a.TenantID, a.Agent, a.Scorer)
		if err != nil {
			return err
		}
		plain := make([]insights.Insight, len(open))
		for i, in := range open {
			plain[i] = in.Insight
		}
		changes, err = insights.Update(cfg, a.Agent, a.Scorer, SeriesRows(a.Scorer, rows), plain, now)
		if err != nil {
			// An invalid config or row will not fix itself: say so and stop retrying.
			return river.JobCancel(fmt.Errorf("insights of %s/%s: %w", a.Agent, a.Scorer, err))
		}
		if critical, err = tx.ApplyInsights(ctx, a.TenantID, open, changes); err != nil {
			return err
		}
		if err := e.enqueueWebhooks(ctx, tx, t, critical, now); err != nil {
			return err
		}
		return e.q.completeInsights(ctx, tx, job)
	})
	if err != nil {
		return err
	}
	e.opts.Telemetry.InsightsChanged(telemetry.Tenant{ID: t.ID, Created: t.CreatedAt, Name: t.Name}, changes)
	return nil
}

// enqueueWebhooks enqueues a delivery of each insight to the tenant's webhook, if it has
// one.
func (e *Queue) enqueueWebhooks(ctx context.Context, tx *store.Tx, t store.Tenant, critical []store.Insight, now time.Time) error {
	if len(critical) == 0 {
		return nil
	}
	set, err := tx.InsightSettings(ctx, t.ID)
	if err != nil || set.WebhookURL == "" {
		return err
	}
	params := make([]river.InsertManyParams, 0, len(critical))
	for _, in := range critical {
		body, err := json.Marshal(WebhookEvent{Event: EventCritical, Delivery: newDeliveryID(), Tenant: t.Name, Insight: in, CreatedAt: now.UTC()})
		if err != nil {
			return err
		}
		params = append(params, river.InsertManyParams{Args: WebhookArgs{TenantID: t.ID, InsightID: in.ID, Body: string(body)}})
	}
	return e.q.insert(ctx, tx, params)
}

func newDeliveryID() string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return "dl_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// webhookWorker is River's worker of WebhookArgs.
type webhookWorker struct {
	river.WorkerDefaults[WebhookArgs]
	e *Queue
}

// webhookTimeout bounds one delivery.
const webhookTimeout = 10 * time.Second

// Work posts the body, signed with the tenant's secret as it is now, to the tenant's
// webhook as it is now; an answer other than 2xx is an error and River retries. A
// tenant whose webhook was removed meanwhile gets nothing.
func (w *webhookWorker) Work(ctx context.Context, job *river.Job[WebhookArgs]) error {
	a := job.Args
	set, err := w.e.st.InsightSettings(ctx, a.TenantID)
	if err != nil {
		return err
	}
	if set.WebhookURL == "" {
		return nil
	}
	var ev WebhookEvent
	if err := json.Unmarshal([]byte(a.Body), &ev); err != nil {
		return river.JobCancel(fmt.Errorf("webhook body of insight %s: %w", a.InsightID, err))
	}
	ctx, cancel := context.WithTimeout(ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, set.WebhookURL, strings.NewReader(a.Body))
	if err != nil {
		return river.JobCancel(fmt.Errorf("webhook %s: %w", set.WebhookURL, err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "scorekit-webhook")
	req.Header.Set(SignatureHeader, Sign(set.WebhookSecret, []byte(a.Body)))
	req.Header.Set(EventHeader, ev.Event)
	req.Header.Set(DeliveryHeader, ev.Delivery)
	resp, err := w.e.opts.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", set.WebhookURL, err)
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook %s answered %s: %s", set.WebhookURL, resp.Status, strings.TrimSpace(string(snippet)))
	}
	return nil
}
