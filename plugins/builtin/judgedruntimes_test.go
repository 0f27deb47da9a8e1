package builtin_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/sdk"
)

// scorerVariant is a built-in judge scorer with a config ("" for its defaults).
type scorerVariant struct {
	scorer, config string
}

// key names the variant's results: the scorer, then its config.
func (v scorerVariant) key() string { return v.scorer + v.config }

// judgedRecord is what a runtime gave for one variant and run: the result, and the
// requests that reached the judge.
type judgedRecord struct {
	outcome  outcome
	requests string
}

// judgedInEveryRuntime scores each variant on its scorer's runs natively, holds the
// results to checks (keyed "<variant key> <run id>"; each check must have a result), and
// then holds the WASM and process runtimes (the artifacts make test builds) to the same
// results and the same judge requests, steps included. The test judge answers by rules,
// a new server and broker per run so each request reaches the endpoint and is seen.
func judgedInEveryRuntime(t *testing.T, variants []scorerVariant, runs map[string][]sdk.Run, rules []judgetest.Rule, checks map[string]func(outcome) bool) {
	t.Helper()
	ctx := context.Background()
	quiet := host.WithLogger(slog.New(slog.DiscardHandler))
	score := func(t *testing.T, reg *host.Registry) map[string]judgedRecord {
		out := map[string]judgedRecord{}
		for _, v := range variants {
			for _, run := range runs[v.scorer] {
				srv := judgetest.New(rules...)
				b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "judge-test", EmbeddingModel: "embed-test", MaxRetries: -1})
				if err != nil {
					t.Fatal(err)
				}
				s, err := host.New(reg, quiet, host.WithJudge(b), host.WithTimeout(matrixDeadline)).Open(ctx, v.scorer, host.OpenOptions{Config: json.RawMessage(v.config)})
				if err != nil {
					t.Fatalf("open %s %s: %v", v.scorer, v.config, err)
				}
				res := s.Score(ctx, run)
				reqs, _ := json.Marshal(srv.Requests())
				out[v.key()+" "+run.ID] = judgedRecord{outcomeOf(res), string(reqs)}
				s.Close(ctx)
				b.Close()
				srv.Close()
			}
		}
		return out
	}

	native := host.NewRegistry()
	registered := map[string]bool{}
	for _, v := range variants {
		if registered[v.scorer] {
			continue
		}
		registered[v.scorer] = true
		p, ok := nativeBuiltin(v.scorer)
		if !ok {
			t.Fatalf("%s is not a built-in scorer", v.scorer)
		}
		if err := native.Register(p, false); err != nil {
			t.Fatal(err)
		}
	}
	want := score(t, native)
	for key, ok := range checks {
		r, found := want[key]
		if !found {
			t.Errorf("no result for %s", key)
			continue
		}
		if (r.outcome.Status == sdk.StatusScored) != (r.outcome.Score != nil) || !ok(r.outcome) {
			t.Errorf("native %s: %s", key, show(r.outcome))
		}
	}

	for _, rt := range []string{host.RuntimeWASM, host.RuntimeProcess} {
		t.Run(rt, func(t *testing.T) {
			got := score(t, loadBuiltins(t, rt))
			for key, w := range want {
				g := got[key]
				if !reflect.DeepEqual(g.outcome, w.outcome) {
					t.Errorf("%s %s:\n got  %s\n want %s (native)", rt, key, show(g.outcome), show(w.outcome))
				}
				if g.requests != w.requests {
					t.Errorf("%s %s: the judge got other requests:\n got  %.300s\n want %.300s (native)", rt, key, g.requests, w.requests)
				}
			}
		})
	}
}
