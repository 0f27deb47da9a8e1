package service_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// badReasonWAT is host/wasm/testdata/ok.wat with a reason holding two bytes that are not
// UTF-8 (\ff \fe) in its JSON result.
const badReasonWAT = `(module
  (memory (export "memory") 1)
  (data (i32.const 1024) "[{\"name\":\"ok\",\"version\":\"1.0.0\",\"abi_version\":1,\"description\":\"WAT test module\",\"range\":{\"min\":0,\"max\":1},\"threshold\":0.5}]")
  (data (i32.const 4096) "{\"status\":\"scored\",\"score\":1,\"reason\":\"a guest says \ff\fe here\"}")
  (func (export "scorekit_v1_alloc") (param i32) (result i32) (i32.const 8192))
  (func (export "scorekit_v1_info") (result i64) (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 123)))
  (func (export "scorekit_v1_configure") (param i32 i32 i32) (result i64) (i64.const 0))
  (func (export "scorekit_v1_score") (param i32 i32 i32 i32) (result i64)
    (i64.or (i64.shl (i64.const 4096) (i64.const 32)) (i64.const 61)))
)`

// A published WASM guest whose reason holds invalid UTF-8: its results are stored with
// U+FFFD in place of the bytes and flagged text_repaired, on both backends, as a run's
// or a judge's repaired text is. Before, decoding the guest's JSON replaced the bytes and
// nothing said so.
func TestGuestReasonWithInvalidUTF8IsFlagged(t *testing.T) {
	dir := t.TempDir()
	wat, wasm := filepath.Join(dir, "bad.wat"), filepath.Join(dir, "bad.wasm")
	if err := os.WriteFile(wat, []byte(badReasonWAT), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("wat2wasm", wat, "-o", wasm).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm (apt-get install wabt): %v\n%s", err, out)
	}
	module, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		svc := servicetest.New(t, dsn, servicetest.Options{}).Service
		tn, err := svc.CreateTenant(ctx, "acme", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Publish(ctx, tn, service.PublishRequest{Name: "guest", Module: module}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.ImportRuns(ctx, tn, append(append(oneRun(t, "bot", 1), '\n'), oneRun(t, "bot", 2)...), service.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
		ev, err := svc.CreateEvaluation(ctx, tn, "bot", service.EvaluationRequest{Limit: 2, Scorers: []string{"guest"}})
		if err != nil {
			t.Fatal(err)
		}
		v, err := svc.WaitEvaluation(ctx, tn, ev.ID, time.Minute, service.ViewOptions{Results: true})
		if err != nil || v.Status != service.StatusDone || len(v.Results) != 2 {
			t.Fatalf("evaluation: %s, %d results, %v", v.Status, len(v.Results), err)
		}
		for _, r := range v.Results {
			if r.Status != "scored" || r.Reason != "a guest says \uFFFD\uFFFD here" || !slices.Contains(r.Flags, jobs.FlagTextRepaired) {
				t.Fatalf("run %s: %+v; want scored, U+FFFD for each bad byte, flagged %s", r.RunID, r, jobs.FlagTextRepaired)
			}
		}
	})
}
