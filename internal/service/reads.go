package service

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/sdk"
)

// RunView is a stored run with every result it ever had, oldest first.
type RunView struct {
	ID         string          `json:"id"`
	Agent      string          `json:"agent"`
	Time       time.Time       `json:"time"`
	ReceivedAt time.Time       `json:"received_at"`
	Run        json.RawMessage `json:"run"`
	// Repaired is true when the run was stored with U+FFFD in place of text no database
	// stores (a NUL, invalid UTF-8, a lone surrogate).
	Repaired bool `json:"repaired,omitempty"`
	// Redacted is true when the tenant's redaction rules replaced text in the run before
	// it was stored; Redactions counts the replacements by kind.
	Redacted   bool           `json:"redacted,omitempty"`
	Redactions map[string]int `json:"redactions,omitempty"`
	Results    []ResultView   `json:"results"`
}

// Run returns the tenant's run id with its results.
func (s *Service) Run(ctx context.Context, t store.Tenant, id string, steps bool) (RunView, error) {
	r, err := s.tenantRun(ctx, t, id)
	if err != nil {
		return RunView{}, err
	}
	rs, err := s.st.RunResults(ctx, t.ID, r.PK)
	if err != nil {
		return RunView{}, err
	}
	v := RunView{ID: r.ID, Agent: r.Agent, Time: r.Time, ReceivedAt: r.ReceivedAt, Run: r.Body, Repaired: r.Repaired,
		Redacted: len(r.Redactions) > 0, Redactions: r.Redactions, Results: make([]ResultView, 0, len(rs))}
	for _, res := range rs {
		v.Results = append(v.Results, resultView(res, steps))
	}
	return v, nil
}

// RunSummary is a run in a listing.
type RunSummary struct {
	ID         string          `json:"id"`
	Agent      string          `json:"agent"`
	Time       time.Time       `json:"time"`
	ReceivedAt time.Time       `json:"received_at"`
	Run        json.RawMessage `json:"run"`
	// Repaired is as in RunView.
	Repaired bool `json:"repaired,omitempty"`
}

// RunsPage is one page of an agent's runs, newest first.
type RunsPage struct {
	Runs []RunSummary `json:"runs"`
	// Next continues the listing (pass it as cursor); empty on the last page.
	Next string `json:"next,omitempty"`
}

// MaxPage caps a listing's page.
const MaxPage = 1000

func checkPage(limit int) error {
	if limit < 1 || limit > MaxPage {
		return invalid("limit %d: want 1 to %d", limit, MaxPage)
	}
	return nil
}

// Runs lists the agent's runs, newest first, limit per page after cursor.
func (s *Service) Runs(ctx context.Context, t store.Tenant, agent string, limit int, cursor string) (RunsPage, error) {
	runs, next, err := s.runPage(ctx, t, agent, limit, cursor)
	if err != nil {
		return RunsPage{}, err
	}
	if len(runs) == 0 && cursor == "" {
		if has, err := s.st.HasRuns(ctx, t.ID, agent); err == nil && !has {
			return RunsPage{}, &Error{kind: ErrNotFound, msg: fmt.Sprintf("agent %q has no runs", agent)}
		}
	}
	p := RunsPage{Next: next, Runs: make([]RunSummary, 0, len(runs))}
	for _, r := range runs {
		p.Runs = append(p.Runs, RunSummary{ID: r.ID, Agent: r.Agent, Time: r.Time, ReceivedAt: r.ReceivedAt, Run: r.Body, Repaired: r.Repaired})
	}
	return p, nil
}

// runPage reads a page of the agent's runs, newest first, limit after cursor (the Next
// of the previous page), and the Next of this one ("" on the last page).
func (s *Service) runPage(ctx context.Context, t store.Tenant, agent string, limit int, cursor string) ([]store.Run, string, error) {
	if err := checkPage(limit); err != nil {
		return nil, "", err
	}
	rq := store.RunQuery{Agent: agent, Limit: limit + 1}
	if cursor != "" {
		after, err := decodeRunCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		rq.After = &after
	}
	runs, err := s.st.Runs(ctx, t.ID, rq)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(runs) > limit {
		runs = runs[:limit]
		last := runs[len(runs)-1]
		next = base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%d:%d", last.Time.UnixMicro(), last.PK)))
	}
	return runs, next, nil
}

func decodeRunCursor(c string) (store.Run, error) {
	bad := invalid("cursor %q: pass the next value of the previous page as it was", c)
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return store.Run{}, bad
	}
	ts, pk, ok := strings.Cut(string(b), ":")
	us, err1 := strconv.ParseInt(ts, 10, 64)
	id, err2 := strconv.ParseInt(pk, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return store.Run{}, bad
	}
	return store.Run{PK: id, Time: time.UnixMicro(us)}, nil
}

// AgentSummary is an agent in a listing.
type AgentSummary struct {
	Name    string    `json:"name"`
	Runs    int64     `json:"runs"`
	LastRun time.Time `json:"last_run"`
}

// AgentsPage is one page of agents, by name.
type AgentsPage struct {
	Agents []AgentSummary `json:"agents"`
	Next   string         `json:"next,omitempty"`
}

// Agents lists the tenant's agents by name, limit per page after cursor.
func (s *Service) Agents(ctx context.Context, t store.Tenant, limit int, cursor string) (AgentsPage, error) {
	if err := checkPage(limit); err != nil {
		return AgentsPage{}, err
	}
	after := ""
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return AgentsPage{}, invalid("cursor %q: pass the next value of the previous page as it was", cursor)
		}
		after = string(b)
	}
	as, err := s.st.Agents(ctx, t.ID, after, limit+1)
	if err != nil {
		return AgentsPage{}, err
	}
	var p AgentsPage
	if len(as) > limit {
		as = as[:limit]
		p.Next = base64.RawURLEncoding.EncodeToString([]byte(as[len(as)-1].Name))
	}
	p.Agents = make([]AgentSummary, 0, len(as))
	for _, a := range as {
		p.Agents = append(p.Agents, AgentSummary{Name: a.Name, Runs: a.Runs, LastRun: a.LastRun})
	}
	return p, nil
}

// SetAgentPolicy checks and stores an agent's on-arrival policy.
func (s *Service) SetAgentPolicy(ctx context.Context, t store.Tenant, agent string, p store.AgentPolicy) (store.AgentPolicy, error) {
	if err := checkAgent(agent); err != nil {
		return p, err
	}
	if p.SampleRate < 0 || p.SampleRate > 1 {
		return p, invalid("sample_rate %v: want 0 to 1 (the share of arriving runs evaluated)", p.SampleRate)
	}
	if len(p.Scorers) == 0 {
		return p, invalid(`scorers: name at least one scorer ("prescreen" needs no judge)`)
	}
	if err := checkWindow(p.Window); err != nil {
		return p, err
	}
	if _, err := s.spec(ctx, s.st, t, p.Scorers, p.Config, p.Tiered); err != nil {
		return p, err
	}
	judge, err := s.judgeRoute(p.Judge)
	if err != nil {
		return p, err
	}
	p.Judge = judge
	if err := s.st.SetAgentPolicy(ctx, t.ID, agent, p); err != nil {
		return p, err
	}
	if err := s.RefreshInsights(ctx, t, agent); err != nil { // the window may have changed
		return p, err
	}
	return s.AgentPolicy(ctx, t, agent)
}

// AgentPolicy returns an agent's policy.
func (s *Service) AgentPolicy(ctx context.Context, t store.Tenant, agent string) (store.AgentPolicy, error) {
	p, err := s.st.AgentPolicy(ctx, t.ID, agent)
	return p, notFound(err, "agent %q has no policy", agent)
}

// DeleteAgentPolicy removes an agent's policy: its new runs are no longer evaluated on
// arrival.
func (s *Service) DeleteAgentPolicy(ctx context.Context, t store.Tenant, agent string) error {
	if err := s.st.DeleteAgentPolicy(ctx, t.ID, agent); err != nil {
		return notFound(err, "agent %q has no policy", agent)
	}
	return s.RefreshInsights(ctx, t, agent) // the window is the default again

}

// Score scores one run with one scorer for t, without storing anything (POST /v1/score):
// the host's, or the tenant's own (name or name@N). The scorer is opened once per
// (tenant, scorer, config) and reused. judge, when not nil, is where its judge calls go
// (an endpoint the operator allows and a model there).
//
// The run is redacted by the tenant's rules first, as a stored run is: nothing they
// redact reaches a scorer or a judge this way either. It was checked where it came in
// (host.DecodeCheckedRun); a run redaction changed is decoded and checked again by the
// same decoder.
func (s *Service) Score(ctx context.Context, t store.Tenant, scorer string, run host.CheckedRun, config json.RawMessage, judge *broker.Route) (sdk.Result, error) {
	route, err := s.judgeRoute(judge)
	if err != nil {
		return sdk.Result{}, err
	}
	red, err := s.redactor(t)
	if err != nil {
		return sdk.Result{}, err
	}
	if red != nil {
		b, err := json.Marshal(run.Run())
		if err != nil {
			return sdk.Result{}, err
		}
		b, counts, err := red.JSON(b, redactKeep...)
		if err != nil {
			return sdk.Result{}, err
		}
		if len(counts) > 0 {
			if run, err = host.DecodeCheckedRun(b); err != nil {
				return sdk.Result{}, fmt.Errorf("score: redacted run: %w", err)
			}
		}
	}
	r, err := s.sc.Resolve(ctx, t, scorer)
	if err != nil {
		return sdk.Result{}, s.scorerError(t, scorer, err)
	}
	sc, release, err := s.sc.GetResolved(ctx, t, r, config)
	if err != nil {
		return sdk.Result{}, s.scorerError(t, scorer, err)
	}
	defer release()
	if err := s.prepareJudge(ctx, t); err != nil {
		return sdk.Result{}, err
	}
	if route != nil {
		ctx = broker.WithRoute(ctx, *route)
	}
	return sc.ScoreChecked(ctx, run), nil
}

// ScorerInfos lists the Info of every scorer t may run, with its runtime: the host's,
// then the tenant's own published scorers with their versions. A host scorer the tenant
// replaced (a promoted version of its own under that name) is listed once, as the
// tenant's.
func (s *Service) ScorerInfos(ctx context.Context, t store.Tenant) ([]ScorerInfo, error) {
	reg := s.sc.Host().Registry()
	vs, err := s.st.PublishedVersions(ctx, t.ID, "")
	if err != nil {
		return nil, err
	}
	own, names := groupBy(vs, func(v store.ScorerVersion) string { return v.Name })
	mine := map[string]ScorerInfo{}
	for _, name := range names {
		promoted, err := s.st.PromotedVersion(ctx, t.ID, name)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		si := ScorerInfo{Source: SourceTenant, Promoted: promoted}
		for _, v := range own[name] {
			pv := publishedView(v, v.Version == promoted)
			if pv.Info != nil && (v.Version == promoted || si.Info.Name == "") {
				si.Info = *pv.Info
				si.Runtime = "wasm"
				if p, err := reg.Lookup(v.Base); v.Kind == store.KindConfigured && err == nil {
					si.Runtime = p.Runtime()
				}
			}
			pv.Info = nil
			si.Versions = append(si.Versions, pv)
		}
		mine[name] = si
	}
	var out []ScorerInfo
	for _, n := range s.ScorerNames(t) {
		if si, ok := mine[n]; ok && si.Promoted > 0 {
			continue // replaced for this tenant: listed below
		}
		p, err := reg.Lookup(n)
		if err != nil {
			return nil, err
		}
		out = append(out, ScorerInfo{Info: p.Info(), Runtime: p.Runtime(), Source: SourceHost})
	}
	for _, name := range names {
		out = append(out, mine[name])
	}
	return out, nil
}

// Sources of a scorer in ScorerInfo.
const (
	SourceHost   = "host"
	SourceTenant = "tenant"
)

// ScorerInfo is a scorer's Info and where it runs.
type ScorerInfo struct {
	sdk.Info
	Runtime string `json:"runtime"`
	// Source says whose scorer it is: the service's, or the tenant's own.
	Source string `json:"source" enum:"host,tenant"`
	// Promoted is the version the plain name follows (the tenant's scorers; 0: none yet).
	Promoted int `json:"promoted,omitempty"`
	// Versions are the tenant's published versions, oldest first.
	Versions []PublishedVersion `json:"versions,omitempty"`
}
