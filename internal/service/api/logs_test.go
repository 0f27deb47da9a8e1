package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/scorekit/scorekit/internal/otellibstest"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

// TestOTLPLogs: POST /v1/logs takes the OpenTelemetry OpenAI instrumentation's log
// records as its exporter sends them, protobuf or JSON, plain or gzip, with the keys and
// answers of /v1/traces: its spans and records make the three runs once the traces are
// complete, and GET /v1/ingest says so. Mastra's log line, which has no span, is
// answered as ignored in the partial success; a body that is not a request is 400 with
// a google.rpc.Status; a wrong key is 401.
func TestOTLPLogs(t *testing.T) {
	for _, enc := range []string{"json", "protobuf"} {
		t.Run(enc, func(t *testing.T) {
			h := newHarness(t, filepath.Join(t.TempDir(), "scorekit.db"), servicetest.Options{NoWorkers: true}, "acme")
			c := otellibstest.Load(t, "otel-openai")
			ct := "application/json"
			if enc == "protobuf" {
				c, _ = otellibstest.LoadProtobuf(t, "otel-openai")
				ct = "application/x-protobuf"
			}
			for _, body := range c.RawTraces {
				if r := postTraces(t, h.srv.URL, h.keys["acme"], ct, "", body); r.status != 200 {
					t.Fatalf("traces: %d %s", r.status, r.body)
				}
			}
			for _, body := range c.RawLogs {
				r := postOTLP(t, h.srv.URL+"/v1/logs", h.keys["acme"], ct, "gzip", gzipped(t, body))
				if r.status != 200 || r.header.Get("Content-Type") != ct {
					t.Fatalf("logs: %d %s", r.status, r.body)
				}
				resp := plogotlp.NewExportResponse()
				var err error
				if enc == "json" {
					err = resp.UnmarshalJSON(r.body)
				} else {
					err = resp.UnmarshalProto(r.body)
				}
				if err != nil || resp.PartialSuccess().RejectedLogRecords() != 0 || resp.PartialSuccess().ErrorMessage() != "" {
					t.Fatalf("logs answer %q, %v", r.body, err)
				}
			}
			if _, err := h.env.Service.CompleteTraces(context.Background(), time.Now().Add(service.DefaultTraceQuiet+time.Second)); err != nil {
				t.Fatal(err)
			}
			tn := tenantNamed(t, h, "acme")
			runs := storedRunsOf(t, h, tn.ID, "calendar-agent")
			names := c.SpanNames()
			otellibstest.CheckCalendarRuns(t, runs, func(id string) string { return names[id] }, otellibstest.RunSpans["otel-openai"])

			r := h.as(t, "acme").do("GET", "/v1/ingest", nil)
			var v service.IngestView
			if r.status != 200 || json.Unmarshal(r.body, &v) != nil || v.Runs != 3 || v.Spans != 8 || v.LogRecords != 19 {
				t.Fatalf("GET /v1/ingest: %d %s", r.status, r.body)
			}
		})
	}

	h := newHarness(t, filepath.Join(t.TempDir(), "scorekit.db"), servicetest.Options{NoWorkers: true}, "acme")
	mastra := otellibstest.Load(t, "mastra")
	r := postOTLP(t, h.srv.URL+"/v1/logs", h.keys["acme"], "application/json", "", mastra.RawLogs[0])
	var resp map[string]map[string]any
	if r.status != 200 || json.Unmarshal(r.body, &resp) != nil || !strings.Contains(resp["partialSuccess"]["errorMessage"].(string), "1 of 1 log records ignored") {
		t.Fatalf("a log line with no span: %d %s", r.status, r.body)
	}
	r = postOTLP(t, h.srv.URL+"/v1/logs", h.keys["acme"], "application/x-protobuf", "", []byte{0xff, 0xff})
	var st rpcstatus.Status
	if r.status != http.StatusBadRequest || proto.Unmarshal(r.body, &st) != nil || !strings.Contains(st.GetMessage(), "ExportLogsServiceRequest") {
		t.Fatalf("not a request: %d %s", r.status, r.body)
	}
	if r = postOTLP(t, h.srv.URL+"/v1/logs", "sk_wrong", "application/json", "", mastra.RawLogs[0]); r.status != http.StatusUnauthorized {
		t.Fatalf("a wrong key: %d %s", r.status, r.body)
	}
}

// postOTLP posts body to url (an OTLP endpoint) as an exporter does.
func postOTLP(t *testing.T, url, key, ct, encoding string, body []byte) reply {
	t.Helper()
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", ct)
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// storedRunsOf returns the tenant's runs of agent, decoded.
func storedRunsOf(t *testing.T, h *harness, tenantID int64, agent string) []sdk.Run {
	t.Helper()
	rows, err := h.env.Store.Runs(context.Background(), tenantID, store.RunQuery{Agent: agent, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var runs []sdk.Run
	for _, r := range rows {
		var run sdk.Run
		if err := json.Unmarshal(r.Body, &run); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run)
	}
	return runs
}
