package service_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/redact"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

// TestTypedRunsMeetImportRules: the runs OTLP makes go to the store typed, never as
// JSONL, and meet every rule an import applies, with the same answers: the contract, the
// host's run limits (metadata's depth, the output, the run's size), the tenant's
// max_run_bytes, an agent, text no database stores repaired, the tenant's redaction, a
// duplicate id (in the batch and stored), a deleted run's tombstone, and the agent's
// arrival policy. The same runs imported as JSONL by a tenant alike are answered and
// stored the same.
func TestTypedRunsMeetImportRules(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		h := host.New(servicetest.Registry(t, nil), host.WithRunLimits(host.RunLimits{MaxOutputBytes: 1000, MaxMetadataDepth: 4}))
		svc := servicetest.New(t, dsn, servicetest.Options{Host: h, NoWorkers: true}).Service
		policy := store.Policy{MaxRunBytes: 3000, Redact: redact.Config{Kinds: []string{"email"}}}
		deep := map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{"d": []any{"e"}}}}}
		runs := []sdk.Run{
			{ID: "ok", Agent: "bot", Input: "mail me at ana@example.com", Output: "done", Metadata: map[string]any{"model": "m"}},
			{ID: "deep", Agent: "bot", Input: "q", Output: "a", Metadata: deep},
			{ID: "long", Agent: "bot", Input: "q", Output: strings.Repeat("o", 1001)},
			{ID: "big", Agent: "bot", Input: strings.Repeat("i", 3000), Output: "a"},
			{ID: "anon", Input: "q", Output: "a"},
			{ID: "nul", Agent: "bot", Input: "q", Output: "a\x00b"},
			{ID: "ok", Agent: "bot", Input: "another", Output: "run"},
			{ID: "gone", Agent: "bot", Input: "q", Output: "a"},
			{ID: "empty", Agent: "bot", Input: "q", Output: "a", Context: []sdk.Passage{{ID: "1"}}},
			{ID: "known", Agent: "bot", Input: "q", Output: "a"},
		}
		want := map[string]string{ // id -> status, or the rejection's words
			"ok":    service.RunStored,
			"deep":  "metadata nests 5 or more levels deep, above the limit of 4 (run_limits.max_metadata_depth)",
			"long":  "output is 1001 bytes, above the limit of 1000 bytes (run_limits.max_output_bytes)",
			"big":   "above the limit of 3000 bytes per run (max_run_bytes of the tenant's policy)",
			"anon":  `missing "agent"`,
			"nul":   service.RunStored,
			"gone":  service.RunDeleted,
			"empty": "context[0] (id \"1\") has empty text",
			"known": service.RunDuplicate,
		}
		answers := map[string][]service.ImportedRun{}
		for _, path := range []string{"typed", "jsonl"} {
			tn, err := svc.CreateTenant(ctx, path, policy)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.SetAgentPolicy(ctx, tn, "bot", store.AgentPolicy{Scorers: []string{"prescreen"}, SampleRate: 1}); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.ImportRuns(ctx, tn, []byte(`{"id": "gone", "agent": "bot", "input": "q", "output": "a"}
{"id": "known", "agent": "bot", "input": "q", "output": "a"}`), service.ImportOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.DeleteRun(ctx, tn, "test", "gone"); err != nil {
				t.Fatal(err)
			}
			var res service.ImportResult
			if path == "typed" {
				res, err = service.StoreTypedRuns(ctx, svc, tn, runs)
			} else {
				var body []byte
				for _, r := range runs {
					b, _ := json.Marshal(r)
					body = append(append(body, b...), '\n')
				}
				res, err = svc.ImportRuns(ctx, tn, body, service.ImportOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			answers[path] = res.Runs
			for i, ir := range res.Runs {
				w := want[ir.ID]
				if i == 6 {
					w = service.RunDuplicate // the second "ok"
				}
				switch w {
				case service.RunStored, service.RunDeleted, service.RunDuplicate:
					if ir.Status != w {
						t.Errorf("%s: run %d (%s): %+v; want %s", path, i+1, ir.ID, ir, w)
					}
				default:
					if ir.Status != service.RunRejected || !strings.Contains(ir.Error, w) {
						t.Errorf("%s: run %d (%s): %+v; want rejected: %s", path, i+1, ir.ID, ir, w)
					}
				}
			}
			if r := res.Runs[0]; r.Redactions["email"] != 1 {
				t.Errorf("%s: run ok: redactions %v; want one email", path, r.Redactions)
			}
			if r := res.Runs[5]; !r.Repaired {
				t.Errorf("%s: run nul: not repaired: %+v", path, r)
			}
			if len(res.Evaluations) != 1 {
				t.Errorf("%s: the stored runs joined evaluations %v; want the agent's one arrival evaluation", path, res.Evaluations)
			}
			rv, err := svc.Run(ctx, tn, "ok", false)
			if err != nil || strings.Contains(string(rv.Run), "ana@example.com") || !strings.Contains(string(rv.Run), "[redacted:email]") {
				t.Errorf("%s: stored run ok: %s, %v; want the address redacted", path, rv.Run, err)
			}
			rv, err = svc.Run(ctx, tn, "nul", false)
			if err != nil || !rv.Repaired || strings.Contains(string(rv.Run), `\u0000`) {
				t.Errorf("%s: stored run nul: %s (repaired %v), %v; want U+FFFD for the NUL", path, rv.Run, rv.Repaired, err)
			}
		}
		for i := range runs {
			a, b := answers["typed"][i], answers["jsonl"][i]
			if a.Status != b.Status || a.Error != b.Error || a.Repaired != b.Repaired || a.ContentDiffers != b.ContentDiffers {
				t.Errorf("run %d: typed %+v, imported %+v; want the same answer", i+1, a, b)
			}
		}
	})
}
