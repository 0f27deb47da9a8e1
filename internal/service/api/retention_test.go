package api_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// A tenant deletes a run, an agent and itself through the API, exporting first; each
// step is in its audit log under its key's id, and another tenant sees none of it.
func TestDeletionAndExportOverHTTP(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		h := newHarness(t, dsn, servicetest.Options{}, "acme", "other")
		c, other := h.as(t, "acme"), h.as(t, "other")
		runs := []byte(`{"id": "r1", "agent": "bot", "input": "q1", "output": "a1"}
{"id": "r2", "agent": "bot", "input": "q2", "output": "a2"}
{"id": "r3", "agent": "helper", "input": "q3", "output": "a3"}`)
		for _, cl := range []client{c, other} {
			if r := cl.do("POST", "/v1/runs", runs); r.status != 200 {
				t.Fatalf("import: %d %s", r.status, r.body)
			}
		}
		evaluate(t, c, "bot", `{"limit": 2}`)

		if r := other.do("DELETE", "/v1/runs/nope", nil); r.status != http.StatusNotFound {
			t.Fatalf("deleting an unknown run: %d %s", r.status, r.body)
		}
		r := c.do("DELETE", "/v1/runs/r1", nil)
		var d store.Deleted
		r.json(t, &d)
		if r.status != 200 || d.Runs != 1 || d.Results != 1 {
			t.Fatalf("delete run: %d %s", r.status, r.body)
		}
		r = c.do("POST", "/v1/runs", runs)
		var imp service.ImportResult
		r.json(t, &imp)
		if imp.Deleted != 1 || imp.Runs[0].Status != service.RunDeleted || imp.Stored != 0 {
			t.Fatalf("re-import after deletion: %s", r.body)
		}
		if r := c.do("GET", "/v1/runs/r1", nil); r.status != http.StatusNotFound {
			t.Fatalf("the deleted run: %d", r.status)
		}
		if r := other.do("GET", "/v1/runs/r1", nil); r.status != 200 {
			t.Fatalf("the other tenant's run of the same id: %d", r.status)
		}
		if r := c.do("DELETE", "/v1/agents/helper", nil); r.status != 200 {
			t.Fatalf("delete agent: %d %s", r.status, r.body)
		}

		// The export: every line a {kind, data}, the runs left with their results, the
		// audit log with the deletions, and the end line counting them.
		r = c.do("GET", "/v1/export", nil)
		if r.status != 200 || r.header.Get("Content-Type") != "application/x-ndjson" {
			t.Fatalf("export: %d %s %s", r.status, r.header.Get("Content-Type"), r.body)
		}
		kinds := map[string]int{}
		var end map[string]int
		var audit []store.AuditEntry
		sc := bufio.NewScanner(bytes.NewReader(r.body))
		for sc.Scan() {
			var line struct {
				Kind string          `json:"kind"`
				Data json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("export line %q: %v", sc.Text(), err)
			}
			kinds[line.Kind]++
			switch line.Kind {
			case service.ExportEnd:
				_ = json.Unmarshal(line.Data, &end)
			case store.ExportAudit:
				var e store.AuditEntry
				_ = json.Unmarshal(line.Data, &e)
				audit = append(audit, e)
			}
		}
		if kinds[store.ExportRun] != 1 || kinds[store.ExportResult] != 1 || kinds[store.ExportTenant] != 1 || kinds[store.ExportKey] != 1 ||
			kinds[store.ExportEvaluation] != 1 || end[store.ExportRun] != 1 || kinds[service.ExportEnd] != 1 {
			t.Fatalf("export kinds %v, end %v:\n%s", kinds, end, r.body)
		}
		actor := service.KeyActor(h.keys["acme"])
		want := []string{store.AuditExport, store.AuditDeleteAgent, store.AuditDeleteRun}
		if len(audit) != len(want) {
			t.Fatalf("audit log in the export: %+v", audit)
		}
		for i, e := range audit {
			if e.Action != want[i] || e.Actor != actor {
				t.Fatalf("audit entry %d: %+v; want %s by %s", i, e, want[i], actor)
			}
		}
		var log struct{ Entries []store.AuditEntry }
		other.do("GET", "/v1/audit", nil).json(t, &log)
		if len(log.Entries) != 0 {
			t.Fatalf("the other tenant reads %+v in its audit log", log.Entries)
		}

		if r := c.do("DELETE", "/v1/tenant", nil); r.status != 200 {
			t.Fatalf("delete tenant: %d %s", r.status, r.body)
		}
		if r := c.do("GET", "/v1/agents", nil); r.status != http.StatusUnauthorized {
			t.Fatalf("the deleted tenant's key: %d; want 401", r.status)
		}
		if r := other.do("GET", "/v1/runs/r1", nil); r.status != 200 {
			t.Fatalf("the other tenant after the deletion: %d", r.status)
		}
	})
}
