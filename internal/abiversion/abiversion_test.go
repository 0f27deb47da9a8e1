package abiversion

import (
	"encoding/json"
	"testing"

	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/sdk"
)

// bare is a scorer that declares ABI version (0: none) and no optional interface.
func bare(version int) testkit.Scorer {
	return testkit.Scorer{Meta: sdk.Info{Name: "bare", ABIVersion: version}}
}

type configurable struct {
	testkit.Scorer
	configured *json.RawMessage
	closed     *bool
}

func (c configurable) Configure(raw json.RawMessage) error { *c.configured = raw; return nil }
func (c configurable) Close() error                        { *c.closed = true; return nil }

func TestFill(t *testing.T) {
	got := Fill(func() sdk.Scorer { return bare(0) })().Info().ABIVersion
	if got != sdk.ABIVersion {
		t.Errorf("ABIVersion %d, want %d filled in", got, sdk.ABIVersion)
	}
	declared := Fill(func() sdk.Scorer { return bare(7) })()
	if _, wrapped := declared.(*filled); wrapped || declared.Info().ABIVersion != 7 {
		t.Errorf("a declared version is changed or wrapped: %T %d", declared, declared.Info().ABIVersion)
	}
	var raw json.RawMessage
	closed := false
	s := Fill(func() sdk.Scorer { return configurable{bare(0), &raw, &closed} })()
	if err := s.(sdk.Configurer).Configure(json.RawMessage(`{"a":1}`)); err != nil || string(raw) != `{"a":1}` {
		t.Errorf("Configure not forwarded: %v %s", err, raw)
	}
	if err := s.(interface{ Close() error }).Close(); err != nil || !closed {
		t.Errorf("Close not forwarded: %v %v", err, closed)
	}
	if err := Fill(func() sdk.Scorer { return bare(0) })().(sdk.Configurer).Configure(json.RawMessage(`{}`)); err != nil {
		t.Errorf("a scorer without a config accepts the empty one: %v", err)
	}
}
