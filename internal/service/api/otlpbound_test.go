package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/otlpcheck/otlpchecktest"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// boundServer serves a service with one tenant, acme, with o; it returns the server, its
// harness (for the runs) and acme's key.
func boundServer(t testing.TB, dsn string, o api.Options) (*api.Server, *harness, string) {
	t.Helper()
	env := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true})
	ctx := context.Background()
	if _, err := env.Service.CreateTenant(ctx, "acme", store.Policy{}); err != nil {
		t.Fatal(err)
	}
	key, _, err := env.Service.CreateKey(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	s := api.New(env.Service, o)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, &harness{env: env, srv: srv, keys: map[string]string{"acme": key}}, key
}

// status reads an OTLP error answer: a google.rpc.Status in the request's encoding.
func status(t *testing.T, ct string, r reply) *rpcstatus.Status {
	t.Helper()
	var st rpcstatus.Status
	unmarshal := proto.Unmarshal
	if ct == "application/json" {
		unmarshal = protojson.Unmarshal
	}
	if got := r.header.Get("Content-Type"); got != ct {
		t.Fatalf("Content-Type %q; want the request's, %q", got, ct)
	}
	if err := unmarshal(r.body, &st); err != nil {
		t.Fatalf("answer %.200q: %v; want a google.rpc.Status", r.body, err)
	}
	return &st
}

var emptyRequest = func() []byte {
	b, err := ptraceotlp.NewExportRequestFromTraces(ptrace.NewTraces()).MarshalProto()
	if err != nil {
		panic(err)
	}
	return b
}()

// TestOTLPHostileRequests: the requests that took serve down or cost it hundreds of MB
// each, at full size, plain and gzip-compressed: an attribute nested two million deep in
// protobuf (19.5 MB; its decoder overflowed the goroutine stack, which ended the process)
// and 700,000 deep in JSON (19.6 MB), 550,000 spans, 4 million attributes. Each is
// refused before it is decoded, with 400 or 413 and a google.rpc.Status that names the
// limit; after each, the same server takes a request, and after all of them an agent's
// spans make their runs.
func TestOTLPHostileRequests(t *testing.T) {
	_, h, key := boundServer(t, filepath.Join(t.TempDir(), "scorekit.db"), api.Options{})
	for _, tc := range []struct {
		name   string
		ct     string
		body   []byte
		status int
		says   []string
	}{
		{"nested protobuf", "application/x-protobuf", otlpchecktest.NestedProtobuf(2_000_000), 400,
			[]string{`spans[0].attributes[0] (key "k").value nests more than 64 levels deep`, "--otlp-max-depth"}},
		{"nested JSON", "application/json", otlpchecktest.NestedJSON(700_000), 400,
			[]string{`spans[0].attributes[0] (key "k").value nests more than 64 levels deep`, "--otlp-max-depth"}},
		{"spans protobuf", "application/x-protobuf", otlpchecktest.SpansProtobuf(550_000), 413,
			[]string{"550000 spans", "--otlp-max-request-bytes", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE"}},
		{"spans JSON", "application/json", otlpchecktest.SpansJSON(550_000), 413,
			[]string{"550000 spans", "--otlp-max-request-bytes"}},
		{"attributes protobuf", "application/x-protobuf", otlpchecktest.AttributesProtobuf(4_000_000), 413,
			[]string{"4000000 attributes", "--otlp-max-request-bytes"}},
		{"attributes JSON", "application/json", otlpchecktest.AttributesJSON(4_000_000), 413,
			[]string{"4000000 attributes", "--otlp-max-request-bytes"}},
	} {
		if len(tc.body) > api.DefaultMaxTraceBodyBytes {
			t.Fatalf("%s: %d bytes, over the body cap: it would not test the decoder", tc.name, len(tc.body))
		}
		for _, encoding := range []string{"", "gzip"} {
			t.Run(tc.name+" "+encoding, func(t *testing.T) {
				body := tc.body
				if encoding == "gzip" {
					body = gzipped(t, body)
				}
				r := postTraces(t, h.srv.URL, key, tc.ct, encoding, body)
				if r.status != tc.status {
					t.Fatalf("%d %.300s; want %d", r.status, r.body, tc.status)
				}
				st := status(t, tc.ct, r)
				for _, s := range tc.says {
					if !strings.Contains(st.GetMessage(), s) {
						t.Errorf("%q does not say %q", st.GetMessage(), s)
					}
				}
				if r := postTraces(t, h.srv.URL, key, "application/x-protobuf", "", emptyRequest); r.status != http.StatusOK {
					t.Fatalf("the next request: %d %s", r.status, r.body)
				}
			})
		}
	}
	spans := agentTrace(t)
	if err := exporter(t, h.srv.URL, key).ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	checkAgentRuns(t, h.as(t, "acme"), spans)
}

// TestOTLPCollectorBatch: a Collector's batch at its default size, 8192 spans of 50
// attributes (15 MiB of protobuf), is taken whole, plain and gzip-compressed: its 1024
// agent spans make their runs.
func TestOTLPCollectorBatch(t *testing.T) {
	body := otlpchecktest.ExportProtobuf(8192, 50)
	backends(t, func(t *testing.T, dsn string) {
		_, h, key := boundServer(t, dsn, api.Options{})
		for _, encoding := range []string{"", "gzip"} {
			b := body
			if encoding == "gzip" {
				b = gzipped(t, body)
			}
			r := postTraces(t, h.srv.URL, key, "application/x-protobuf", encoding, b)
			if r.status != http.StatusOK {
				t.Fatalf("%s: %d %.300s", encoding, r.status, r.body)
			}
			resp := ptraceotlp.NewExportResponse()
			if err := resp.UnmarshalProto(r.body); err != nil || resp.PartialSuccess().RejectedSpans() != 0 {
				t.Fatalf("%s: %v, %d rejected: %s", encoding, err, resp.PartialSuccess().RejectedSpans(), resp.PartialSuccess().ErrorMessage())
			}
		}
		runs, err := h.env.Store.Runs(context.Background(), tenantNamed(t, h, "acme").ID, store.RunQuery{Agent: "planner", Limit: 2000})
		if err != nil || len(runs) != 1024 {
			t.Fatalf("%d runs (%v); want the batch's 1024 agent spans' runs, once", len(runs), err)
		}
	})
}

// TestOTLPRequestLimits: each bound taken at its limit and refused past it, with the
// status OTLP/HTTP says: depth (400), what a request holds (413).
func TestOTLPRequestLimits(t *testing.T) {
	spans := otlpchecktest.SpansProtobuf(1000)
	for _, tc := range []struct {
		name   string
		o      api.Options
		body   []byte
		status int
	}{
		{"depth at the limit", api.Options{MaxTraceDepth: 4}, otlpchecktest.NestedProtobuf(4), 200},
		{"depth past it", api.Options{MaxTraceDepth: 4}, otlpchecktest.NestedProtobuf(5), 400},
		{"spans within the request bytes", api.Options{MaxTraceRequestBytes: 4 << 20}, spans, 200},
		{"spans past them", api.Options{MaxTraceRequestBytes: 1 << 20}, spans, 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, h, key := boundServer(t, filepath.Join(t.TempDir(), "scorekit.db"), tc.o)
			if r := postTraces(t, h.srv.URL, key, "application/x-protobuf", "", tc.body); r.status != tc.status {
				t.Fatalf("%d %s; want %d", r.status, r.body, tc.status)
			}
		})
	}
}

// TestOTLPBytesInFlight: while the requests being taken hold all of
// MaxTraceBytesInFlight, a request waits TraceBudgetWait and is answered 503 with
// Retry-After, before it is decoded; a request that fits in what is left is taken; once
// the budget is free, the refused request is taken.
func TestOTLPBytesInFlight(t *testing.T) {
	const inFlight = 64 << 20
	s, h, key := boundServer(t, filepath.Join(t.TempDir(), "scorekit.db"),
		api.Options{MaxTraceBytesInFlight: inFlight, TraceBudgetWait: 50e6})
	body := otlpchecktest.SpansProtobuf(5000) // about 7 MiB held; an empty request 1 MiB
	release := api.HoldTraceBytes(s, inFlight-(2<<20))
	r := postTraces(t, h.srv.URL, key, "application/x-protobuf", "", body)
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("%d Retry-After %q %s; want 503 with Retry-After", r.status, r.header.Get("Retry-After"), r.body)
	}
	if st := status(t, "application/x-protobuf", r); !strings.Contains(st.GetMessage(), "--otlp-max-in-flight-bytes") {
		t.Fatalf("%q does not name the limit", st.GetMessage())
	}
	if r := postTraces(t, h.srv.URL, key, "application/x-protobuf", "", emptyRequest); r.status != http.StatusOK {
		t.Fatalf("a request that fits what is left: %d %s", r.status, r.body)
	}
	release()
	if r := postTraces(t, h.srv.URL, key, "application/x-protobuf", "", body); r.status != http.StatusOK {
		t.Fatalf("once the budget is free: %d %s", r.status, r.body)
	}
}
