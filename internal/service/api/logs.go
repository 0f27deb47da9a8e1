package api

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc/codes"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/otlpcheck"
	"github.com/scorekit/scorekit/internal/service/store"
)

// opExportLogs is the operation id of POST /v1/logs.
const opExportLogs = "export-logs"

func (s *Server) registerLogs(errs []int, op func(scope store.Scope, id, method, path, summary string, errs ...int) huma.Operation) {
	o := huma.Operation{
		OperationID: opExportLogs, Method: http.MethodPost, Path: "/v1/logs",
		Summary:      "Take OpenTelemetry log records (OTLP/HTTP): GenAI events joined to their spans' runs",
		Security:     needs(store.ScopeIngest),
		Extensions:   map[string]any{ScopeExtension: string(store.ScopeIngest)},
		Errors:       append(append([]int(nil), errs...), http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusServiceUnavailable),
		MaxBodyBytes: s.opts.MaxTraceBodyBytes + 1,
		Description: "Needs a key with scope `ingest` or `admin`. OTLP/HTTP as for POST /v1/traces, with the same bounds and answers: an ExportLogsServiceRequest as protobuf " +
			"(Content-Type: application/x-protobuf) or JSON (application/json), optionally gzip-compressed, answered with an ExportLogsServiceResponse " +
			"whose partial_success counts the log records not taken and says why (and how many were ignored). GenAI events " +
			"(gen_ai.user.message, gen_ai.choice ...; the event name is the record's, or its event.name attribute) wait for the run of their span " +
			"(by trace and span id) as spans wait for theirs; a record with no span context, or that is not a GenAI event, is ignored and counted. " +
			"Point an exporter at it with OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=https://HOST/v1/logs and OTEL_EXPORTER_OTLP_LOGS_HEADERS=Authorization=Bearer%20KEY " +
			"(or OTEL_EXPORTER_OTLP_ENDPOINT for both signals).",
	}
	huma.Register(s.api, o, s.exportLogs)
	if item := s.api.OpenAPI().Paths[o.Path]; item != nil && item.Post != nil && item.Post.RequestBody != nil {
		rb := item.Post.RequestBody
		rb.Required = false
		rb.Content[contentJSON] = &huma.MediaType{Schema: &huma.Schema{Type: "string", Description: "ExportLogsServiceRequest in OTLP JSON"}}
	}
	huma.Register(s.api, op(store.ScopeRead, "get-ingest", http.MethodGet, "/v1/ingest",
		"What the tenant's OTLP exports brought in: spans and log records received, runs made, what waits, what was dropped and why"), s.getIngest)
}

type ingestOutput struct{ Body service.IngestView }

func (s *Server) getIngest(ctx context.Context, _ *struct{}) (*ingestOutput, error) {
	v, err := s.svc.Ingest(ctx, tenant(ctx))
	if err != nil {
		return nil, s.fail(err)
	}
	return &ingestOutput{Body: v}, nil
}

// exportLogs answers as exportTraces does, for log records.
func (s *Server) exportLogs(ctx context.Context, in *tracesInput) (*tracesOutput, error) {
	ct := contentProtobuf
	switch mt, _, _ := mime.ParseMediaType(in.ContentType); mt {
	case contentJSON:
		ct = contentJSON
	case contentProtobuf:
	default:
		return otlpError(ct, http.StatusUnsupportedMediaType, codes.InvalidArgument, fmt.Sprintf(
			"Content-Type %q: OTLP/HTTP takes application/x-protobuf or application/json", in.ContentType), ""), nil
	}
	body, err := s.decompress(in.ContentEncoding, in.RawBody)
	if err != nil {
		var (
			tl *tooLarge
			ue *unknownEncoding
		)
		switch {
		case errors.As(err, &tl):
			return otlpError(ct, http.StatusRequestEntityTooLarge, codes.InvalidArgument, err.Error(), ""), nil
		case errors.As(err, &ue):
			return otlpError(ct, http.StatusUnsupportedMediaType, codes.InvalidArgument, err.Error(), ""), nil
		}
		return otlpError(ct, http.StatusBadRequest, codes.InvalidArgument, err.Error(), ""), nil
	}
	held, refused := s.checkOTLP(otlpcheck.Logs, ct, in.RawBody, body)
	if refused != nil {
		return refused, nil
	}
	release, ok := s.takeTraceBytes(ctx, min(held, s.opts.MaxTraceBytesInFlight))
	if !ok {
		return otlpError(ct, http.StatusServiceUnavailable, codes.Unavailable, fmt.Sprintf(
			"the server is taking as many OTLP requests as its memory for them holds (serve --otlp-max-in-flight-bytes, %s); "+
				"the exporter retries after the time in Retry-After", mib(s.opts.MaxTraceBytesInFlight)), "2"), nil
	}
	defer release()
	req := plogotlp.NewExportRequest()
	if ct == contentJSON {
		err = req.UnmarshalJSON(body)
	} else {
		err = req.UnmarshalProto(body)
	}
	if err != nil {
		kind := "protobuf"
		if ct == contentJSON {
			kind = "OTLP JSON"
		}
		return otlpError(ct, http.StatusBadRequest, codes.InvalidArgument, fmt.Sprintf(
			"the body is not an ExportLogsServiceRequest in %s (Content-Type %s): %v", kind, ct, err), ""), nil
	}
	res, err := s.svc.IngestLogs(ctx, tenant(ctx), req.Logs())
	if err != nil {
		if p := fromService(err); p != nil && p.Status < 500 {
			return otlpError(ct, p.Status, codes.InvalidArgument, p.Detail, ""), nil
		}
		s.opts.Logger.Error("api: export logs", "err", err)
		return otlpError(ct, http.StatusServiceUnavailable, codes.Unavailable,
			"the log records could not be stored; the exporter retries after the time in Retry-After (the server log has the cause)", "1"), nil
	}
	resp := plogotlp.NewExportResponse()
	if msg := res.Message(); msg != "" {
		resp.PartialSuccess().SetRejectedLogRecords(int64(res.Rejected))
		resp.PartialSuccess().SetErrorMessage(msg)
	}
	var out []byte
	if ct == contentJSON {
		out, err = resp.MarshalJSON()
	} else {
		out, err = resp.MarshalProto()
	}
	if err != nil {
		return nil, s.fail(err)
	}
	return &tracesOutput{Status: http.StatusOK, ContentType: ct, Body: out}, nil
}
