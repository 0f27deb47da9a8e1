package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/scorekit/scorekit/internal/service/agreement"
	"github.com/scorekit/scorekit/internal/service/insights"
	"github.com/scorekit/scorekit/internal/service/store"
)

// ErrGate: the tenant's agreement gate refused a promotion; the message gives both
// versions' agreement with the labels, with their intervals and the number of runs, and
// how to override.
var ErrGate = errors.New("agreement gate")

// GateNoCurrent is the gate's decision when there is no version to compare with: the
// first promotion of a name that replaces no scorer of the service. The promotion goes
// through.
const GateNoCurrent agreement.Decision = "no_current_version"

// MaxOverrideBytes caps an override's reason.
const MaxOverrideBytes = 2000

// PromoteOptions are what a promotion carries besides the version.
type PromoteOptions struct {
	// Override is the reason a promotion the gate refuses goes through anyway. Optional;
	// ignored when the gate accepts or the tenant has no gate.
	Override string
	// Actor is who promotes (the key's id, KeyActor); recorded with an override.
	Actor string
}

// GateOverride is a refused promotion forced through: why, who, when.
type GateOverride struct {
	Reason string    `json:"reason" doc:"Why the refused promotion went through, as the request gave it."`
	By     string    `json:"by" doc:"Who overrode: the key's id."`
	At     time.Time `json:"at"`
}

// PromotionGate is what the tenant's agreement gate said of a promotion.
type PromotionGate struct {
	// Candidate is the version promoted ("name@N"); Current the one it replaces
	// ("name@N", or "name (VERSION)" for the service's scorer it replaces).
	Candidate string `json:"candidate"`
	Current   string `json:"current,omitempty"`
	// Report is the gate's decision with both figures, their intervals and the runs.
	Report agreement.GateReport `json:"report"`
	// Override is set when the gate refused and the promotion went through anyway.
	Override *GateOverride `json:"override,omitempty"`
	// against is the promoted version the gate compared with (0: none); the promotion
	// is recorded only if it still is.
	against int
}

// PromotionRecord is one promotion of a version, in its listing.
type PromotionRecord struct {
	PromotedAt time.Time      `json:"promoted_at"`
	Gate       *PromotionGate `json:"gate,omitempty" doc:"What the agreement gate said, when the tenant requires it."`
}

// gate measures the candidate version n of name and the version it would replace on
// the tenant's labels; nil when the tenant does not require the gate or n is already
// the promoted version.
func (s *Service) gate(ctx context.Context, t store.Tenant, v PublishedVersion) (*PromotionGate, error) {
	if !t.Policy.PromotionGate {
		return nil, nil
	}
	g := &PromotionGate{Candidate: v.Ref}
	current := ""
	promoted, err := s.st.PromotedVersion(ctx, t.ID, v.Name)
	switch {
	case err == nil && promoted == v.Version:
		return nil, nil
	case err == nil:
		current, g.Current, g.against = strconv.Itoa(promoted), fmt.Sprintf("%s@%d", v.Name, promoted), promoted
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	case v.Replaces:
		// The service's own scorer of the name is what the tenant runs now.
		sc, release, err := s.sc.Get(ctx, t, v.Name, nil)
		if err != nil {
			return nil, fmt.Errorf("gate: the service's scorer %q that %s replaces: %w", v.Name, v.Ref, err)
		}
		current = sc.Info().Version
		release()
		g.Current = fmt.Sprintf("%s (%s)", v.Name, current)
	}
	if current == "" {
		g.Report = agreement.GateReport{Decision: GateNoCurrent, Reason: fmt.Sprintf("no version of %s is promoted and it replaces no scorer of the service: nothing to compare with", v.Name)}
		return g, nil
	}
	pf, sc, err := s.VersionTriples(ctx, t, "", v.Name, strconv.Itoa(v.Version), current)
	if err != nil {
		return nil, err
	}
	// Pass/fail labels are the gate's unless the runs carry more score labels.
	if len(sc) > len(pf) {
		g.Report, err = agreement.GateScores(sc, agreement.GateOptions{})
	} else {
		g.Report, err = agreement.GatePassFail(pf, agreement.GateOptions{})
	}
	if err != nil {
		return nil, err
	}
	if g.Report.Metric == "kappa" {
		if err := s.recordKappa(ctx, t, v.Name, strconv.Itoa(v.Version), g.Report.Candidate); err != nil {
			return nil, err
		}
		if err := s.recordKappa(ctx, t, v.Name, current, g.Report.Current); err != nil {
			return nil, err
		}
	}
	if g.Report.Decision == agreement.NotEnoughLabels {
		g.Report.Reason += "; the promotion goes through without the gate"
	}
	return g, nil
}

// refusal is the error of a promotion the gate refused, with both figures.
func refusal(g *PromotionGate) error {
	r := g.Report
	return &Error{kind: ErrGate, msg: fmt.Sprintf("promotion of %s refused by the agreement gate: on the same %d labelled runs, %s (candidate) has %s %s and %s (current) %s %s; "+
		"the difference %+.3f has a 95%% paired bootstrap interval of %+.3f to %+.3f, all below 0: worse than chance explains. "+
		"Label more runs, fix the version, or send {\"override\": \"the reason\"} to promote it anyway (the override is recorded)",
		g.Candidate, r.Runs, g.Candidate, r.Metric, r.Candidate, g.Current, r.Metric, r.Current, r.Difference.Value, r.Difference.Low, r.Difference.High)}
}

// checkOverride checks an override's reason.
func checkOverride(reason string) (string, error) {
	if len(reason) > MaxOverrideBytes {
		return "", invalid("override: %d bytes; say why in at most %d", len(reason), MaxOverrideBytes)
	}
	return strings.TrimSpace(reason), nil
}

// promotionRecords reads the promotions of name per version, newest first.
func (s *Service) promotionRecords(ctx context.Context, t store.Tenant, name string) (map[int][]PromotionRecord, error) {
	ps, err := s.st.Promotions(ctx, t.ID, name)
	if err != nil {
		return nil, err
	}
	out := map[int][]PromotionRecord{}
	for _, p := range ps {
		r := PromotionRecord{PromotedAt: p.PromotedAt}
		if len(p.Gate) > 0 {
			r.Gate = &PromotionGate{}
			if err := json.Unmarshal(p.Gate, r.Gate); err != nil {
				return nil, fmt.Errorf("promotions of %s: stored gate: %w", name, err)
			}
		}
		out[p.Version] = append(out[p.Version], r)
	}
	return out, nil
}

// recordKappa keeps a scorer version's measured Cohen's kappa with the tenant's labels
// for the insights: a version under insights.MinKappa raises no critical insight. A kappa
// that is undefined or measured on fewer than agreement.MinGateRuns runs is not kept: it
// says too little to silence an alert.
func (s *Service) recordKappa(ctx context.Context, t store.Tenant, scorer, version string, e agreement.Estimate) error {
	if !e.Defined() || e.N < agreement.MinGateRuns || version == "" {
		return nil
	}
	a := insights.Agreement{Scorer: scorer, Version: version, Kappa: e.Value, Runs: e.N}
	return s.st.InTx(ctx, func(tx *store.Tx) error {
		set, err := tx.InsightSettings(ctx, t.ID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(set.Kappas, func(k insights.Agreement) bool { return k.Scorer == scorer && k.Version == version })
		switch {
		case i < 0:
			set.Kappas = append(set.Kappas, a)
		case set.Kappas[i] == a:
			return nil
		default:
			set.Kappas[i] = a
		}
		return tx.SetInsightSettings(ctx, t.ID, set)
	})
}
