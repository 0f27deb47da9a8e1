package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/scorekit/scorekit/internal/service/otlpcheck"
	"github.com/scorekit/scorekit/internal/service/store"
)

// Defaults of the OTLP bounds in Options.
const (
	// DefaultMaxTraceBodyBytes is Options.MaxTraceBodyBytes's default: the OpenTelemetry
	// Collector's OTLP receiver takes 20 MiB.
	DefaultMaxTraceBodyBytes = 20 << 20
	// DefaultMaxTraceRequestBytes is Options.MaxTraceRequestBytes's default. What
	// exporters send costs 5 to 10 times its protobuf size while it is taken (a
	// Collector's batch of 8192 spans of 50 attributes, 15 MiB, about 160 MiB as
	// estimated), so a body within DefaultMaxTraceBodyBytes stays under it; what goes
	// over it is empty spans or attributes sent by the hundred thousand (20 MiB of them
	// cost 0.5 to 2 GiB).
	DefaultMaxTraceRequestBytes = 256 << 20
	// DefaultMaxTraceBytesInFlight is Options.MaxTraceBytesInFlight's default: room for
	// four requests at the largest at once, or hundreds of an SDK's batches (512 spans,
	// a few MiB each).
	DefaultMaxTraceBytesInFlight = 1 << 30
	// DefaultTraceBudgetWait is Options.TraceBudgetWait's default: well within an
	// exporter's timeout (OTEL_EXPORTER_OTLP_TIMEOUT, 10s).
	DefaultTraceBudgetWait = 5 * time.Second
)

// What taking a request's spans holds beside the decoded request (otlpcheck's
// estimate): a copy of it, at most (the spans of agents' traces are copied into the
// traces runs are made from; spans kept are encoded again), for each span the records
// IngestTraces keeps of it (ids as text, maps by id: traceSpanBytes), and what any
// request holds (the handler, the runs' import: traceRequestBytes). The body
// decompressed counts twice: once as read, once as the runs and kept spans made from it.
// BenchmarkTraceMemory measures the peak heap of requests beside the estimate.
const (
	ingestCopies      = 1
	traceSpanBytes    = 768
	traceRequestBytes = 1 << 20
)

// opExportTraces is the operation id of POST /v1/traces.
const opExportTraces = "export-traces"

// The OTLP/HTTP content types.
const (
	contentProtobuf = "application/x-protobuf"
	contentJSON     = "application/json"
)

func (s *Server) registerTraces(errs []int) {
	s.registerOTLP(errs, "ExportTraceServiceRequest", huma.Operation{
		OperationID: opExportTraces, Path: "/v1/traces",
		Summary: "Take OpenTelemetry traces (OTLP/HTTP): GenAI agents' spans become runs",
		Description: "Needs a key with scope `ingest` or `admin`. OTLP/HTTP as the OpenTelemetry specification defines it: an ExportTraceServiceRequest as protobuf " +
			"(Content-Type: application/x-protobuf) or JSON (application/json), optionally gzip-compressed (Content-Encoding: gzip), " +
			"answered with an ExportTraceServiceResponse in the same encoding, whose partial_success counts the spans not taken and says why; " +
			"errors are a google.rpc.Status in the same encoding. Point an exporter at it with OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=https://HOST/v1/traces " +
			"and OTEL_EXPORTER_OTLP_TRACES_HEADERS=Authorization=Bearer%20KEY. Each agent span (gen_ai.operation.name invoke_agent, an OpenInference AGENT, " +
			"a traceloop agent) becomes a run when it arrives, from the spans below it, which may come in earlier requests; a call span of an agent " +
			"framework (the AI SDK's ai.generateText, a root OpenInference CHAIN, a traceloop workflow), else each turn of model calls, becomes a run " +
			"once its trace is complete. Runs are stored once per trace and span id and evaluated on arrival by their agent's policy; " +
			"the partial success counts the spans rejected and says why, and how many were ignored (no GenAI content). GET /v1/ingest shows what was dropped later.",
	}, s.exportTraces)
}

// registerOTLP registers o, an OTLP/HTTP export (POST /v1/traces, /v1/logs) of request
// messages named request, with what such exports share: the key's tenant writes runs, as
// POST /v1/runs does, so an ingest key is enough; the errors are errs and OTLP's own; the
// body as sent is capped (after gzip it is held to the same cap while it is read).
func (s *Server) registerOTLP(errs []int, request string, o huma.Operation, handler func(context.Context, *tracesInput) (*tracesOutput, error)) {
	o.Method = http.MethodPost
	o.Security = needs(store.ScopeIngest)
	o.Extensions = map[string]any{ScopeExtension: string(store.ScopeIngest)}
	o.Errors = append(append([]int(nil), errs...), http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusServiceUnavailable)
	o.MaxBodyBytes = s.opts.MaxTraceBodyBytes + 1
	huma.Register(s.api, o, handler)
	// huma requires a raw body; an empty one is a request without records, as protobuf
	// encodes it. The operation shares this RequestBody with the document.
	if item := s.api.OpenAPI().Paths[o.Path]; item != nil && item.Post != nil && item.Post.RequestBody != nil {
		rb := item.Post.RequestBody
		rb.Required = false
		rb.Content[contentJSON] = &huma.MediaType{Schema: &huma.Schema{Type: "string", Description: request + " in OTLP JSON"}}
	}
}

type tracesInput struct {
	ContentType     string `header:"Content-Type" doc:"application/x-protobuf or application/json."`
	ContentEncoding string `header:"Content-Encoding" doc:"gzip, or none."`
	RawBody         []byte `contentType:"application/x-protobuf"`
}

type tracesOutput struct {
	Status      int
	ContentType string `header:"Content-Type"`
	RetryAfter  string `header:"Retry-After"`
	Body        []byte
}

// exportTraces answers as OTLP/HTTP says: 200 with an ExportTraceServiceResponse (its
// partial success when spans were rejected), or an error status with a google.rpc.Status,
// each in the request's encoding.
func (s *Server) exportTraces(ctx context.Context, in *tracesInput) (*tracesOutput, error) {
	return exportOTLP(ctx, s, in, otlpSignal[ptraceotlp.ExportRequest]{
		check: otlpcheck.Traces, request: "ExportTraceServiceRequest", records: "spans", logAs: "api: export traces",
		newRequest: ptraceotlp.NewExportRequest,
		take: func(ctx context.Context, req ptraceotlp.ExportRequest) (otlpMessage, error) {
			res, err := s.svc.IngestTraces(ctx, tenant(ctx), req.Traces())
			if err != nil {
				return nil, err
			}
			resp := ptraceotlp.NewExportResponse()
			if msg := res.Message(); msg != "" {
				resp.PartialSuccess().SetRejectedSpans(int64(res.Rejected))
				resp.PartialSuccess().SetErrorMessage(msg)
			}
			return resp, nil
		},
	})
}

// otlpMessage is what the OTLP requests and responses of pdata (ptraceotlp, plogotlp)
// share: their two encodings.
type otlpMessage interface {
	MarshalJSON() ([]byte, error)
	MarshalProto() ([]byte, error)
	UnmarshalJSON([]byte) error
	UnmarshalProto([]byte) error
}

// otlpSignal is what POST /v1/traces and /v1/logs differ in; exportOTLP is the rest.
type otlpSignal[R otlpMessage] struct {
	check   otlpcheck.Signal
	request string // the request message's name, for errors
	records string // what the request carries ("spans"), for errors
	logAs   string // the server log's message when they are not stored
	// newRequest makes the request the body is decoded into.
	newRequest func() R
	// take ingests the request and returns the response, its partial success filled in.
	take func(ctx context.Context, req R) (otlpMessage, error)
}

// exportOTLP answers a request of sig as OTLP/HTTP says: 200 with the signal's export
// response, or an error status with a google.rpc.Status, each in the request's encoding.
func exportOTLP[R otlpMessage](ctx context.Context, s *Server, in *tracesInput, sig otlpSignal[R]) (*tracesOutput, error) {
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
	held, refused := s.checkOTLP(sig.check, ct, in.RawBody, body)
	if refused != nil {
		return refused, nil
	}
	// A request within MaxTraceRequestBytes is always taken, alone if it must.
	release, ok := s.takeTraceBytes(ctx, min(held, s.opts.MaxTraceBytesInFlight))
	if !ok {
		return otlpError(ct, http.StatusServiceUnavailable, codes.Unavailable, fmt.Sprintf(
			"the server is taking as many OTLP requests as its memory for them holds (serve --otlp-max-in-flight-bytes, %s); "+
				"the exporter retries after the time in Retry-After", mib(s.opts.MaxTraceBytesInFlight)), "2"), nil
	}
	defer release()
	req := sig.newRequest()
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
			"the body is not an %s in %s (Content-Type %s): %v", sig.request, kind, ct, err), ""), nil
	}
	resp, err := sig.take(ctx, req)
	if err != nil {
		if p := fromService(err); p != nil && p.Status < 500 {
			return otlpError(ct, p.Status, codes.InvalidArgument, p.Detail, ""), nil
		}
		s.opts.Logger.Error(sig.logAs, "err", err)
		// Retryable, as OTLP/HTTP says of 503: what was stored is stored once however
		// often the exporter sends the batch again.
		return otlpError(ct, http.StatusServiceUnavailable, codes.Unavailable,
			"the "+sig.records+" could not be stored; the exporter retries after the time in Retry-After (the server log has the cause)", "1"), nil
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

// checkOTLP walks body, a request of signal, before it is decoded (otlpcheck): a value
// nested past MaxTraceDepth or wire data that is not a request is refused with 400, a
// request that would hold more than MaxTraceRequestBytes while it is taken with 413. It
// returns what the request holds.
func (s *Server) checkOTLP(signal otlpcheck.Signal, ct string, raw, body []byte) (int64, *tracesOutput) {
	walk, kind := otlpcheck.Protobuf, "protobuf"
	if ct == contentJSON {
		walk, kind = otlpcheck.JSON, "OTLP JSON"
	}
	request, records, batch := "ExportTraceServiceRequest", "spans", "the SDK's batch span processor: OTEL_BSP_MAX_EXPORT_BATCH_SIZE"
	if signal == otlpcheck.Logs {
		request, records, batch = "ExportLogsServiceRequest", "log records", "the SDK's batch log record processor: OTEL_BLRP_MAX_EXPORT_BATCH_SIZE"
	}
	c, err := walk(body, signal, otlpcheck.Limits{MaxDepth: s.opts.MaxTraceDepth})
	var de *otlpcheck.DepthError
	switch {
	case errors.As(err, &de):
		return 0, otlpError(ct, http.StatusBadRequest, codes.InvalidArgument, fmt.Sprintf(
			"the request is not decoded: %v (the limit is serve --otlp-max-depth)", err), "")
	case err != nil:
		return 0, otlpError(ct, http.StatusBadRequest, codes.InvalidArgument, fmt.Sprintf(
			"the body is not an %s in %s (Content-Type %s): %v", request, kind, ct, err), "")
	}
	held := traceBytes(raw, body, c)
	if held > s.opts.MaxTraceRequestBytes {
		return 0, otlpError(ct, http.StatusRequestEntityTooLarge, codes.InvalidArgument, fmt.Sprintf(
			"the request would hold about %s once decoded and while its %s are taken (%d %s, %d attributes, %d values), "+
				"over the limit of %s a request (serve --otlp-max-request-bytes); send fewer %s or attributes a request "+
				"(%s; a Collector's batch processor: send_batch_max_size)",
			mib(held), records, c.Records, records, c.Attributes, c.Values, mib(s.opts.MaxTraceRequestBytes), records, batch), "")
	}
	return held, nil
}

// traceBytes is what a request holds while it is taken: its body as sent and
// decompressed, the request decoded, and what ingesting it adds.
func traceBytes(raw, body []byte, c otlpcheck.Counts) int64 {
	n := traceRequestBytes + int64(len(raw)) + (1+ingestCopies)*c.DecodedBytes() + traceSpanBytes*c.Records
	if len(body) > 0 && len(raw) > 0 && &body[0] != &raw[0] {
		n += 2 * int64(len(body))
	} else {
		n += int64(len(body))
	}
	return n
}

// takeTraceBytes takes n bytes of MaxTraceBytesInFlight, waiting up to TraceBudgetWait
// for them; false when they did not come.
func (s *Server) takeTraceBytes(ctx context.Context, n int64) (release func(), ok bool) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.TraceBudgetWait)
	defer cancel()
	if err := s.traceBytes.Acquire(ctx, n); err != nil {
		return nil, false
	}
	return func() { s.traceBytes.Release(n) }, true
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// tooLarge is a body over the cap, as sent or as decompressed.
type tooLarge struct{ limit int64 }

func (e *tooLarge) Error() string {
	return fmt.Sprintf("the request body is over the limit of %d bytes (as sent, and after decompression); send smaller batches "+
		"(the exporter's batch span processor: OTEL_BSP_MAX_EXPORT_BATCH_SIZE)", e.limit)
}

// unknownEncoding is a Content-Encoding other than gzip.
type unknownEncoding struct{ name string }

func (e *unknownEncoding) Error() string {
	return fmt.Sprintf("Content-Encoding %q: OTLP/HTTP bodies are sent as they are or gzip-compressed (OTEL_EXPORTER_OTLP_TRACES_COMPRESSION=gzip)", e.name)
}

// decompress returns the body as sent, or gunzipped, within MaxTraceBodyBytes: a body
// that grows past it while it is decompressed (a gzip bomb) is refused before it is all
// read.
func (s *Server) decompress(encoding string, raw []byte) ([]byte, error) {
	limit := s.opts.MaxTraceBodyBytes
	if int64(len(raw)) > limit {
		return nil, &tooLarge{limit}
	}
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
		return raw, nil
	case "gzip":
	default:
		return nil, &unknownEncoding{encoding}
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("Content-Encoding gzip, but the body is not gzip: %v", err)
	}
	// gzip's trailer gives the size decompressed (of the last member, modulo 4 GiB): a
	// hint, within the cap, that saves the buffer growing by doubling, which leaves twice
	// the body to the collector.
	var buf bytes.Buffer
	if len(raw) >= 4 {
		buf.Grow(int(min(int64(binary.LittleEndian.Uint32(raw[len(raw)-4:])), limit) + bytes.MinRead))
	}
	n, err := io.Copy(&buf, io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, fmt.Errorf("Content-Encoding gzip, but the body does not decompress: %v", err)
	}
	if n > limit {
		return nil, &tooLarge{limit}
	}
	return buf.Bytes(), nil
}

// otlpError is an OTLP/HTTP error answer: status, and a google.rpc.Status in ct.
func otlpError(ct string, status int, code codes.Code, msg, retryAfter string) *tracesOutput {
	st := &rpcstatus.Status{Code: int32(code), Message: msg}
	var (
		b   []byte
		err error
	)
	if ct == contentJSON {
		b, err = protojson.Marshal(st)
	} else {
		b, err = proto.Marshal(st)
	}
	if err != nil { // a Status of two scalar fields always encodes
		b = []byte(msg)
	}
	return &tracesOutput{Status: status, ContentType: ct, RetryAfter: retryAfter, Body: b}
}

// isTraces reports whether the operation is POST /v1/traces or /v1/logs, whose errors
// are OTLP's.
func isTraces(op *huma.Operation) bool {
	return op != nil && (op.OperationID == opExportTraces || op.OperationID == opExportLogs)
}

// refuseLargeTraces answers a POST /v1/traces or /v1/logs whose Content-Length is over the cap with
// 413 before anything else reads it. (A body sent without a length is cut off at the cap
// by the operation's MaxBodyBytes.)
func (s *Server) refuseLargeTraces(w http.ResponseWriter, r *http.Request) bool {
	if !isTracesRequest(r) || r.ContentLength <= s.opts.MaxTraceBodyBytes {
		return false
	}
	w.Header().Set("Connection", "close")
	writeOTLPTo(w, r, problem(http.StatusRequestEntityTooLarge, CodeBodyTooLarge, (&tooLarge{s.opts.MaxTraceBodyBytes}).Error()), "")
	return true
}

// writeOTLP writes p, a refusal before the handler (key, rate, caps), as OTLP/HTTP says
// errors are written.
func writeOTLP(ctx huma.Context, p *Problem) {
	out := otlpRefusal(ctx.Header("Content-Type"), p)
	ctx.SetHeader("Content-Type", out.ContentType)
	ctx.SetHeader("Content-Length", strconv.Itoa(len(out.Body)))
	ctx.SetStatus(p.Status)
	_, _ = ctx.BodyWriter().Write(out.Body)
}

// isTracesRequest reports whether r is for POST /v1/traces or /v1/logs, before routing.
func isTracesRequest(r *http.Request) bool {
	return r.Method == http.MethodPost && (r.URL.Path == "/v1/traces" || r.URL.Path == "/v1/logs")
}

// writeOTLPTo writes p, a refusal before routing (the server's cap), as writeOTLP does.
func writeOTLPTo(w http.ResponseWriter, r *http.Request, p *Problem, retryAfter string) {
	out := otlpRefusal(r.Header.Get("Content-Type"), p)
	w.Header().Set("Content-Type", out.ContentType)
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.WriteHeader(p.Status)
	_, _ = w.Write(out.Body)
}

// otlpRefusal is p as OTLP's answer to a request of contentType.
func otlpRefusal(contentType string, p *Problem) *tracesOutput {
	ct := contentProtobuf
	if mt, _, _ := mime.ParseMediaType(contentType); mt == contentJSON {
		ct = contentJSON
	}
	code := codes.InvalidArgument
	switch p.Status {
	case http.StatusUnauthorized:
		code = codes.Unauthenticated
	case http.StatusForbidden:
		code = codes.PermissionDenied
	case http.StatusTooManyRequests:
		code = codes.ResourceExhausted
	case http.StatusServiceUnavailable:
		code = codes.Unavailable
	case http.StatusInternalServerError:
		code = codes.Internal
	}
	return otlpError(ct, p.Status, code, p.Detail, "")
}
