// Package host loads scorers and runs them behind a pipeline that makes their results
// trustworthy: it validates runs, configs and results, runs each call under a deadline,
// maps the scorer's native range to [0, 1], applies citation-audit clamps, recomputes the
// weighted overall score, applies the caller's scale and rounding, and computes Passed.
package host

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/scorekit/scorekit/sdk"
)

// Host runs scorers. Its configuration is immutable after New; it is safe for concurrent use.
type Host struct {
	reg       *Registry
	judge     sdk.Judge
	timeout   time.Duration
	runLimits RunLimits
	log       *slog.Logger
	configs   configSchemas
	calls     *calls
}

// Option configures a Host.
type Option func(*Host)

// WithJudge gives scorers that declare the judge or embed capability LLM access.
// Optional. Default is none: such scorers return skipped.
func WithJudge(j sdk.Judge) Option { return func(h *Host) { h.judge = j } }

// WithTimeout sets the deadline of each call. Optional. Default is [DefaultTimeout].
func WithTimeout(d time.Duration) Option { return func(h *Host) { h.timeout = d } }

// WithRunLimits sets the host's limits on the size of a run (see [RunLimits]); zero fields
// keep the defaults. A tenant's limits (OpenOptions.RunLimits) can only lower them.
// Optional. Default is the defaults.
func WithRunLimits(l RunLimits) Option { return func(h *Host) { h.runLimits = l } }

// WithLogger sets the logger. Optional. Default is slog.Default().
func WithLogger(l *slog.Logger) Option { return func(h *Host) { h.log = l } }

// New returns a host that runs the scorers of reg.
func New(reg *Registry, opts ...Option) *Host {
	h := &Host{reg: reg, timeout: DefaultTimeout, log: slog.Default(), calls: newCalls()}
	for _, o := range opts {
		o(h)
	}
	return h
}

// Registry returns the host's registry.
func (h *Host) Registry() *Registry { return h.reg }

// RunLimits returns the host's run limits, defaults filled in: what a caller that reads
// runs (a dataset, a request body) refuses before decoding one.
func (h *Host) RunLimits() RunLimits { return h.runLimits.WithDefaults() }

// OpenOptions says how to open a scorer.
type OpenOptions struct {
	// Tenant isolates instances and budgets. Optional. Default is "default".
	Tenant string
	// Limits are the tenant's ceilings (see [Tenant]). Optional. Default is none beyond
	// the host's and the runtime's own.
	Limits Limits
	// RunLimits are the tenant's limits on the size of a run; they can only lower the
	// host's (see [WithRunLimits]). Optional. Default is the host's.
	RunLimits RunLimits
	// Config is the scorer's config (JSON object). Optional. Fields it leaves out take the
	// scorer's Info.Defaults.
	Config json.RawMessage
	// Scale multiplies the final score and dimensions, as Mastra's scale option. Optional.
	// Nil means 1; 0 is honoured. Passed is decided before scaling.
	Scale *float64
}

// Scorer is an opened scorer: a configured backend plus the host pipeline. It is safe for
// concurrent use when its backend is (native backends are; WASM and process backends pool
// their instances).
type Scorer struct {
	h       *Host
	plugin  Plugin
	info    sdk.Info
	backend Backend
	scale   float64
	plan    plan
	judge   sdk.Judge
	tenant  string
	runtime string
	limits  RunLimits // the host's run limits lowered by the tenant's, defaults filled in
	// replaced names the plugin that replaced the scorer registered under this name.
	replaced string
	inline   bool // the backend observes its context: call it on the caller's goroutine
	// unstoppable: native Go code that does not observe its context; nothing stops it at
	// its deadline, so at most WithMaxOverdue such calls run at once.
	unstoppable bool
}

// Open checks the scorer's Info, merges Info.Defaults under opts.Config, validates the
// result against Info.ConfigSchema and opens the scorer for a tenant with it. An unknown
// or mistyped config field is an error wrapping [ErrInvalidConfig] that names the field
// and the scorer; the scorer sees nothing of such a config.
func (h *Host) Open(ctx context.Context, name string, opts OpenOptions) (*Scorer, error) {
	p, err := h.reg.Lookup(name)
	if err != nil {
		return nil, err
	}
	s, err := h.open(ctx, name, p, opts)
	if err != nil {
		return nil, err
	}
	s.replaced, _ = h.reg.Replaced(name)
	return s, nil
}

// OpenPlugin opens p, a plugin that is not in the host's registry (a tenant's published
// WASM scorer, loaded for that tenant only), as [Host.Open] opens a registered one: the
// same checks, config, limits, pipeline and judge.
func (h *Host) OpenPlugin(ctx context.Context, p Plugin, opts OpenOptions) (*Scorer, error) {
	return h.open(ctx, p.Info().Name, p, opts)
}

func (h *Host) open(ctx context.Context, name string, p Plugin, opts OpenOptions) (*Scorer, error) {
	info := p.Info()
	if _, err := newPlan(&info); err != nil {
		return nil, err
	}
	scale := 1.0
	if opts.Scale != nil {
		scale = *opts.Scale
		if !finite(scale) || scale < 0 {
			return nil, fmt.Errorf("open %s: scale %v: want a finite number >= 0", name, scale)
		}
	}
	if err := h.runLimits.Validate(); err != nil {
		return nil, fmt.Errorf("open %s: host: %w", name, err)
	}
	if err := opts.RunLimits.Validate(); err != nil {
		return nil, fmt.Errorf("open %s: tenant: %w", name, err)
	}
	config, err := h.configure(&info, opts.Config)
	if err != nil {
		return nil, err
	}
	// The range a config sets is the tenant's, read here from the validated config: the
	// scorer, which has not seen it yet, has no say in it.
	if err := configRange(&info, config); err != nil {
		return nil, err
	}
	pl, err := newPlan(&info)
	if err != nil {
		return nil, err
	}
	tenant := opts.Tenant
	if tenant == "" {
		tenant = DefaultTenant
	}
	b, err := p.Open(ctx, Tenant{Name: tenant, Limits: opts.Limits}, config)
	if err != nil {
		return nil, err
	}
	s := &Scorer{h: h, plugin: p, info: info, backend: b, scale: scale, plan: pl, tenant: tenant, runtime: p.Runtime(),
		limits: h.runLimits.WithDefaults().Lower(opts.RunLimits)}
	if o, ok := b.(ContextObserver); ok && o.ObservesContext() {
		s.inline = true
	}
	_, native := b.(*nativeBackend)
	s.unstoppable = native && !s.inline
	if info.Has(sdk.CapJudge) || info.Has(sdk.CapEmbed) {
		s.judge = h.judge
	}
	return s, nil
}

// Info returns the scorer's Info, with the native range its config set (see
// sdk.Info.RangeConfig).
func (s *Scorer) Info() sdk.Info { return s.info }

// Runtime names where the scorer runs.
func (s *Scorer) Runtime() string { return s.runtime }

// Close releases the scorer's backend.
func (s *Scorer) Close(ctx context.Context) error { return s.backend.Close(ctx) }
