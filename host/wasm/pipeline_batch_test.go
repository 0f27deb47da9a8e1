package wasm

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// TestScorerBatch: the host's ScoreBatch, through the whole pipeline, gives a WASM
// scorer's runs the results Score gives them one by one, and a run past the host's
// timeout fails with the host's timeout alone.
func TestScorerBatch(t *testing.T) {
	ctx := context.Background()
	ps, err := newEngine(t, nil).Load(ctx, manifestFor(t, goGuest(t, "goguest", goGuestPkg), host.Limits{}))
	if err != nil {
		t.Fatal(err)
	}
	reg := host.NewRegistry()
	for _, p := range ps {
		if err := reg.Register(p, false); err != nil {
			t.Fatal(err)
		}
	}
	h := host.New(reg, host.WithTimeout(300*time.Millisecond))
	s, err := h.Open(ctx, "tester", host.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	inputs := []string{"a", "b", "spin", "c", "panic", "d", ""}
	runs := make([]sdk.Run, len(inputs))
	for i, in := range inputs {
		runs[i] = sdk.Run{ID: in, Input: in, Output: strings.Repeat("w ", i)}
	}
	runs[len(runs)-1].Output = "" // an invalid run: refused before the guest
	got := s.ScoreBatch(ctx, runs)
	for i := range runs {
		want := s.Score(ctx, runs[i])
		g := got[i]
		if g.Telemetry.Runtime != host.RuntimeWASM || g.Telemetry.DurationMS <= 0 {
			t.Errorf("run %d: telemetry %+v, want the runtime and a duration", i, g.Telemetry)
		}
		g.Telemetry, want.Telemetry = sdk.Telemetry{}, sdk.Telemetry{}
		if inputs[i] == "panic" { // the guest's stack trace names addresses
			g.Error.Message, want.Error.Message = firstLine(g.Error.Message), firstLine(want.Error.Message)
			g.Reason, want.Reason = firstLine(g.Reason), firstLine(want.Reason)
		}
		if !reflect.DeepEqual(g, want) {
			t.Errorf("run %d (%q): batch %+v\none by one %+v", i, inputs[i], g, want)
		}
	}
	if e := got[2].Error; e == nil || e.Code != sdk.CodeTimeout || !strings.Contains(e.Message, "host's 300ms limit") {
		t.Fatalf("the spin: %+v, want the host's timeout", got[2])
	}
}
