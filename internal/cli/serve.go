package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/otlpcheck"
	"github.com/scorekit/scorekit/internal/service/web"
)

func (e *env) serveCommand() *cobra.Command {
	var (
		addr, db    string
		ho          hostOptions
		jf          jobFlags
		so          api.ServeOptions
		maxBody     int64
		maxInFlight int
		tf          telemetryFlags
		otlp        otlpFlags
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the evaluation service over HTTP, with workers in-process",
		Long: `Serve the evaluation service over HTTP until SIGINT or SIGTERM, then finish the requests
in flight within --grace.

Runs, evaluations and results live in --db (a SQLite file by default; postgres://... for
PostgreSQL, where more workers may run elsewhere with scorekit worker). Every /v1 request
carries Authorization: Bearer KEY (scorekit keys create --tenant NAME). A database with no
key may be served open, for one user, on a loopback address only.

  POST /v1/runs                          store runs (one, a JSON array, or JSONL)
  POST /v1/agents/{agent}/evaluations    evaluate the agent's newest runs: {"limit": 10}
  GET  /v1/evaluations/{id}?wait=30s     status, per-scorer summary, results
  GET  /v1/runs/{id}                     a run with every result it ever had
  POST /v1/score                         score one run, store nothing
  POST /v1/traces                        OpenTelemetry traces (OTLP/HTTP): agent spans become runs
  GET  /v1/insights?severity=critical    what the evidence says needs attention
  GET  /openapi.json                     the API, described
  GET  /                                 the dashboard (sign in with an API key)
  GET  /metrics                          Prometheus metrics

docs/SERVICE.md has the rest.`,
		Example: `  scorekit serve --addr 127.0.0.1:8080
  scorekit serve --addr 0.0.0.0:8080 --db postgres://scorekit@db/scorekit --workers 8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkTimeout("--timeout", ho.timeout); err != nil {
				return err
			}
			if so.Grace <= 0 {
				return fmt.Errorf("--grace %s: want a duration above 0, such as 10s", so.Grace)
			}
			if err := otlp.check(); err != nil {
				return err
			}
			ctx := cmd.Context()
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("--addr %s: %w", addr, err)
			}
			defer ln.Close()
			tel, stopTracing, err := newTelemetry(ctx, tf)
			if err != nil {
				return err
			}
			defer stopTracing(context.WithoutCancel(ctx))
			ho.telemetry = tel
			s, err := e.openStack(ctx, db, ho, jf, otlp.tune)
			if err != nil {
				return err
			}
			s.watch(tel)
			e.warnSecrets(ctx, s.svc)
			hasKeys, err := s.svc.HasKeys(ctx)
			if err != nil {
				s.close(context.WithoutCancel(ctx))
				return err
			}
			loopback := isLoopback(ln.Addr())
			switch {
			case !hasKeys && !loopback:
				s.close(context.WithoutCancel(ctx))
				return fmt.Errorf("refusing to serve on %s without API keys: anyone who reaches it would read and write every run. "+
					"Create a key (scorekit tenants create NAME; scorekit keys create --tenant NAME --db %s), or serve on a loopback address such as 127.0.0.1:8080", ln.Addr(), db)
			case !hasKeys:
				fmt.Fprintf(e.stderr, "scorekit: no API key in %s: serving open for one user on loopback (every request is tenant %q). "+
					"Create a key to require keys (scorekit keys create --tenant NAME), then restart.\n", db, "default")
			case !loopback:
				fmt.Fprintf(e.stderr, "scorekit: warning: serving on %s, beyond this machine: every request needs a key, and HTTP is not encrypted (put TLS in front).\n", ln.Addr())
			}
			srv := api.New(s.svc, api.Options{Open: !hasKeys, MaxBodyBytes: maxBody, MaxTraceBodyBytes: otlp.maxBody,
				MaxTraceDepth: otlp.maxDepth, MaxTraceRequestBytes: otlp.maxRequest, MaxTraceBytesInFlight: otlp.maxInFlight, MaxInFlight: maxInFlight, Logger: e.logger()})
			next := http.NewServeMux()
			next.Handle("GET /metrics", tel.Handler())
			next.Handle("/", srv)
			dash, err := web.New(s.svc, web.Options{Open: !hasKeys, Next: next, Logger: e.logger()})
			if err != nil {
				s.close(context.WithoutCancel(ctx))
				return err
			}
			fmt.Fprintf(e.stderr, "scorekit: serving on http://%s (database %s, %d workers); the dashboard is at http://%s/\n", ln.Addr(), db, jf.workers, ln.Addr())
			err = api.Serve(ctx, ln, dash, so)
			// Workers get the same grace: a job cut off is rescued and runs again.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), so.Grace)
			defer cancel()
			s.close(sctx)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on")
	addServiceFlags(cmd, &db, &ho, &jf)
	f.DurationVar(&so.Grace, "grace", 10*time.Second, "on SIGINT or SIGTERM, how long requests in flight and running jobs get to finish")
	f.DurationVar(&so.ReadTimeout, "read-timeout", 60*time.Second, "deadline for reading a whole request, body included")
	f.DurationVar(&so.IdleTimeout, "idle-timeout", 120*time.Second, "how long a kept-alive connection may sit idle")
	f.IntVar(&so.MaxConns, "max-conns", 1024, "open connections; more are answered 503 with Retry-After")
	f.IntVar(&maxInFlight, "max-in-flight", api.DefaultMaxInFlight, "requests handled at once; more are answered 503 with Retry-After")
	f.Int64Var(&maxBody, "max-body", api.DefaultMaxBodyBytes, "largest request body in bytes (a batch of runs); larger is answered 413")
	f.DurationVar(&otlp.window, "otlp-window", service.DefaultTraceWindow, "how long the spans of an open trace (POST /v1/traces) wait for their agent span after the trace's last span arrived")
	f.Int64Var(&otlp.maxOpenBytes, "otlp-max-open-bytes", service.DefaultMaxOpenSpanBytes, "bytes of spans of open traces one tenant keeps; more are rejected")
	quietFlag(cmd, &otlp.quiet)
	f.Int64Var(&otlp.maxBody, "otlp-max-body", api.DefaultMaxTraceBodyBytes, "largest POST /v1/traces body in bytes, as sent and after gzip; larger is answered 413")
	f.IntVar(&otlp.maxDepth, "otlp-max-depth", otlpcheck.DefaultMaxDepth, "how deep a value in a POST /v1/traces request may nest (an array or map in an attribute's value is one level); deeper is answered 400 before decoding")
	f.Int64Var(&otlp.maxRequest, "otlp-max-request-bytes", api.DefaultMaxTraceRequestBytes, "bytes one POST /v1/traces request may hold while it is taken (body, decoded request, what taking its spans adds), estimated before decoding; more is answered 413")
	f.Int64Var(&otlp.maxInFlight, "otlp-max-in-flight-bytes", api.DefaultMaxTraceBytesInFlight, "bytes the POST /v1/traces requests being taken may hold together, counted as --otlp-max-request-bytes counts them; a request that finds no room within 5s is answered 503 with Retry-After")
	requireSandboxFlag(cmd, &ho.requireSandbox)
	addTelemetryFlags(cmd, &tf)
	return cmd
}

// otlpFlags bound what POST /v1/traces takes and keeps.
type otlpFlags struct {
	window       time.Duration
	quiet        time.Duration
	maxOpenBytes int64
	maxBody      int64
	maxDepth     int
	maxRequest   int64
	maxInFlight  int64
}

// quietFlag adds --otlp-quiet: the trace sweep runs on whichever process leads the ones
// that work jobs, serve or worker.
func quietFlag(cmd *cobra.Command, quiet *time.Duration) {
	cmd.Flags().DurationVar(quiet, "otlp-quiet", service.DefaultTraceQuiet, "how long a trace whose root span came must go without a span or log record "+
		"before it is complete and the runs that need the whole trace (call spans, model calls joined into turns) are made; "+
		"above the exporters' export interval (OTEL_BSP_SCHEDULE_DELAY, 5s); set it alike on every serve and worker of one database")
}

// tune sets the service's OTLP settings.
func (o otlpFlags) tune(c *service.Config) {
	c.TraceWindow, c.TraceQuiet, c.MaxOpenSpanBytes = o.window, o.quiet, o.maxOpenBytes
}

func (o otlpFlags) check() error {
	switch {
	case o.window <= 0:
		return fmt.Errorf("--otlp-window %s: want a duration above 0, such as 1h", o.window)
	case o.quiet <= 0 || o.quiet >= o.window:
		return fmt.Errorf("--otlp-quiet %s: want a duration above 0 and below --otlp-window (%s), such as 6s: "+
			"longer than the exporters' export interval, so that a trace is not taken as complete between two of their batches", o.quiet, o.window)
	case o.maxOpenBytes <= 0:
		return fmt.Errorf("--otlp-max-open-bytes %d: want a size in bytes above 0, such as 67108864", o.maxOpenBytes)
	case o.maxBody <= 0:
		return fmt.Errorf("--otlp-max-body %d: want a size in bytes above 0, such as 20971520", o.maxBody)
	case o.maxDepth <= 0 || o.maxDepth > otlpcheck.DepthCeiling:
		return fmt.Errorf("--otlp-max-depth %d: want a number of levels from 1 to %d, such as %d", o.maxDepth, otlpcheck.DepthCeiling, otlpcheck.DefaultMaxDepth)
	case o.maxRequest <= 0:
		return fmt.Errorf("--otlp-max-request-bytes %d: want a size in bytes above 0, such as %d", o.maxRequest, api.DefaultMaxTraceRequestBytes)
	case o.maxInFlight <= 0:
		return fmt.Errorf("--otlp-max-in-flight-bytes %d: want a size in bytes above 0, such as %d", o.maxInFlight, api.DefaultMaxTraceBytesInFlight)
	}
	return nil
}

// isLoopback reports whether a listener's address is on the loopback interface only.
func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

func (e *env) workerCommand() *cobra.Command {
	var (
		db    string
		ho    hostOptions
		jf    jobFlags
		tf    telemetryFlags
		quiet time.Duration
	)
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Work evaluation jobs from a PostgreSQL database that scorekit serve writes to",
		Long: `Work evaluation jobs until SIGINT or SIGTERM. Run as many as the work needs, on any
machine that reaches the database: River spreads the jobs, and a job whose worker dies is
given to another after --rescue-after. Workers need the same scorers (--plugins, --config,
judge flags) as the serve that enqueues.`,
		Example: `  scorekit worker --db postgres://scorekit@db/scorekit --workers 8`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if jf.workers < 1 {
				return fmt.Errorf("--workers %d: a worker needs 1 or more", jf.workers)
			}
			if err := checkTimeout("--timeout", ho.timeout); err != nil {
				return err
			}
			ctx := cmd.Context()
			tel, stopTracing, err := newTelemetry(ctx, tf)
			if err != nil {
				return err
			}
			defer stopTracing(context.WithoutCancel(ctx))
			if quiet <= 0 {
				return fmt.Errorf("--otlp-quiet %s: want a duration above 0, such as 6s", quiet)
			}
			ho.telemetry = tel
			s, err := e.openStack(ctx, db, ho, jf, func(c *service.Config) { c.TraceQuiet = quiet })
			if err != nil {
				return err
			}
			e.warnSecrets(ctx, s.svc)
			if tf.metricsAddr != "" {
				s.watch(tel)
				stop, err := e.serveMetrics(ctx, tf.metricsAddr, tel)
				if err != nil {
					s.close(context.WithoutCancel(ctx))
					return err
				}
				defer stop()
			}
			fmt.Fprintf(e.stderr, "scorekit: working evaluation jobs from %s (%d at once)\n", db, jf.workers)
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			s.close(sctx)
			return nil
		},
	}
	addServiceFlags(cmd, &db, &ho, &jf)
	requireSandboxFlag(cmd, &ho.requireSandbox)
	addTelemetryFlags(cmd, &tf)
	cmd.Flags().StringVar(&tf.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics (default: none)")
	quietFlag(cmd, &quiet)
	return cmd
}
