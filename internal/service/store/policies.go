package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/scorekit/scorekit/host/broker"
)

// AgentPolicy says how an agent's new runs are evaluated when they arrive.
type AgentPolicy struct {
	// Scorers run on arriving runs. Required for the policy to do anything.
	Scorers []string `json:"scorers"`
	// SampleRate is the share of arriving runs evaluated, in [0, 1]. Which runs are taken
	// depends only on the run id, so re-sending a run never changes the choice.
	SampleRate float64 `json:"sample_rate"`
	// Tiered runs the scorers that need a judge only on runs the pre-screen passed: the
	// judge is spent on runs worth judging.
	Tiered bool `json:"tiered,omitempty"`
	// Config maps a scorer to its config. Optional.
	Config map[string]json.RawMessage `json:"config,omitempty"`
	// Window is how many of the agent's latest runs its insights look at. Optional.
	// Default is the insight engine's (100).
	Window int `json:"window,omitempty"`
	// Judge is the judge the agent's runs are scored with, in every evaluation of the
	// agent: an endpoint the operator allows (by name) and a model it allows there.
	// Optional. Default is the operator's default endpoint and model. A scorer version that
	// pins its own judge (a published scorer's config) is the place for a per-scorer
	// choice; this one is the agent's.
	Judge *broker.Route `json:"judge,omitempty"`
	// UpdatedAt is when the policy was last set (filled in by reads).
	UpdatedAt time.Time `json:"-"`
}

// SetAgentPolicy stores the agent's policy, replacing any.
func (q queries) SetAgentPolicy(ctx context.Context, tenantID int64, agent string, p AgentPolicy) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	_, err = q.q.exec(ctx, `INSERT INTO agent_policies (tenant_id, agent, policy, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (tenant_id, agent) DO UPDATE SET policy = excluded.policy, updated_at = excluded.updated_at`,
		tenantID, agent, jsonText(b), micros(time.Now()))
	return err
}

// AgentPolicy returns the agent's policy.
func (q queries) AgentPolicy(ctx context.Context, tenantID int64, agent string) (AgentPolicy, error) {
	p, err := first(ctx, q.q, `SELECT `+agentPolicyCols+` FROM agent_policies WHERE tenant_id = $1 AND agent = $2`,
		[]any{tenantID, agent}, scanAgentPolicy)
	if errors.Is(err, sql.ErrNoRows) {
		return p, notFound(err, "policy of agent %q", agent)
	}
	if err != nil {
		return p, fmt.Errorf("store: policy of agent %q: %w", agent, err)
	}
	return p, nil
}

const agentPolicyCols = `policy, updated_at`

// scanAgentPolicy reads a row of agentPolicyCols.
func scanAgentPolicy(s scanner) (AgentPolicy, error) {
	var (
		p    AgentPolicy
		body string
		at   int64
	)
	if err := s.Scan(&body, &at); err != nil {
		return p, err
	}
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		return p, err
	}
	p.UpdatedAt = fromMicros(at)
	return p, nil
}

// DeleteAgentPolicy removes the agent's policy.
func (q queries) DeleteAgentPolicy(ctx context.Context, tenantID int64, agent string) error {
	n, err := q.q.exec(ctx, `DELETE FROM agent_policies WHERE tenant_id = $1 AND agent = $2`, tenantID, agent)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("policy of agent %q: %w", agent, ErrNotFound)
	}
	return nil
}
