package wasm

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/plugins/builtin"
	"github.com/scorekit/scorekit/sdk"
)

const builtinPkg = "github.com/scorekit/scorekit/plugins/builtin/plugin"

// TestEquivalence holds every built-in scorer, prescreen first among them, to the same
// results native and as WASM on the public corpus (status, score, dimensions, skipped
// dimensions, flags, reason and error). The judge scorers run without a judge here, so
// they agree on skipping; the judge path through the host is TestJudge's.
func TestEquivalence(t *testing.T) {
	dir, err := corpus.Dir()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := corpus.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 1000 {
		t.Fatalf("corpus has %d runs, want at least 1,000", len(cases))
	}
	e := newEngine(t, nil)
	ps, err := e.Load(context.Background(), manifestFor(t, goGuest(t, "builtin", builtinPkg), host.Limits{}))
	if err != nil {
		t.Fatal(err)
	}
	wasm := map[string]host.Plugin{}
	for _, p := range ps {
		wasm[p.Info().Name] = p
	}
	if _, ok := wasm["prescreen"]; !ok {
		t.Fatalf("the builtin artifact carries %v, want prescreen among them", names(ps))
	}
	ctx := context.Background()
	for _, f := range builtin.Factories() {
		native := host.Native(f)
		info := native.Info()
		t.Run(info.Name, func(t *testing.T) {
			w, ok := wasm[info.Name]
			if !ok {
				t.Fatalf("scorer %s is missing from the WASM artifact", info.Name)
			}
			if !reflect.DeepEqual(canonical(t, info), canonical(t, w.Info())) {
				t.Fatalf("Info differs:\nnative %+v\nwasm   %+v", info, w.Info())
			}
			config := info.Defaults
			if c, ok := equivalenceConfigs[info.Name]; ok {
				config = json.RawMessage(c)
			}
			nb, err := native.Open(ctx, host.Tenant{Name: "t"}, config)
			if err != nil {
				t.Fatal(err)
			}
			wb, err := w.Open(ctx, host.Tenant{Name: "t"}, config)
			if err != nil {
				t.Fatal(err)
			}
			defer wb.Close(ctx)
			// prescreen runs on every case; the other scorers on an even sample of 1,000,
			// which keeps the suite fast.
			stride := 1
			if info.Name != "prescreen" {
				stride = max(1, len(cases)/1000)
			}
			// Judge scorers also run with a judge that echoes its prompt, on a sample: the
			// same requests must reach it and the same answers must come back.
			judges := []sdk.Judge{nil}
			if info.Has(sdk.CapJudge) || info.Has(sdk.CapEmbed) {
				judges = append(judges, fakeJudge{})
			}
			// The same runs one call each and in batches of ABI v2 (host.BatchBackend),
			// where the judge changes from run to run within a batch.
			var items []host.BatchItem
			var wants []string
			for n, i := 0, 0; i < len(cases); n, i = n+1, i+stride {
				run := cases[i].Run
				judge := judges[n%len(judges)]
				want, werr := nb.Score(ctx, &run, judge)
				got, gerr := wb.Score(ctx, &run, judge)
				if werr != nil || gerr != nil {
					t.Fatalf("run %s: native error %v, wasm error %v", run.ID, werr, gerr)
				}
				if a, b := comparable(want), comparable(got); !reflect.DeepEqual(a, b) {
					t.Fatalf("run %s differs:\nnative %s\nwasm   %s", run.ID, a, b)
				}
				items = append(items, host.BatchItem{Run: &cases[i].Run, Judge: judge})
				wants = append(wants, comparable(want))
			}
			for start := 0; start < len(items); start += 100 {
				batch := items[start:min(start+100, len(items))]
				wb.(host.BatchBackend).ScoreBatch(ctx, batch, 0)
				for j, it := range batch {
					if it.Err != nil {
						t.Fatalf("run %s in a batch: %v", it.Run.ID, it.Err)
					}
					if got := comparable(it.Result); got != wants[start+j] {
						t.Fatalf("run %s in a batch differs:\nnative %s\nwasm   %s", it.Run.ID, wants[start+j], got)
					}
				}
			}
		})
	}
}

// equivalenceConfigs configure the built-ins that take no defaults: a rubric has no
// criteria of its own.
var equivalenceConfigs = map[string]string{
	"rubric": `{"instructions": "Does the output answer the input?", "choices": {"yes": 1, "partly": 0.5, "no": 0}}`,
}

// comparable is the part of a result both runtimes must agree on, as text that prints
// readably on a mismatch.
func comparable(r sdk.Result) string {
	return fmt.Sprintf("status=%s score=%v dims=%v skipped=%v flags=%v reason=%q error=%v",
		r.Status, r.Value(), r.Dimensions, r.SkippedDimensions, r.Flags, r.Reason, r.Error)
}

// canonical is v after a JSON round trip, as the WASM side sees it.
func canonical(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func names(ps []host.Plugin) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Info().Name
	}
	return out
}
