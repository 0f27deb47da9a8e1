package testkit

import (
	"context"

	"github.com/scorekit/scorekit/sdk"
)

// Scorer is a native scorer whose Info and behaviour a test sets: Info returns Meta, and
// Score calls ScoreFunc, or scores every run 1 ("ok") when ScoreFunc is nil.
//
// It implements none of the optional interfaces a host looks for (sdk.Configurer,
// host.ContextObserver, a Close method): a test that needs one embeds Scorer in a type of
// its own that adds it, so that what the host sees is what the test says.
type Scorer struct {
	Meta      sdk.Info
	ScoreFunc func(ctx context.Context, call sdk.Call) (sdk.Result, error)
}

var _ sdk.Scorer = Scorer{}

// Info returns s.Meta.
func (s Scorer) Info() sdk.Info { return s.Meta }

// Score calls s.ScoreFunc, or scores 1 when it is nil.
func (s Scorer) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	if s.ScoreFunc == nil {
		return sdk.Scored(1, "ok"), nil
	}
	return s.ScoreFunc(ctx, call)
}
