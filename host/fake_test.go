package host

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/scorekit/scorekit/sdk"
)

// fake is a scorer whose Info and behaviour each test sets. It records the config it was
// given and counts its calls.
type fake struct {
	info   sdk.Info
	score  func(ctx context.Context, call sdk.Call) (sdk.Result, error)
	config *json.RawMessage
	calls  *atomic.Int32
}

var (
	_ sdk.Scorer     = (*fake)(nil)
	_ sdk.Configurer = (*fake)(nil)
)

func (f *fake) Info() sdk.Info { return f.info }

func (f *fake) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	f.calls.Add(1)
	return f.score(ctx, call)
}

func (f *fake) Configure(raw json.RawMessage) error {
	*f.config = append(json.RawMessage(nil), raw...)
	return nil
}

// fixed returns a Score func that always returns res.
func fixed(res sdk.Result) func(context.Context, sdk.Call) (sdk.Result, error) {
	return func(context.Context, sdk.Call) (sdk.Result, error) { return res, nil }
}

// info returns a valid Info for a fake called name.
func info(name string) sdk.Info {
	return sdk.Info{Name: name, Version: "0.1.0", ABIVersion: sdk.ABIVersion, Description: "test scorer", Threshold: 0.5}
}

// rig is a host with one fake scorer registered.
type rig struct {
	host   *Host
	fake   *fake
	config json.RawMessage
	calls  atomic.Int32
}

func newRig(t testing.TB, inf sdk.Info, score func(context.Context, sdk.Call) (sdk.Result, error), opts ...Option) *rig {
	t.Helper()
	r := &rig{}
	r.fake = &fake{info: inf, score: score, config: &r.config, calls: &r.calls}
	reg := NewRegistry()
	if err := reg.Register(Native(func() sdk.Scorer { return r.fake }), false); err != nil {
		t.Fatal(err)
	}
	opts = append([]Option{WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	r.host = New(reg, opts...)
	return r
}

func (r *rig) open(t testing.TB, opts OpenOptions) *Scorer {
	t.Helper()
	s, err := r.host.Open(context.Background(), r.fake.info.Name, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func ptr[T any](v T) *T { return &v }

func rules(adj []sdk.Adjustment) []string {
	out := make([]string, len(adj))
	for i, a := range adj {
		out[i] = a.Rule + ":" + a.Target
	}
	return out
}
