package servicetest

import (
	"encoding/json"
	"testing"

	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/sdk"
)

// bare is a scorer with no optional interface.
var bare = testkit.Scorer{Meta: sdk.Info{Name: "probe", Version: "1.0.0", ABIVersion: sdk.ABIVersion}}

// full is a scorer with every optional interface the host looks for, recording each use.
type full struct {
	testkit.Scorer
	config *json.RawMessage
	closed *bool
}

func (f full) Configure(c json.RawMessage) error { *f.config = c; return nil }
func (full) ObservesContext() bool               { return true }
func (f full) Close() error                      { *f.closed = true; return nil }

// Wrapped must keep every optional interface of the scorer it wraps: a wrapper that drops
// host.ContextObserver sends the scorer to a watchdog goroutine, one that drops
// sdk.Configurer runs it on its defaults whatever the test configured.
func TestWrappedKeepsOptionalInterfaces(t *testing.T) {
	var (
		config json.RawMessage
		closed bool
	)
	for _, tt := range []struct {
		name     string
		inner    sdk.Scorer
		observes bool
		config   string // what the inner scorer got
		closed   bool
	}{
		{"every optional interface", full{Scorer: bare, config: &config, closed: &closed}, true, `{"k":1}`, true},
		{"none", bare, false, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			config, closed = nil, false
			w := &Wrapped{Scorer: tt.inner, Version: "2.0.0"}
			if err := w.Configure(json.RawMessage(`{"k":1}`)); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if w.ObservesContext() != tt.observes || string(config) != tt.config || closed != tt.closed {
				t.Fatalf("observes %v, config %q, closed %v; want %v, %q, %v", w.ObservesContext(), config, closed, tt.observes, tt.config, tt.closed)
			}
			if w.Info().Version != "2.0.0" {
				t.Fatalf("version %s, want 2.0.0", w.Info().Version)
			}
		})
	}
}
