package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/sdk"
)

// stackMargin is how many times the deepest stack the project's own guests reach must fit
// in DefaultStackKiB, so that they run unchanged under the default with room to spare.
const stackMargin = 4

// TestStackPeak runs the project's guests (every built-in scorer, the C example, the Go
// test guest) on every 20th run of the public corpus with the counter's lowest value kept
// (stackInstrumentation.peak), and checks that the deepest stack any instance reached, from its
// start to its last call, fits stackMargin times in the default limit. It logs each
// scorer's peak, and the length of wazero's stack behind the score export: what the
// host really allocated, at most twice what the calls used.
func TestStackPeak(t *testing.T) {
	ctx := context.Background()
	dir, err := corpus.Dir()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := corpus.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var runs []sdk.Run
	for i := 0; i < len(cases); i += 20 {
		runs = append(runs, cases[i].Run)
	}
	e := newEngineWith(t, Options{stack: stackInstrumentation{peak: true}})
	guests := []struct {
		path   string
		limits host.Limits
	}{
		{goGuest(t, "builtin", builtinPkg), host.Limits{MemoryMiB: 128}}, // as mk/wasm.mk's manifest
		{cGuest(t), host.Limits{}},
		{goGuest(t, "goguest", goGuestPkg), host.Limits{}},
	}
	// The judge scorers meet a judge that echoes the prompt and one that answers JSON
	// with the fields they read.
	judges := []sdk.Judge{fakeJudge{}, jsonJudge{}}
	worst := 0.0
	for _, g := range guests {
		ps, err := e.Load(ctx, manifestFor(t, g.path, g.limits))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			config := p.Info().Defaults
			if c, ok := equivalenceConfigs[p.Info().Name]; ok {
				config = json.RawMessage(c)
			}
			hb, err := p.Open(ctx, host.Tenant{Name: "t"}, config)
			if err != nil {
				t.Fatal(err)
			}
			b := hb.(*backend)
			for i := range runs {
				r := runs[i]
				if p.Info().Name == "tester" {
					r = sdk.Run{Input: "fine", Output: r.Output}
				}
				_, err := b.Score(ctx, &r, judges[i%len(judges)])
				var se *sdk.Error
				if errors.As(err, &se) && se.Code == sdk.CodeLimitExceeded {
					t.Fatalf("%s, run %s: %v", p.Info().Name, r.ID, err)
				}
			}
			peak, native := 0.0, 0
			b.pool.mu.Lock()
			for _, inst := range b.pool.idle {
				peak = max(peak, inst.stackPeak())
				if v := reflect.ValueOf(inst.score).Elem().FieldByName("stack"); v.IsValid() {
					native = max(native, v.Len())
				}
			}
			b.pool.mu.Unlock()
			t.Logf("%-20s deepest stack %6.1f KiB as counted; wazero's stack %3d KiB", p.Info().Name, peak, native>>10)
			worst = max(worst, peak)
			hb.Close(ctx)
		}
	}
	t.Logf("deepest %.1f KiB over %d runs; the default limit is %d KiB", worst, len(runs), DefaultStackKiB)
	if worst*stackMargin > DefaultStackKiB {
		t.Errorf("the project's guests reach %.1f KiB of stack: the default of %d KiB leaves less than %dx room", worst, DefaultStackKiB, stackMargin)
	}
}

// jsonJudge answers every prompt with a JSON verdict holding the fields the built-in judge
// scorers read, nested as they nest them.
type jsonJudge struct{}

func (jsonJudge) Complete(_ context.Context, reqs []sdk.CompletionRequest) ([]sdk.CompletionResponse, error) {
	const answer = `{"verdict": "yes", "choice": "yes", "score": 1, "reason": "it does", "statements": ["one", "two"],
		"verdicts": [{"statement": "one", "verdict": "yes", "reason": "stated"}, {"statement": "two", "verdict": "no", "reason": "not stated"}],
		"questions": ["what?"], "claims": [{"claim": "one", "supported": true}]}`
	out := make([]sdk.CompletionResponse, len(reqs))
	for i := range out {
		out[i].Content = answer
	}
	return out, nil
}

func (jsonJudge) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return fakeJudge{}.Embed(ctx, texts)
}
