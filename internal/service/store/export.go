package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// exportPage is how many rows one read of an export takes. Each page is read whole and
// its rows closed before any is handed on: a client that reads its export slowly never
// holds a connection (on SQLite, the only one) between pages.
const exportPage = 1000

// ExportedRun is a run as an export writes it.
type ExportedRun struct {
	ID         string          `json:"id"`
	Agent      string          `json:"agent"`
	Time       time.Time       `json:"time"`
	ReceivedAt time.Time       `json:"received_at"`
	Repaired   bool            `json:"repaired,omitempty"`
	Redactions map[string]int  `json:"redactions,omitempty"`
	Run        json.RawMessage `json:"run"`
}

// ExportedResult is a result as an export writes it.
type ExportedResult struct {
	RunID         string          `json:"run_id"`
	Evaluation    string          `json:"evaluation"`
	Scorer        string          `json:"scorer"`
	ScorerVersion string          `json:"scorer_version"`
	JudgeModel    string          `json:"judge_model,omitempty"`
	CreatedAt     time.Time       `json:"created_at"`
	Result        json.RawMessage `json:"result"`
}

// ExportedEvaluation is an evaluation as an export writes it.
type ExportedEvaluation struct {
	ID        string    `json:"id"`
	Agent     string    `json:"agent"`
	Trigger   string    `json:"trigger"`
	Spec      Spec      `json:"spec"`
	Runs      int64     `json:"runs"`
	CreatedAt time.Time `json:"created_at"`
}

// ExportedLabel is a label as an export writes it.
type ExportedLabel struct {
	RunID     string    `json:"run_id"`
	Agent     string    `json:"agent"`
	Scorer    string    `json:"scorer"`
	Labeller  string    `json:"labeller"`
	Passed    *bool     `json:"passed,omitempty"`
	Score     *float64  `json:"score,omitempty"`
	Choice    *string   `json:"choice,omitempty"`
	Note      string    `json:"note,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ExportedPolicy is an agent's policy as an export writes it.
type ExportedPolicy struct {
	Agent  string      `json:"agent"`
	Policy AgentPolicy `json:"policy"`
}

// ExportedScorerVersion is a version of one of the tenant's published scorers as an
// export writes it; a WASM version's module is its own line (ExportedModule), by digest.
type ExportedScorerVersion struct {
	Name       string          `json:"name"`
	Version    int             `json:"version"`
	Kind       string          `json:"kind"`
	Base       string          `json:"base,omitempty"`
	Config     json.RawMessage `json:"config"`
	Digest     string          `json:"digest"`
	Manifest   json.RawMessage `json:"manifest"`
	Info       json.RawMessage `json:"info"`
	JudgeModel string          `json:"judge_model,omitempty"`
	Replaces   bool            `json:"replaces,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	DeletedAt  *time.Time      `json:"deleted_at,omitempty"`
}

// ExportedPromotion is one promotion of a published scorer's version, with what the
// agreement gate said of it.
type ExportedPromotion struct {
	Name       string          `json:"name"`
	Version    int             `json:"version"`
	PromotedAt time.Time       `json:"promoted_at"`
	Gate       json.RawMessage `json:"gate,omitempty"`
}

// ExportedModule is a WASM module the tenant uploaded: its bytes, base64 in JSON, and
// their sha256 as the versions name it.
type ExportedModule struct {
	Digest    string    `json:"digest"`
	Size      int64     `json:"size"`
	CreatedAt time.Time `json:"created_at"`
	Module    []byte    `json:"module"`
}

// Export kinds: each line of an export is {"kind": KIND, "data": ...}.
const (
	ExportTenant          = "tenant"
	ExportKey             = "key"
	ExportScorerVersion   = "scorer_version"
	ExportScorerPromotion = "scorer_promotion"
	ExportScorerModule    = "scorer_module"
	ExportPolicy          = "agent_policy"
	ExportRun             = "run"
	ExportResult          = "result"
	ExportLabel           = "label"
	ExportEvaluation      = "evaluation"
	ExportInsight         = "insight"
	ExportAudit           = "audit"
)

// Export reads everything the tenant owns and hands it to emit, kind by kind: the tenant
// and its policy, its keys (ids, never hashes), its published scorers (every version,
// deleted ones too, their promotions and their modules), agent policies, runs with their results,
// labels, evaluations, insights and its audit log. Spans of traces whose agent span has
// not come are left out: they are not runs yet. Insight settings are left out: their webhook
// secret is not data the tenant gave. The export is one snapshot, read in one read-only
// transaction (readSnapshot): a tenant that writes meanwhile is neither held up nor seen.
func (s *Store) Export(ctx context.Context, t Tenant, emit func(kind string, v any) error) error {
	return s.readSnapshot(ctx, func(q queries) error { return q.export(ctx, t, emit) })
}

func (q queries) export(ctx context.Context, t Tenant, emit func(kind string, v any) error) error {
	if err := emit(ExportTenant, map[string]any{"name": t.Name, "policy": t.Policy, "created_at": t.CreatedAt}); err != nil {
		return err
	}
	keys, err := q.Keys(ctx, t.ID)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := emit(ExportKey, map[string]any{"id": k.Prefix, "created_at": k.CreatedAt, "revoked_at": k.RevokedAt}); err != nil {
			return err
		}
	}
	if err := q.exportScorers(ctx, t.ID, emit); err != nil {
		return err
	}
	if err := q.exportPolicies(ctx, t.ID, emit); err != nil {
		return err
	}
	if err := q.exportRuns(ctx, t.ID, emit); err != nil {
		return err
	}
	err = exportPages("labels", func(after int64) ([]Label, error) {
		return q.Labels(ctx, t.ID, LabelQuery{AfterID: after, Limit: exportPage})
	}, func(l Label) (int64, error) {
		return l.ID, emit(ExportLabel, ExportedLabel{RunID: l.RunID, Agent: l.Agent, Scorer: l.Scorer, Labeller: l.Labeller, Passed: l.Passed,
			Score: l.Score, Choice: l.Choice, Note: l.Note, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt})
	})
	if err != nil {
		return err
	}
	err = exportPages("evaluations", func(after int64) ([]Evaluation, error) {
		return collect(ctx, q.q, exportEvaluationsSQL, []any{t.ID, after, exportPage}, scanEvaluation)
	}, func(e Evaluation) (int64, error) {
		return e.PK, emit(ExportEvaluation, ExportedEvaluation{ID: e.ID, Agent: e.Agent, Trigger: e.Trigger, Spec: e.Spec, Runs: e.Runs, CreatedAt: e.CreatedAt})
	})
	if err != nil {
		return err
	}
	err = exportPages("insights", func(after int64) ([]Insight, error) {
		return collect(ctx, q.q, exportInsightsSQL, []any{t.ID, after, exportPage}, scanInsight)
	}, func(in Insight) (int64, error) {
		return in.PK, emit(ExportInsight, in)
	})
	if err != nil {
		return err
	}
	// The audit log pages run newest first: each after the one before the last emitted.
	return exportPages("audit log", func(before int64) ([]AuditEntry, error) {
		return q.AuditLog(ctx, t.ID, before, exportPage)
	}, func(e AuditEntry) (int64, error) {
		return e.ID, emit(ExportAudit, e)
	})
}

// exportPages reads rows a page (exportPage rows) at a time, read(0) first and then
// read(the key of the last row emitted), and hands each to emit, which returns the row's
// key, until a page is short.
func exportPages[T any](what string, read func(after int64) ([]T, error), emit func(T) (int64, error)) error {
	var last int64
	for {
		page, err := read(last)
		if err != nil {
			return fmt.Errorf("store: export %s: %w", what, err)
		}
		for _, v := range page {
			if last, err = emit(v); err != nil {
				return err
			}
		}
		if len(page) < exportPage {
			return nil
		}
	}
}

// Export reads, each by its tenant's index, in pages after the last row emitted.
const (
	exportEvaluationsSQL = `SELECT ` + evalCols + ` FROM evaluations WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3`
	exportInsightsSQL    = `SELECT ` + insightCols + ` FROM insights WHERE tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3`
	exportPoliciesSQL    = `SELECT agent, ` + agentPolicyCols + ` FROM agent_policies WHERE tenant_id = $1 ORDER BY agent`
	exportRunsSQL        = `SELECT ` + runCols + ` FROM runs WHERE tenant_id = $1
		AND (run_time > $2 OR (run_time = $2 AND id > $3)) ORDER BY run_time, id LIMIT $4`
	exportResultsSQL = `SELECT res.run_pk, e.public_id, res.scorer, res.scorer_version, res.judge_model, res.result, res.created_at
		FROM results res JOIN evaluations e ON e.id = res.evaluation_id WHERE res.tenant_id = $1 AND res.run_pk IN `
	exportPromotionsSQL = `SELECT name, ` + promotionCols + ` FROM scorer_promotions WHERE tenant_id = $1 ORDER BY name, id`
	exportModulesSQL    = `SELECT digest, size, created_at FROM scorer_modules WHERE tenant_id = $1 ORDER BY digest`
)

// exportScorers emits the tenant's published scorers: each version, then the promotions
// of every name, oldest first, then each module once, read one at a time (a module may
// be megabytes; the tenant's quota bounds their number and total).
func (q queries) exportScorers(ctx context.Context, tenantID int64, emit func(string, any) error) error {
	vs, err := q.PublishedVersions(ctx, tenantID, "")
	if err != nil {
		return fmt.Errorf("store: export scorers: %w", err)
	}
	for _, v := range vs {
		if err := emit(ExportScorerVersion, ExportedScorerVersion{Name: v.Name, Version: v.Version, Kind: v.Kind, Base: v.Base,
			Config: v.Config, Digest: v.Digest, Manifest: v.Manifest, Info: v.Info, JudgeModel: v.JudgeModel, Replaces: v.Replaces,
			CreatedAt: v.CreatedAt, DeletedAt: v.Deleted}); err != nil {
			return err
		}
	}
	promotions, err := collect(ctx, q.q, exportPromotionsSQL, []any{tenantID}, func(s scanner) (ExportedPromotion, error) {
		var name string
		p, err := scanPromotion(wider{scanner: s, lead: []any{&name}})
		return ExportedPromotion{Name: name, Version: p.Version, PromotedAt: p.PromotedAt, Gate: p.Gate}, err
	})
	if err != nil {
		return fmt.Errorf("store: export promotions: %w", err)
	}
	for _, p := range promotions {
		if err := emit(ExportScorerPromotion, p); err != nil {
			return err
		}
	}
	modules, err := collect(ctx, q.q, exportModulesSQL, []any{tenantID}, func(s scanner) (ExportedModule, error) {
		var (
			m  ExportedModule
			at int64
		)
		err := s.Scan(&m.Digest, &m.Size, &at)
		m.CreatedAt = fromMicros(at)
		return m, err
	})
	if err != nil {
		return fmt.Errorf("store: export modules: %w", err)
	}
	for _, m := range modules {
		if m.Module, err = q.Module(ctx, tenantID, m.Digest); err != nil {
			return fmt.Errorf("store: export module %s: %w", m.Digest, err)
		}
		if err := emit(ExportScorerModule, m); err != nil {
			return err
		}
	}
	return nil
}

func (q queries) exportPolicies(ctx context.Context, tenantID int64, emit func(string, any) error) error {
	out, err := collect(ctx, q.q, exportPoliciesSQL, []any{tenantID}, func(s scanner) (ExportedPolicy, error) {
		var (
			p   ExportedPolicy
			err error
		)
		if p.Policy, err = scanAgentPolicy(wider{scanner: s, lead: []any{&p.Agent}}); err != nil {
			return p, fmt.Errorf("store: export: policy of agent %q: %w", p.Agent, err)
		}
		return p, nil
	})
	if err != nil {
		return err
	}
	for _, p := range out {
		if err := emit(ExportPolicy, p); err != nil {
			return err
		}
	}
	return nil
}

// exportRuns emits the tenant's runs, oldest first, each followed by its results.
func (q queries) exportRuns(ctx context.Context, tenantID int64, emit func(string, any) error) error {
	var (
		lastAt int64 = -1 << 62
		lastPK int64
	)
	for {
		runs, err := collect(ctx, q.q, exportRunsSQL, []any{tenantID, lastAt, lastPK, exportPage}, scanRun)
		if err != nil {
			return fmt.Errorf("store: export runs: %w", err)
		}
		if len(runs) == 0 {
			return nil
		}
		pks := make([]int64, len(runs))
		for i, r := range runs {
			pks[i] = r.PK
		}
		byRun, err := q.exportResults(ctx, tenantID, pks)
		if err != nil {
			return err
		}
		for _, r := range runs {
			if err := emit(ExportRun, ExportedRun{ID: r.ID, Agent: r.Agent, Time: r.Time, ReceivedAt: r.ReceivedAt,
				Repaired: r.Repaired, Redactions: r.Redactions, Run: r.Body}); err != nil {
				return err
			}
			for _, res := range byRun[r.PK] {
				res.RunID = r.ID
				if err := emit(ExportResult, res); err != nil {
					return err
				}
			}
			lastAt, lastPK = micros(r.Time), r.PK
		}
		if len(runs) < exportPage {
			return nil
		}
	}
}

func (q queries) exportResults(ctx context.Context, tenantID int64, pks []int64) (map[int64][]ExportedResult, error) {
	in, args := inList(pks, tenantID)
	out := map[int64][]ExportedResult{}
	err := eachRow(ctx, q.q, exportResultsSQL+in+` ORDER BY res.id`, args, func(s scanner) error {
		var (
			pk   int64
			r    ExportedResult
			body string
			at   int64
		)
		if err := s.Scan(&pk, &r.Evaluation, &r.Scorer, &r.ScorerVersion, &r.JudgeModel, &body, &at); err != nil {
			return err
		}
		r.Result, r.CreatedAt = json.RawMessage(body), fromMicros(at)
		out[pk] = append(out[pk], r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: export results: %w", err)
	}
	return out, nil
}
