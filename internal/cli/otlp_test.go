package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/testkit"
)

// TestServeTakesOTLP: a platform's OpenTelemetry SDK, configured only by the environment
// variables docs/SERVICE.md gives, exports an agent's spans to a running scorekit serve;
// the run is stored under the key's tenant with its tool call. --otlp-max-body holds.
func TestServeTakesOTLP(t *testing.T) {
	db := filepath.Join(t.TempDir(), "scorekit.db")
	if r := runCLI(t, "", "tenants", "create", "acme", "--db", db); r.code != ExitOK {
		t.Fatalf("tenants create: %d %s", r.code, r.stderr)
	}
	r := runCLI(t, "", "keys", "create", "--tenant", "acme", "--db", db)
	key := strings.TrimSpace(r.stdout)
	if r.code != ExitOK {
		t.Fatalf("keys create: %d %s", r.code, r.stderr)
	}
	var stderr testkit.SyncBuffer
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &stderr, registry: builtinRegistry}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() {
		done <- e.run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--workers", "0", "--otlp-max-body", "100000"})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Error("serve did not stop within a minute")
		}
	})
	addr := regexp.MustCompile(`serving on (http://[0-9.:]+)`)
	var base string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && base == ""; time.Sleep(20 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatalf("serve did not start:\n%s", stderr.String())
	}

	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", base+"/v1/traces")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "Authorization=Bearer%20"+key)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip")
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "calendar-service"))))
	tr := tp.Tracer("agent")
	actx, agent := tr.Start(ctx, "invoke_agent calendar", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"Cancel my 3pm meeting"}]}]`),
		attribute.String("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"Done: the 3pm meeting is cancelled."}],"finish_reason":"stop"}]`),
	))
	_, tool := tr.Start(actx, "execute_tool cancel_event", trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", "cancel_event"),
		attribute.String("gen_ai.tool.call.arguments", `{"time":"15:00"}`),
		attribute.String("gen_ai.tool.call.result", `{"cancelled":true}`),
	))
	tool.End()
	agent.End()
	if err := tp.Shutdown(ctx); err != nil { // flushes, and says what the server refused
		t.Fatalf("export: %v", err)
	}

	id := agent.SpanContext().TraceID().String() + "-" + agent.SpanContext().SpanID().String()
	req, _ := http.NewRequest("GET", base+"/v1/runs/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		Agent string `json:"agent"`
		Run   struct {
			Output    string `json:"output"`
			ToolCalls []struct {
				Name, Result string
			} `json:"tool_calls"`
		} `json:"run"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != 200 {
		t.Fatalf("run %s: %d %v", id, resp.StatusCode, err)
	}
	if v.Agent != "calendar" || v.Run.Output != "Done: the 3pm meeting is cancelled." || len(v.Run.ToolCalls) != 1 || v.Run.ToolCalls[0].Result != `{"cancelled":true}` {
		t.Fatalf("run: %+v", v)
	}

	big, _ := http.NewRequest("POST", base+"/v1/traces", bytes.NewReader(make([]byte, 100001)))
	big.Header.Set("Authorization", "Bearer "+key)
	big.Header.Set("Content-Type", "application/x-protobuf")
	resp, err = http.DefaultClient.Do(big)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over --otlp-max-body: %d", resp.StatusCode)
	}
}

// TestOTLPQuietFlag: serve and worker take --otlp-quiet (default service.DefaultTraceQuiet)
// into the service's Config.TraceQuiet, which decides when a trace is complete; a value
// that is not a time a trace can be quiet within its window is refused, naming the flag.
func TestOTLPQuietFlag(t *testing.T) {
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, registry: builtinRegistry}
	for _, cmd := range []*cobra.Command{e.serveCommand(), e.workerCommand()} {
		f := cmd.Flags().Lookup("otlp-quiet")
		if f == nil || f.DefValue != service.DefaultTraceQuiet.String() {
			t.Fatalf("%s --otlp-quiet: %+v; want a flag defaulting to %s", cmd.Name(), f, service.DefaultTraceQuiet)
		}
	}
	o := otlpFlags{window: time.Hour, quiet: 3 * time.Second, maxOpenBytes: 1 << 20, maxBody: 1 << 20, maxDepth: 8, maxRequest: 1 << 20, maxInFlight: 1 << 20}
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
	var c service.Config
	o.tune(&c)
	if c.TraceQuiet != 3*time.Second || c.TraceWindow != time.Hour || c.MaxOpenSpanBytes != 1<<20 {
		t.Errorf("config %+v; want the flags' quiet, window and cap", c)
	}
	for _, args := range [][]string{{"serve", "--otlp-quiet", "0s"}, {"serve", "--otlp-quiet", "2h"}, {"worker", "--otlp-quiet", "-1s", "--db", "x.db"}} {
		r := runCLI(t, "", args...)
		if r.code == ExitOK || !strings.Contains(r.stderr, "--otlp-quiet") {
			t.Errorf("%v: %d %s; want refused, naming --otlp-quiet", args, r.code, r.stderr)
		}
	}
}
