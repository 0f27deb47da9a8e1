package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// maxRequestBytes caps a POST /v1/score body.
const maxRequestBytes = 8 << 20

func (e *env) serveCommand() *cobra.Command {
	var (
		addr, config string
		timeout      time.Duration
		judge        judgeConfig
		plugins      []string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve scoring over HTTP: POST /v1/score, GET /v1/scorers, GET /healthz",
		Long: `Serve scoring over HTTP until interrupted.

  POST /v1/score    {"scorer": "prescreen", "run": {...}, "config": {...}}  -> a result
  GET  /v1/scorers  the scorers, as scorekit scorers --json prints them
  GET  /healthz     ok

A request's config, when given, replaces the scorer's config from --config for that call.`,
		Example: `  scorekit serve --addr 127.0.0.1:8080
  curl -s localhost:8080/v1/score -d '{"scorer":"prescreen","run":{"input":"What is the capital of France?","output":"Paris"}}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			srv, err := e.newServer(cmd.Context(), hostOptions{config: config, plugins: plugins, timeout: timeout, judge: judge})
			if err != nil {
				return err
			}
			defer srv.close(context.WithoutCancel(cmd.Context()))
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			fmt.Fprintf(e.stderr, "scorekit: serving on http://%s\n", ln.Addr())
			return serveUntilDone(cmd.Context(), ln, srv.handler())
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on")
	f.StringVar(&config, "config", "", "JSON file with per-scorer configs and the judge (as for score)")
	f.DurationVar(&timeout, "timeout", 30*time.Second, "deadline of one scorer call")
	judgeFlags(f, &judge)
	pluginDirsFlag(cmd, &plugins)
	return cmd
}

func serveUntilDone(ctx context.Context, ln net.Listener, h http.Handler) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return hs.Shutdown(sctx)
	}
}

// server answers scoring requests. Scorers opened with the --config configs are kept
// open and shared; a request that brings its own config opens a scorer for that call.
type server struct {
	h       *host.Host
	configs map[string]json.RawMessage

	closeHost func(context.Context) error

	mu   sync.Mutex
	open map[string]*host.Scorer
}

func (e *env) newServer(ctx context.Context, o hostOptions) (*server, error) {
	h, cfg, closeHost, err := e.openHost(ctx, o)
	if err != nil {
		return nil, err
	}
	return &server{h: h, configs: cfg.Scorers, closeHost: closeHost, open: map[string]*host.Scorer{}}, nil
}

func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /v1/scorers", func(w http.ResponseWriter, _ *http.Request) {
		list, err := listScorers(s.h.Registry())
		if err != nil {
			writeError(w, http.StatusInternalServerError, sdk.CodeUnavailable, err.Error())
			return
		}
		writeJSONStatus(w, http.StatusOK, list)
	})
	mux.HandleFunc("POST /v1/score", s.score)
	return mux
}

// scoreRequest is the body of POST /v1/score.
type scoreRequest struct {
	Scorer string          `json:"scorer"`
	Run    json.RawMessage `json:"run"`
	Config json.RawMessage `json:"config,omitempty"`
}

func (s *server) score(w http.ResponseWriter, r *http.Request) {
	var req scoreRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, sdk.CodeInvalidRun, "request body: "+describeConfigError(err).Error()+`; want {"scorer", "run", "config"}`)
		return
	}
	if req.Scorer == "" {
		writeError(w, http.StatusBadRequest, sdk.CodeInvalidRun, `request body: missing "scorer"; GET /v1/scorers lists them`)
		return
	}
	if len(req.Run) == 0 {
		writeError(w, http.StatusBadRequest, sdk.CodeInvalidRun, `request body: missing "run"`)
		return
	}
	run, err := host.DecodeRun(req.Run)
	if err != nil {
		writeError(w, http.StatusBadRequest, sdk.CodeInvalidRun, "run: "+err.Error())
		return
	}
	sc, release, err := s.scorer(r.Context(), req.Scorer, req.Config)
	switch {
	case errors.Is(err, host.ErrUnknownScorer):
		writeError(w, http.StatusNotFound, sdk.CodeUnavailable, err.Error())
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, sdk.CodeInvalidConfig, err.Error())
		return
	}
	defer release()
	writeJSONStatus(w, http.StatusOK, sc.Score(r.Context(), run))
}

// scorer returns an opened scorer and a func to call when the request is done with it.
func (s *server) scorer(ctx context.Context, name string, config json.RawMessage) (*host.Scorer, func(), error) {
	if len(config) > 0 {
		sc, err := s.h.Open(ctx, name, host.OpenOptions{Config: config})
		if err != nil {
			return nil, nil, err
		}
		return sc, func() { _ = sc.Close(context.WithoutCancel(ctx)) }, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sc, ok := s.open[name]; ok {
		return sc, func() {}, nil
	}
	// The scorer outlives this request: it must not be tied to the request's context.
	sc, err := s.h.Open(context.WithoutCancel(ctx), name, host.OpenOptions{Config: s.configs[name]})
	if err != nil {
		return nil, nil, err
	}
	s.open[name] = sc
	return sc, func() {}, nil
}

func (s *server) close(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sc := range s.open {
		_ = sc.Close(ctx)
	}
	clear(s.open)
	_ = s.closeHost(ctx)
}

func writeJSONStatus(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers with {"error": {"code", "message"}}, the shape of sdk.Error.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSONStatus(w, status, map[string]*sdk.Error{"error": {Code: code, Message: msg}})
}
