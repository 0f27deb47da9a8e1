package service_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/otellibstest"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

// TestOTelLibsMakeRuns: each library's captured export, sent to the service as its
// exporter sent it (spans, then log records; for the protobuf captures log records
// first), makes its three runs on both backends, as otellibstest.CheckCalendarRuns reads
// them: the agent spans' runs as they arrive, the others once their traces are complete
// (CompleteTraces, which the service's job runs). The OpenTelemetry instrumentation's
// content exists only in its log records. The ingest view counts what came and the runs
// made; Mastra's log record without a span is counted as ignored.
func TestOTelLibsMakeRuns(t *testing.T) {
	servicetest.Backends(t, func(t *testing.T, dsn string) {
		env := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true})
		ctx := context.Background()
		for _, name := range otellibstest.Names() {
			captures := []otellibstest.Capture{otellibstest.Load(t, name)}
			if pb, ok := otellibstest.LoadProtobuf(t, name); ok {
				captures = append(captures, pb)
			}
			for _, c := range captures {
				enc := "json"
				if c.Protobuf {
					enc = "protobuf"
				}
				t.Run(name+"/"+enc, func(t *testing.T) {
					tn, err := env.Service.CreateTenant(ctx, name+"-"+enc, store.Policy{})
					if err != nil {
						t.Fatal(err)
					}
					sendLogs := func() {
						for _, ld := range c.Logs {
							res, err := env.Service.IngestLogs(ctx, tn, ld)
							if err != nil || res.Rejected != 0 {
								t.Fatalf("logs: %+v, %v", res, err)
							}
						}
					}
					if c.Protobuf {
						sendLogs()
					}
					spans := 0
					for _, td := range c.Traces {
						spans += td.SpanCount()
						res, err := env.Service.IngestTraces(ctx, tn, td)
						if err != nil || res.Rejected != 0 {
							t.Fatalf("traces: %+v, %v", res, err)
						}
					}
					if !c.Protobuf {
						sendLogs()
					}
					if _, err := env.Service.CompleteTraces(ctx, time.Now().Add(service.DefaultTraceQuiet+time.Second)); err != nil {
						t.Fatal(err)
					}
					runs := storedRuns(t, env, tn, "calendar-agent")
					names := c.SpanNames()
					otellibstest.CheckCalendarRuns(t, runs, func(id string) string { return names[id] }, otellibstest.RunSpans[name])

					v, err := env.Service.Ingest(ctx, tn)
					if err != nil || v.Spans != int64(spans) || v.Runs != 3 || v.WaitingSpans != 0 || v.WaitingLogRecords != 0 {
						t.Errorf("ingest view %+v, %v; want %d spans, 3 runs, nothing waiting", v, err, spans)
					}
					if name == "mastra" && v.Ignored[service.IgnoredNoSpanContext] != 1 {
						t.Errorf("Mastra's log line without a span: ignored %v, want 1 no_span_context", v.Ignored)
					}
					for _, d := range v.Dropped {
						t.Errorf("dropped %+v", d)
					}
				})
			}
		}
	})
}

// storedRuns returns the tenant's runs of agent, decoded.
func storedRuns(t *testing.T, env *servicetest.Env, tn store.Tenant, agent string) []sdk.Run {
	t.Helper()
	rows, err := env.Store.Runs(context.Background(), tn.ID, store.RunQuery{Agent: agent, Limit: 100})
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
