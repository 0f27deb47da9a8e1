package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service/telemetry"
)

// --otlp-endpoint sends spans over OTLP/HTTP, flushed when the command stops; a bad URL
// is refused with what to give.
func TestOTLPEndpoint(t *testing.T) {
	var posts atomic.Int32
	var contentType atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" {
			b, _ := io.ReadAll(r.Body)
			if len(b) > 0 {
				posts.Add(1)
				contentType.Store(r.Header.Get("Content-Type"))
			}
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	ctx := context.Background()
	tel, stop, err := newTelemetry(ctx, telemetryFlags{otlp: srv.URL + "/v1/traces"})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tel.StartEvaluation(ctx, telemetry.EvaluationInfo{ID: "ev_x", Agent: "a", Runs: 1, Jobs: 1})
	span.End()
	stop(ctx)
	if posts.Load() == 0 || contentType.Load() != "application/x-protobuf" {
		t.Fatalf("%d OTLP posts (content type %v); want the span exported on stop", posts.Load(), contentType.Load())
	}
	if _, _, err := newTelemetry(ctx, telemetryFlags{otlp: "localhost:4318"}); err == nil || !strings.Contains(err.Error(), "want an http:// or https:// URL") {
		t.Fatalf("--otlp-endpoint localhost:4318: %v", err)
	}
}

// scorekit worker --metrics-addr serves /metrics while it works, and stops with it.
func TestWorkerMetricsAddr(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, registry: builtinRegistry}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int)
	go func() {
		done <- e.run(ctx, []string{"worker", "--db", filepath.Join(t.TempDir(), "scorekit.db"), "--metrics-addr", addr, "--workers", "1"})
	}()
	var body string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Fatalf("worker exit %d: %s", code, errb.String())
	}
	for _, want := range []string{telemetry.MetricQueueJobs + `{kind="scorekit_evaluate",state="available"} 0`, telemetry.MetricInsightsOpen, "go_goroutines"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	if _, err := http.Get("http://" + addr + "/metrics"); err == nil {
		t.Error("/metrics still answers after the worker stopped")
	}
}
