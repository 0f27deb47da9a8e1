// Package host loads scorers and runs them behind a pipeline that makes their results
// trustworthy: it validates runs, configs and results, runs each call under a deadline,
// maps the scorer's native range to [0, 1], applies citation-audit clamps, recomputes the
// weighted overall score, applies the caller's scale and rounding, and computes Passed.
package host

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/scorekit/scorekit/sdk"
)

// Host runs scorers. Its configuration is immutable after New; it is safe for concurrent use.
type Host struct {
	reg     *Registry
	judge   sdk.Judge
	timeout time.Duration
	log     *slog.Logger
}

// Option configures a Host.
type Option func(*Host)

// WithJudge gives scorers that declare the judge or embed capability LLM access.
// Optional. Default is none: such scorers return skipped.
func WithJudge(j sdk.Judge) Option { return func(h *Host) { h.judge = j } }

// WithTimeout sets the deadline of each call. Optional. Default is 30s.
func WithTimeout(d time.Duration) Option { return func(h *Host) { h.timeout = d } }

// WithLogger sets the logger. Optional. Default is slog.Default().
func WithLogger(l *slog.Logger) Option { return func(h *Host) { h.log = l } }

// New returns a host that runs the scorers of reg.
func New(reg *Registry, opts ...Option) *Host {
	h := &Host{reg: reg, timeout: 30 * time.Second, log: slog.Default()}
	for _, o := range opts {
		o(h)
	}
	return h
}

// Registry returns the host's registry.
func (h *Host) Registry() *Registry { return h.reg }

// OpenOptions says how to open a scorer.
type OpenOptions struct {
	// Tenant isolates instances and budgets. Optional. Default is "default".
	Tenant string
	// Config is the scorer's config (JSON object). Optional.
	Config json.RawMessage
	// Scale multiplies the final score, as Mastra's scale option. Optional. Nil means 1;
	// 0 is honoured.
	Scale *float64
}

// Scorer is an opened scorer: a configured backend plus the host pipeline.
type Scorer struct {
	h       *Host
	plugin  Plugin
	info    sdk.Info
	backend Backend
	scale   float64
}

// Open validates opts.Config against the scorer's config schema and opens it for a tenant.
func (h *Host) Open(ctx context.Context, name string, opts OpenOptions) (*Scorer, error) {
	p, err := h.reg.Lookup(name)
	if err != nil {
		return nil, err
	}
	// TODO(host pipeline): validate and merge config.
	b, err := p.Open(ctx, opts.Tenant, opts.Config)
	if err != nil {
		return nil, err
	}
	s := &Scorer{h: h, plugin: p, info: p.Info(), backend: b, scale: 1}
	if opts.Scale != nil {
		s.scale = *opts.Scale
	}
	return s, nil
}

// Info returns the scorer's Info.
func (s *Scorer) Info() sdk.Info { return s.info }

// Runtime names where the scorer runs.
func (s *Scorer) Runtime() string { return s.plugin.Runtime() }

// Score runs the host pipeline on run. It never returns a score for a call that did not
// produce one: failures are StatusFailed with the reason.
func (s *Scorer) Score(ctx context.Context, run sdk.Run) sdk.Result {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.h.timeout)
	defer cancel()
	var judge sdk.Judge
	if s.info.Has(sdk.CapJudge) || s.info.Has(sdk.CapEmbed) {
		judge = s.h.judge
	}
	res, err := s.backend.Score(ctx, &run, judge)
	if err != nil {
		res = sdk.FailedErr(err)
	}
	res.Telemetry.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	res.Telemetry.Runtime = s.plugin.Runtime()
	return res
}

// Close releases the scorer's backend.
func (s *Scorer) Close(ctx context.Context) error { return s.backend.Close(ctx) }
