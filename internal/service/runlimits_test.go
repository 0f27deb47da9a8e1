package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// deepMetadata is the metadata of the dashboard's repro: two chains of n nested arrays.
func deepMetadata(n int) string {
	chain := strings.Repeat("[", n) + strings.Repeat("]", n)
	return `{"a": ` + chain + `, "b": ` + chain + `}`
}

// TestImportAppliesRunLimits: a run over one of the host's run limits is rejected at
// import with its line and the limit named, and the runs around it are stored; before,
// the service applied none of them and stored metadata 9,000 levels deep.
func TestImportAppliesRunLimits(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		h := host.New(servicetest.Registry(t, nil), host.WithRunLimits(host.RunLimits{MaxOutputBytes: 1000, MaxPassages: 3}))
		svc := servicetest.New(t, dsn, servicetest.Options{Host: h, NoWorkers: true}).Service
		// Runs up to the host's 8 MiB, so the 4 MB line meets the depth check, not the size.
		tn, err := svc.CreateTenant(ctx, "acme", store.Policy{MaxRunBytes: 8 << 20})
		if err != nil {
			t.Fatal(err)
		}
		body := strings.Join([]string{
			`{"id": "ok", "agent": "bot", "input": "q", "output": "a"}`,
			`{"id": "deep", "agent": "bot", "input": "q", "output": "a", "metadata": ` + deepMetadata(9000) + `}`,
			`{"id": "long", "agent": "bot", "input": "q", "output": "` + strings.Repeat("o", 1001) + `"}`,
			`{"id": "many", "agent": "bot", "input": "q", "output": "a", "context": ["1", "2", "3", "4"]}`,
			`{"id": "hostile", "agent": "bot", "input": "q", "output": "a", "extra": ` + strings.Repeat("[", 2_000_000) + strings.Repeat("]", 2_000_000) + `}`,
			`{"id": "ok2", "agent": "bot", "input": "q", "output": "` + strings.Repeat("o", 1000) + `", "context": ["1", "2", "3"], "metadata": {"a": {"b": [1]}}}`,
		}, "\n")
		res, err := svc.ImportRuns(ctx, tn, []byte(body), service.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Stored != 2 || res.Rejected != 4 {
			t.Fatalf("stored %d, rejected %d; want 2 and 4: %+v", res.Stored, res.Rejected, res.Runs)
		}
		want := map[int]string{
			2: "metadata nests 33 or more levels deep, above the limit of 32 (run_limits.max_metadata_depth)",
			3: "output is 1001 bytes, above the limit of 1000 bytes (run_limits.max_output_bytes)",
			4: "context has 4 passages, above the limit of 3 (run_limits.max_passages)",
			5: `"extra" nests 38 or more levels deep, above the limit of 37 (run_limits.max_metadata_depth`,
		}
		for _, r := range res.Runs {
			w, ok := want[r.Line]
			if !ok {
				if r.Status != service.RunStored {
					t.Errorf("line %d: %+v; want stored", r.Line, r)
				}
				continue
			}
			if r.Status != service.RunRejected || !strings.Contains(r.Error, w) {
				t.Errorf("line %d: %+v; want rejected naming %q", r.Line, r, w)
			}
			// Refused before it was decoded or after, a run's answer names its id.
			if id := map[int]string{2: "deep", 3: "long", 4: "many", 5: "hostile"}[r.Line]; r.ID != id {
				t.Errorf("line %d: id %q; want %q", r.Line, r.ID, id)
			}
		}
		for _, id := range []string{"deep", "long", "many", "hostile"} {
			if _, err := svc.Run(ctx, tn, id, false); !errors.Is(err, service.ErrNotFound) {
				t.Errorf("run %s over a limit was stored: %v", id, err)
			}
		}
		// The runs OTLP makes pass the same check: an agent span whose output is over the
		// limit makes no run, and the request says why.
		tr, err := svc.IngestTraces(ctx, tn, traceOf(9, spanSpec{1, 0, "invoke_agent helper", "invoke_agent", 1500}))
		if err != nil || tr.Runs.Stored != 0 || tr.Rejected != 1 || !strings.Contains(tr.Message(), "run_limits.max_output_bytes") {
			t.Fatalf("OTLP run over a limit: %+v, %v", tr, err)
		}
	})
}

// TestImportRunBytesNamesItsSetting: the service's own cap on a run's JSON (the tenant's
// policy's max_run_bytes, else the service's) is named as such, and the host's
// max_run_bytes applies where it is the lower.
func TestImportRunBytesNamesItsSetting(t *testing.T) {
	ctx := context.Background()
	h := host.New(servicetest.Registry(t, nil), host.WithRunLimits(host.RunLimits{MaxRunBytes: 2000}))
	svc := servicetest.New(t, t.TempDir()+"/scorekit.db", servicetest.Options{Host: h, NoWorkers: true}).Service
	small, _ := svc.CreateTenant(ctx, "small", store.Policy{MaxRunBytes: 1000})
	big, _ := svc.CreateTenant(ctx, "big", store.Policy{MaxRunBytes: 1 << 20})
	run := []byte(`{"id": "r", "agent": "bot", "input": "q", "output": "` + strings.Repeat("o", 1500) + `"}`)
	for _, c := range []struct {
		tn   store.Tenant
		want string
	}{
		{small, "above the limit of 1000 bytes per run (max_run_bytes of the tenant's policy)"},
		{big, ""},
	} {
		res, err := svc.ImportRuns(ctx, c.tn, run, service.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r := res.Runs[0]; c.want == "" && r.Status != service.RunStored || c.want != "" && !strings.Contains(r.Error, c.want) {
			t.Errorf("tenant %s: %+v; want %q", c.tn.Name, r, c.want)
		}
	}
	res, err := svc.ImportRuns(ctx, big, []byte(`{"id": "r2", "agent": "bot", "input": "q", "output": "`+strings.Repeat("o", 2500)+`"}`), service.ImportOptions{})
	if err != nil || !strings.Contains(res.Runs[0].Error, "the run is 2.5 KiB, above the limit of 2.0 KiB (run_limits.max_run_bytes)") {
		t.Errorf("over the host's limit: %+v, %v", res.Runs, err)
	}
}
