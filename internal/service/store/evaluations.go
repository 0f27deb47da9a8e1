package store

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/scorekit/scorekit/host/broker"
)

// Triggers of an evaluation.
const (
	// TriggerRequest: someone asked for it (the API or scorekit eval).
	TriggerRequest = "request"
	// TriggerArrival: new runs arrived for an agent whose policy evaluates them.
	TriggerArrival = "arrival"
)

// Spec is what an evaluation was asked to do; it is stored as JSON with the evaluation.
type Spec struct {
	// Limit is how many of the agent's newest runs were asked for (request evaluations).
	Limit int `json:"limit,omitempty"`
	// Since keeps runs at or after it. Optional.
	Since *time.Time `json:"since,omitempty"`
	// Scorers are the scorers with the version each had when the evaluation was created.
	Scorers []ScorerRef `json:"scorers"`
	// Config maps a scorer to its config for this evaluation. Optional.
	Config map[string]json.RawMessage `json:"config,omitempty"`
	// Tiered runs the scorers that need a judge only on runs the pre-screen passed.
	Tiered bool `json:"tiered,omitempty"`
	// Judge is where the evaluation's judge calls go (the agent policy's choice when it
	// was created, its model filled in), and its model is the one its results record.
	// Nil: the operator's default endpoint and model.
	Judge *broker.Route `json:"judge,omitempty"`
}

// ScorerRef names a scorer and its version.
type ScorerRef struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Judge is true for a scorer that needs the judge (tiered evaluations skip it when
	// the pre-screen fails).
	Judge bool `json:"judge,omitempty"`
	// Published is the version of the tenant's published scorer the evaluation runs,
	// resolved when it was created (the promoted one for a plain name); 0 for the host's
	// scorer.
	Published int `json:"published,omitempty"`
	// Digest is the published version's module digest or config hash.
	Digest string `json:"digest,omitempty"`
	// JudgeModel is the judge model the published version pins.
	JudgeModel string `json:"judge_model,omitempty"`
	// Key is the scorer name its results are stored under when it is not Name: "name@N"
	// for a version of a tenant's scorer other than the one promoted when the evaluation
	// was made, so that only the promoted version's results count as the scorer's (means,
	// pass rates, insights) and several versions can score the same runs.
	Key string `json:"key,omitempty"`
}

// ResultName is the scorer name the ref's results are stored under.
func (r ScorerRef) ResultName() string {
	if r.Key != "" {
		return r.Key
	}
	return r.Name
}

// Evaluation is a stored evaluation.
type Evaluation struct {
	PK       int64
	ID       string // public id, "ev_..."
	TenantID int64
	Agent    string
	Trigger  string
	Spec     Spec
	// Runs is how many runs were selected; Expected is Runs x scorers, the number of
	// results the evaluation is done at.
	Runs, Expected int64
	CreatedAt      time.Time
	// Open is true while an arrival evaluation takes the agent's arriving runs (at most
	// one per tenant and agent); Runs and Expected grow as they join.
	Open bool
	// Queued counts the runs, by position, handed to jobs so far; Flushing is true while
	// a job that hands the rest over is waiting (arrival evaluations).
	Queued   int64
	Flushing bool
	// Positions is how many places the evaluation has given its runs: the next run takes
	// place Positions. It is Runs until a run is deleted from the evaluation, which lowers
	// Runs but never frees its place (a place below Queued is a job's already).
	Positions int64
}

// NewEvaluation is an evaluation to create over RunPKs (newest first).
type NewEvaluation struct {
	TenantID int64
	Agent    string
	Trigger  string
	Spec     Spec
	RunPKs   []int64
}

// newPublicID returns "ev_" and 26 characters of 128 random bits: ids that tell nothing
// about other tenants' activity.
func newPublicID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "ev_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// CreateEvaluation stores an evaluation and the runs it covers.
func (q queries) CreateEvaluation(ctx context.Context, ne NewEvaluation) (Evaluation, error) {
	spec, err := json.Marshal(ne.Spec)
	if err != nil {
		return Evaluation{}, err
	}
	now := time.Now()
	e := Evaluation{
		ID: newPublicID(), TenantID: ne.TenantID, Agent: ne.Agent, Trigger: ne.Trigger, Spec: ne.Spec,
		Runs: int64(len(ne.RunPKs)), Expected: int64(len(ne.RunPKs) * len(ne.Spec.Scorers)), CreatedAt: fromMicros(micros(now)),
		Positions: int64(len(ne.RunPKs)),
	}
	err = queryRow(ctx, q.q, `INSERT INTO evaluations (public_id, tenant_id, agent, trigger, spec, runs, expected, created_at, positions)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
		[]any{e.ID, e.TenantID, e.Agent, e.Trigger, jsonText(spec), e.Runs, e.Expected, micros(now), e.Positions}, &e.PK)
	if err != nil {
		return Evaluation{}, fmt.Errorf("store: create evaluation: %w", err)
	}
	if err := q.insertEvaluationRuns(ctx, e.PK, ne.RunPKs, 0); err != nil {
		return Evaluation{}, fmt.Errorf("store: create evaluation: %w", err)
	}
	return e, nil
}

// insertEvaluationRuns adds runPKs to the evaluation at positions first, first+1, ...
func (q queries) insertEvaluationRuns(ctx context.Context, evalPK int64, runPKs []int64, first int64) error {
	return q.d.insertEvaluationRuns(ctx, q.q, evalPK, runPKs, first)
}

const evalCols = `id, public_id, tenant_id, agent, trigger, spec, runs, expected, created_at, open, queued, flushing, positions`

// scanEvaluation reads a row of evalCols.
func scanEvaluation(s scanner) (Evaluation, error) {
	var (
		e              Evaluation
		spec           string
		at             int64
		open, flushing int64
	)
	if err := s.Scan(&e.PK, &e.ID, &e.TenantID, &e.Agent, &e.Trigger, &spec, &e.Runs, &e.Expected, &at, &open, &e.Queued, &flushing, &e.Positions); err != nil {
		return e, err
	}
	e.CreatedAt, e.Open, e.Flushing = fromMicros(at), open == 1, flushing == 1
	if err := json.Unmarshal([]byte(spec), &e.Spec); err != nil {
		return e, fmt.Errorf("store: evaluation %s: spec: %w", e.ID, err)
	}
	return e, nil
}

// Evaluation returns the tenant's evaluation with public id.
func (q queries) Evaluation(ctx context.Context, tenantID int64, id string) (Evaluation, error) {
	e, err := first(ctx, q.q, `SELECT `+evalCols+` FROM evaluations WHERE tenant_id = $1 AND public_id = $2`, []any{tenantID, id}, scanEvaluation)
	if err != nil {
		return e, notFound(err, "evaluation %q", id)
	}
	return e, nil
}

// EvaluationByPK returns the tenant's evaluation with the store's id pk.
func (q queries) EvaluationByPK(ctx context.Context, tenantID, pk int64) (Evaluation, error) {
	return q.evaluationByPK(ctx, tenantID, pk, "")
}

// evaluationByPK is EvaluationByPK, its SELECT ended with lock (a dialect's rowLock, or "").
func (q queries) evaluationByPK(ctx context.Context, tenantID, pk int64, lock string) (Evaluation, error) {
	e, err := first(ctx, q.q, `SELECT `+evalCols+` FROM evaluations WHERE tenant_id = $1 AND id = $2`+lock, []any{tenantID, pk}, scanEvaluation)
	if err != nil {
		return e, notFound(err, "evaluation %d", pk)
	}
	return e, nil
}

// Evaluations lists the agent's evaluations, newest first, at most limit.
func (q queries) Evaluations(ctx context.Context, tenantID int64, agent string, limit int) ([]Evaluation, error) {
	return collect(ctx, q.q, `SELECT `+evalCols+` FROM evaluations WHERE tenant_id = $1 AND agent = $2
		ORDER BY id DESC LIMIT $3`, []any{tenantID, agent, limit}, scanEvaluation)
}

// EvaluationRuns returns the runs of an evaluation in its order (newest first).
func (q queries) EvaluationRuns(ctx context.Context, tenantID, evalPK int64) ([]Run, error) {
	return collect(ctx, q.q, `SELECT r.id, r.tenant_id, r.run_id, r.agent, r.run_time, r.received_at, r.body, r.repaired, r.redactions
		FROM evaluation_runs er JOIN runs r ON r.id = er.run_pk
		WHERE er.evaluation_id = $1 AND r.tenant_id = $2 ORDER BY er.position`, []any{evalPK, tenantID}, scanRun)
}
