package service_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/wasm"
	"github.com/scorekit/scorekit/internal/pgtest"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/service"
)

// TestMain runs a module's check when a test's publish started this binary as its child
// (wasm.VetChild), as a program that serves the handler does, and otherwise the tests,
// with a PostgreSQL when they ask for one.
func TestMain(m *testing.M) {
	if code, ok := wasm.VetChild(); ok {
		os.Exit(code)
	}
	pgtest.Main(m)
}

func open(t *testing.T, dsn string, workers int) *service.Service {
	t.Helper()
	svc, err := service.Open(t.Context(), service.Config{DB: dsn, Host: host.New(servicetest.Registry(t, nil)), Workers: workers,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := svc.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return svc
}

// TestTenants: each tenant sees its own runs and evaluations only; a tenant nobody created
// is ErrNotFound with the method that creates it; a bad name and a taken one are refused.
func TestTenants(t *testing.T) {
	servicetest.Backends(t, func(t *testing.T, dsn string) {
		ctx := t.Context()
		svc := open(t, dsn, 1)
		for _, name := range []string{"acme", "globex"} {
			if err := svc.CreateTenant(ctx, name); err != nil {
				t.Fatal(err)
			}
		}
		if err := svc.CreateTenant(ctx, "acme"); !errors.Is(err, service.ErrExists) {
			t.Errorf("CreateTenant(acme) again = %v, want ErrExists", err)
		}
		if err := svc.CreateTenant(ctx, "Not A Name"); !errors.Is(err, service.ErrInvalid) {
			t.Errorf("CreateTenant(Not A Name) = %v, want ErrInvalid", err)
		}
		_, err := svc.ImportRuns(ctx, "initech", []byte(`{"agent": "a", "input": "q", "output": "a"}`), service.ImportOptions{})
		if !errors.Is(err, service.ErrNotFound) || !strings.Contains(err.Error(), "CreateTenant") {
			t.Errorf("ImportRuns(initech) = %v, want ErrNotFound naming CreateTenant", err)
		}

		res, err := svc.ImportRuns(ctx, "acme", []byte(`{"id": "r1", "agent": "triage", "input": "q", "output": "an answer"}`+"\n"+`{"id": "r2", "input": "q"}`), service.ImportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Stored != 1 || res.Rejected != 1 || len(res.Errors) != 1 || !strings.HasPrefix(res.Errors[0], "line 2: ") {
			t.Fatalf("import = %+v, want one stored and line 2 rejected with its reason", res)
		}
		if _, err := svc.CreateEvaluation(ctx, "globex", "triage", service.EvaluationRequest{Limit: 10}); err == nil {
			t.Error("globex evaluated acme's agent")
		}
		ev, err := svc.CreateEvaluation(ctx, "acme", "triage", service.EvaluationRequest{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Evaluation(ctx, "globex", ev.ID, service.ReadOptions{}); !errors.Is(err, service.ErrNotFound) {
			t.Errorf("globex read acme's evaluation: %v, want ErrNotFound", err)
		}
		ev, err = svc.Evaluation(ctx, "acme", ev.ID, service.ReadOptions{Wait: time.Minute, Results: true})
		if err != nil {
			t.Fatal(err)
		}
		if ev.Status != "done" || len(ev.Results) != 1 || ev.Results[0].RunID != "r1" || ev.Results[0].Scorer != "prescreen" ||
			len(ev.Scorers) != 1 || ev.Scorers[0].Scored != 1 {
			t.Fatalf("evaluation = %+v, want r1 scored by prescreen, the default", ev)
		}
	})
}

// TestHandlerKeys: a handler that is not open answers a /v1 request only with a key of the
// tenant, and the dashboard is served beside the API only when asked for.
func TestHandlerKeys(t *testing.T) {
	servicetest.Backends(t, func(t *testing.T, dsn string) {
		ctx := t.Context()
		svc := open(t, dsn, -1)
		if err := svc.CreateTenant(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		key, err := svc.CreateKey(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		get := func(h http.Handler, path, key string) (int, string) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
			if key != "" {
				req.Header.Set("Authorization", "Bearer "+key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		api, err := svc.Handler(service.HandlerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if code, _ := get(api, "/v1/agents", ""); code != http.StatusUnauthorized {
			t.Errorf("GET /v1/agents without a key: %d, want 401", code)
		}
		if code, body := get(api, "/v1/agents", key); code != http.StatusOK {
			t.Errorf("GET /v1/agents with acme's key: %d %s, want 200", code, body)
		}
		if code, _ := get(api, "/", ""); code != http.StatusNotFound {
			t.Errorf("GET / of the API alone: %d, want 404", code)
		}
		both, err := svc.Handler(service.HandlerOptions{Dashboard: true})
		if err != nil {
			t.Fatal(err)
		}
		if code, body := get(both, "/", ""); code != http.StatusOK || !strings.Contains(body, "<html") {
			t.Errorf("GET / with the dashboard: %d, want its sign-in page", code)
		}
		if code, _ := get(both, "/v1/agents", key); code != http.StatusOK {
			t.Errorf("GET /v1/agents beside the dashboard: %d, want 200", code)
		}
	})
}
