package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/scorekit/scorekit/internal/service/telemetry"
)

// telemetryFlags are the metrics and tracing settings serve and worker share.
type telemetryFlags struct {
	tenantLabels bool
	otlp         string
	metricsAddr  string // worker only: where to serve /metrics
}

func addTelemetryFlags(cmd *cobra.Command, t *telemetryFlags) {
	f := cmd.Flags()
	f.BoolVar(&t.tenantLabels, "metrics-tenants", false, "label the per-scorer metrics and open insights with the tenant (one series per tenant: for a few known tenants)")
	f.StringVar(&t.otlp, "otlp-endpoint", "", "send traces (evaluation, job, scorer call, judge call) to this OTLP/HTTP endpoint, e.g. http://localhost:4318/v1/traces (default: no traces)")
}

// newTelemetry returns the process's metrics and, with --otlp-endpoint, its tracer, and
// a func that flushes and stops the exporter.
func newTelemetry(ctx context.Context, f telemetryFlags) (*telemetry.T, func(context.Context), error) {
	o := telemetry.Options{TenantLabels: f.tenantLabels, ProcessMetrics: true}
	stop := func(context.Context) {}
	if f.otlp != "" {
		u, err := url.Parse(f.otlp)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, nil, fmt.Errorf("--otlp-endpoint %q: want an http:// or https:// URL such as http://localhost:4318/v1/traces", f.otlp)
		}
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(f.otlp))
		if err != nil {
			return nil, nil, fmt.Errorf("--otlp-endpoint %s: %w", f.otlp, err)
		}
		res := resource.NewSchemaless(attribute.String("service.name", "scorekit"))
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		o.Tracer = tp
		stop = func(ctx context.Context) { _ = tp.Shutdown(ctx) }
	}
	return telemetry.New(o), stop, nil
}

// watch registers the gauges read from the database at each scrape.
func (s *stack) watch(t *telemetry.T) { t.Watch(s.svc.Queue().TelemetrySources()) }

// serveMetrics serves /metrics on addr (scorekit worker --metrics-addr) until the
// returned func stops it.
func (e *env) serveMetrics(ctx context.Context, addr string, t *telemetry.T) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", t.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(e.stderr, "scorekit: metrics: %v\n", err)
		}
	}()
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}, nil
}
