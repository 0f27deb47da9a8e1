package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/otlpcheck"
	"github.com/scorekit/scorekit/internal/service/store"
)

// opExportLogs is the operation id of POST /v1/logs.
const opExportLogs = "export-logs"

func (s *Server) registerLogs(errs []int, op func(scope store.Scope, id, method, path, summary string, errs ...int) huma.Operation) {
	s.registerOTLP(errs, "ExportLogsServiceRequest", huma.Operation{
		OperationID: opExportLogs, Path: "/v1/logs",
		Summary: "Take OpenTelemetry log records (OTLP/HTTP): GenAI events joined to their spans' runs",
		Description: "Needs a key with scope `ingest` or `admin`. OTLP/HTTP as for POST /v1/traces, with the same bounds and answers: an ExportLogsServiceRequest as protobuf " +
			"(Content-Type: application/x-protobuf) or JSON (application/json), optionally gzip-compressed, answered with an ExportLogsServiceResponse " +
			"whose partial_success counts the log records not taken and says why (and how many were ignored). GenAI events " +
			"(gen_ai.user.message, gen_ai.choice ...; the event name is the record's, or its event.name attribute) wait for the run of their span " +
			"(by trace and span id) as spans wait for theirs; a record with no span context, or that is not a GenAI event, is ignored and counted. " +
			"Point an exporter at it with OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=https://HOST/v1/logs and OTEL_EXPORTER_OTLP_LOGS_HEADERS=Authorization=Bearer%20KEY " +
			"(or OTEL_EXPORTER_OTLP_ENDPOINT for both signals).",
	}, s.exportLogs)
	huma.Register(s.api, op(store.ScopeRead, "get-ingest", http.MethodGet, "/v1/ingest",
		"What the tenant's OTLP exports brought in: spans and log records received, runs made, what waits, what was dropped and why"), s.getIngest)
}

func (s *Server) getIngest(ctx context.Context, _ *struct{}) (*bodyOutput[service.IngestView], error) {
	v, err := s.svc.Ingest(ctx, tenant(ctx))
	return reply(s, v, err)
}

// exportLogs answers as exportTraces does, for log records.
func (s *Server) exportLogs(ctx context.Context, in *tracesInput) (*tracesOutput, error) {
	return exportOTLP(ctx, s, in, otlpSignal[plogotlp.ExportRequest]{
		check: otlpcheck.Logs, request: "ExportLogsServiceRequest", records: "log records", logAs: "api: export logs",
		newRequest: plogotlp.NewExportRequest,
		take: func(ctx context.Context, req plogotlp.ExportRequest) (otlpMessage, error) {
			res, err := s.svc.IngestLogs(ctx, tenant(ctx), req.Logs())
			if err != nil {
				return nil, err
			}
			resp := plogotlp.NewExportResponse()
			if msg := res.Message(); msg != "" {
				resp.PartialSuccess().SetRejectedLogRecords(int64(res.Rejected))
				resp.PartialSuccess().SetErrorMessage(msg)
			}
			return resp, nil
		},
	})
}
