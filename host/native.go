package host

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/scorekit/scorekit/sdk"
)

// Factory constructs a fresh Go scorer.
type Factory func() sdk.Scorer

// Native wraps a Go scorer factory as a Plugin that runs in the host's process.
func Native(f Factory) Plugin {
	return &nativePlugin{factory: f, info: f().Info()}
}

type nativePlugin struct {
	factory Factory
	info    sdk.Info
}

var _ Plugin = (*nativePlugin)(nil)

func (p *nativePlugin) Info() sdk.Info  { return p.info }
func (p *nativePlugin) Runtime() string { return RuntimeNative }

func (p *nativePlugin) Open(_ context.Context, _ Tenant, config json.RawMessage) (Backend, error) {
	s := p.factory()
	if c, ok := s.(sdk.Configurer); ok {
		if err := c.Configure(config); err != nil {
			// As in the other runtimes, a config the scorer refuses is an invalid config.
			return nil, fmt.Errorf("configure %s: %w: %w", p.info.Name, err, ErrInvalidConfig)
		}
	}
	return &nativeBackend{s: s}, nil
}

func (p *nativePlugin) Close(context.Context) error { return nil }

type nativeBackend struct{ s sdk.Scorer }

func (b *nativeBackend) Score(ctx context.Context, run *sdk.Run, judge sdk.Judge) (sdk.Result, error) {
	return b.s.Score(ctx, sdk.Call{Run: *run, Judge: judge})
}

// ObservesContext reports whether the scorer says it returns promptly once its context is
// done (see ContextObserver).
func (b *nativeBackend) ObservesContext() bool {
	o, ok := b.s.(ContextObserver)
	return ok && o.ObservesContext()
}

func (b *nativeBackend) Close(context.Context) error {
	if c, ok := b.s.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
