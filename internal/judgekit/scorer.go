package judgekit

import (
	"context"
	"encoding/json"

	"github.com/scorekit/scorekit/sdk"
)

// Scorer is a built-in judge scorer with its config C: the methods every such scorer has
// alike (Info, Configure over the defaults, ObservesContext) once, around what each has of
// its own (its Info, its defaults, its checks of a config and how it grades a run).
type Scorer[C any] struct {
	name     string
	info     func() sdk.Info
	defaults func() C
	check    func(C) error
	score    func(context.Context, C, sdk.Call) (sdk.Result, error)
	cfg      C
}

var (
	_ sdk.Scorer     = (*Scorer[struct{}])(nil)
	_ sdk.Configurer = (*Scorer[struct{}])(nil)
)

// NewScorer returns the scorer name with its default config: info describes it, defaults
// returns a fresh default config (Configure decodes a config over it), check refuses a
// decoded config the scorer cannot use (a message naming the field, as [OneOf] and [Unit]
// give), and score grades call.Run under the config.
func NewScorer[C any](name string, info func() sdk.Info, defaults func() C, check func(C) error,
	score func(ctx context.Context, cfg C, call sdk.Call) (sdk.Result, error)) *Scorer[C] {
	return &Scorer[C]{name: name, info: info, defaults: defaults, check: check, score: score, cfg: defaults()}
}

// ObservesContext reports true: the scorer's time is spent waiting on the judge, whose calls
// end with their context, and its own work between them is short. A host
// (host.ContextObserver) then does not count its calls against the few it allows native
// code that cannot be stopped, which would cap a worker's judge calls at one per core.
func (*Scorer[C]) ObservesContext() bool { return true }

// Info describes the scorer.
func (s *Scorer[C]) Info() sdk.Info { return s.info() }

// Configure reads the config over the defaults ([DecodeConfig]) and checks it. The host has
// validated it against the schema; Configure checks again so that the scorer is safe to use
// without a host.
func (s *Scorer[C]) Configure(raw json.RawMessage) error {
	cfg := s.defaults()
	if err := DecodeConfig(s.name, raw, &cfg); err != nil {
		return err
	}
	if err := s.check(cfg); err != nil {
		return err
	}
	s.cfg = cfg
	return nil
}

// Score grades call.Run under the config.
func (s *Scorer[C]) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	return s.score(ctx, s.cfg, call)
}
