// Package api is the evaluation service over HTTP, described by an OpenAPI 3.1 document
// derived from its Go types (github.com/danielgtaylor/huma/v2), served at /openapi.json
// and checked in as openapi.json at the repository's root, where the clients' generators
// and the docs read it.
//
// Every /v1 request carries Authorization: Bearer KEY; the key's tenant scopes every read
// and write, so another tenant's run, agent or evaluation is a 404, never data. Errors are
// RFC 9457 problem details with a stable code ([Problem]). Request bodies are validated
// against the contract's JSON Schemas (the run schema under schemas/) before a handler
// sees them; bodies have size limits; a tenant's request rate and the requests in flight
// are capped (429 and 503 with Retry-After).
//
// The insights (GET /v1/agents/{agent}/insights, GET /v1/insights) show what the insight
// engine (internal/service/insights) found, with its evidence.
package api

//go:generate go run ./internal/genopenapi -out ../../../openapi.json

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"golang.org/x/sync/semaphore"
	"golang.org/x/time/rate"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/otlpcheck"
	"github.com/scorekit/scorekit/internal/service/store"
)

// Defaults of Options.
const (
	DefaultMaxBodyBytes = 16 << 20
	DefaultMaxWait      = 60 * time.Second
	DefaultMaxInFlight  = 256
	// DefaultMaxBodiesPerTenant is Options.MaxBodiesPerTenant's default.
	DefaultMaxBodiesPerTenant = 16
)

// Options configure a Server. Zero fields take the defaults.
type Options struct {
	// Open serves every request as the open tenant without a key: one user on loopback.
	// The command line allows it only on a loopback address with no key in the store.
	Open bool
	// MaxBodyBytes caps a request body (a batch of runs). Optional. Default is 16 MiB.
	MaxBodyBytes int64
	// MaxWait caps ?wait on GET /v1/evaluations/{id}. Optional. Default is 60s.
	MaxWait time.Duration
	// MaxInFlight caps the requests being handled at once; more get 503 with
	// Retry-After. Optional. Default is 256.
	MaxInFlight int
	// MaxInFlightPerTenant caps one tenant's requests being handled at once, so that one
	// tenant cannot take every slot of MaxInFlight; more get 429 with Retry-After, before
	// their bodies are read. Optional. Default is a quarter of MaxInFlight (all of it for
	// an Open server, whose one user is every tenant).
	MaxInFlightPerTenant int
	// MaxBodiesPerTenant caps one tenant's requests in flight that carry a body: a client
	// that sends its body slowly holds a slot until the read timeout, and this bounds how
	// many it can hold while its other requests keep the rest of its share. More get 429
	// with Retry-After before their bodies are read. Optional. Default is
	// DefaultMaxBodiesPerTenant, at most MaxInFlightPerTenant.
	MaxBodiesPerTenant int
	// MaxTraceBodyBytes caps a POST /v1/traces body (OTLP), as sent and after
	// decompression. Optional. Default is DefaultMaxTraceBodyBytes.
	MaxTraceBodyBytes int64
	// MaxTraceDepth bounds how deep a value in a POST /v1/traces request nests (an array
	// or map in an attribute's value is one level); deeper is answered 400 before the
	// request is decoded. Optional. Default is otlpcheck.DefaultMaxDepth.
	MaxTraceDepth int
	// MaxTraceRequestBytes caps what one POST /v1/traces request holds while it is taken
	// (its body, the request decoded, and what taking its spans adds), as estimated from
	// its body before it is decoded; more is answered 413. Optional. Default is
	// DefaultMaxTraceRequestBytes.
	MaxTraceRequestBytes int64
	// MaxTraceBytesInFlight caps what the POST /v1/traces requests being taken hold
	// together, as MaxTraceRequestBytes counts it. A request that finds no room within
	// TraceBudgetWait is answered 503 with Retry-After. Optional. Default is
	// DefaultMaxTraceBytesInFlight.
	MaxTraceBytesInFlight int64
	// TraceBudgetWait is how long a POST /v1/traces request waits for room within
	// MaxTraceBytesInFlight. Optional. Default is DefaultTraceBudgetWait.
	TraceBudgetWait time.Duration
	// Version is the API document's version. Optional.
	Version string
	// Logger logs internal errors. Optional. Default is slog.Default().
	Logger *slog.Logger
}

// Server is the HTTP API of a service.
type Server struct {
	svc      *service.Service
	opts     Options
	api      huma.API
	mux      *http.ServeMux
	inflight chan struct{}
	// traceBytes is MaxTraceBytesInFlight, taken by the OTLP requests being handled.
	traceBytes *semaphore.Weighted

	mu       sync.Mutex
	limiters map[int64]*tenantLimiter
	// held counts each tenant's requests in flight and bodies arriving.
	held map[int64]*held
}

// held is what one tenant holds of the server.
type held struct{ inFlight, bodies int }

type tenantLimiter struct {
	rps float64
	l   *rate.Limiter
}

type tenantKey struct{}

// New returns the API of svc. svc may be nil to build the OpenAPI document only.
func New(svc *service.Service, o Options) *Server {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxTraceBodyBytes <= 0 {
		o.MaxTraceBodyBytes = DefaultMaxTraceBodyBytes
	}
	if o.MaxTraceDepth <= 0 {
		o.MaxTraceDepth = otlpcheck.DefaultMaxDepth
	}
	if o.MaxTraceRequestBytes <= 0 {
		o.MaxTraceRequestBytes = DefaultMaxTraceRequestBytes
	}
	if o.MaxTraceBytesInFlight <= 0 {
		o.MaxTraceBytesInFlight = DefaultMaxTraceBytesInFlight
	}
	if o.TraceBudgetWait <= 0 {
		o.TraceBudgetWait = DefaultTraceBudgetWait
	}
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.MaxInFlightPerTenant <= 0 {
		o.MaxInFlightPerTenant = max(1, o.MaxInFlight/4)
		if o.Open {
			o.MaxInFlightPerTenant = o.MaxInFlight
		}
	}
	if o.MaxBodiesPerTenant <= 0 {
		o.MaxBodiesPerTenant = min(DefaultMaxBodiesPerTenant, o.MaxInFlightPerTenant)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Version == "" {
		o.Version = "1"
	}
	// huma's error constructor is a package variable: every API in this process answers
	// problems the same way.
	huma.NewErrorWithContext = newProblem
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		return newProblem(nil, status, msg, errs...)
	}

	cfg := huma.DefaultConfig("scorekit evaluation service", o.Version)
	cfg.OpenAPIPath = "/openapi"
	cfg.DocsPath = ""
	cfg.SchemasPath = ""
	cfg.CreateHooks = nil // no $schema links in bodies
	cfg.RejectUnknownQueryParameters = true
	cfg.Info.Description = "Stores the runs of every agent, evaluates an agent's newest runs with scorekit's scorers, " +
		"and keeps every result with its scorer's version. Authenticate with Authorization: Bearer KEY " +
		"(scorekit keys create --tenant NAME)."
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"bearer": {Type: "http", Scheme: "bearer", Description: "An API key made by scorekit keys create --tenant NAME --scope SCOPE; it names the tenant. " +
			"Each operation's security requirement names the scope it needs (also in its " + ScopeExtension + " extension): " +
			"ingest writes runs only, read reads only (runs, evaluations, results, insights, policies), admin does everything. " +
			"A key without the scope gets 403 insufficient_scope."},
	}
	s := &Server{svc: svc, opts: o, mux: http.NewServeMux(), inflight: make(chan struct{}, o.MaxInFlight),
		traceBytes: semaphore.NewWeighted(o.MaxTraceBytesInFlight),
		limiters:   map[int64]*tenantLimiter{}, held: map[int64]*held{}}
	s.api = humago.New(s.mux, cfg)
	s.api.UseMiddleware(s.authenticate)
	s.register()
	return s
}

// Huma is the huma API, for packages that add operations (the insights).
func (s *Server) Huma() huma.API { return s.api }

// OpenAPI returns the API's OpenAPI 3.1 document as indented JSON.
func (s *Server) OpenAPI() ([]byte, error) {
	b, err := json.MarshalIndent(s.api.OpenAPI(), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ServeHTTP serves the API within the in-flight cap. A health probe is outside it: it
// holds nothing, and an orchestrator that sees 503 there restarts a server that is only
// busy.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" && r.Method == http.MethodGet {
		s.mux.ServeHTTP(w, r)
		return
	}
	select {
	case s.inflight <- struct{}{}:
		defer func() { <-s.inflight }()
	default:
		closeUnread(w.Header(), r)
		p := problem(http.StatusServiceUnavailable, CodeOverloaded,
			"the server is handling as many requests as it takes; retry after the time in Retry-After")
		if isTracesRequest(r) {
			writeOTLPTo(w, r, p, "1")
		} else {
			writeProblem(w, p, "1")
		}
		return
	}
	if s.refuseLargeTraces(w, r) {
		return
	}
	// The API takes no forms: a body sent as a form is what curl -d sends by default, and
	// it is JSON (or JSONL) here.
	if ct := r.Header.Get("Content-Type"); ct == "" || strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		r.Header.Set("Content-Type", "application/json")
	}
	s.mux.ServeHTTP(w, r)
}

// writeProblem writes p outside huma (before routing).
func writeProblem(w http.ResponseWriter, p *Problem, retryAfter string) {
	w.Header().Set("Content-Type", "application/problem+json")
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

// ScopeExtension is the OpenAPI extension on every operation that needs a key: the scope
// the key must have (the operation's security requirement names it too).
const ScopeExtension = "x-scorekit-scope"

// needs is the security requirement of an operation that needs a key of scope: OpenAPI
// 3.1 lets a requirement of a non-OAuth scheme list the roles it needs.
func needs(scope store.Scope) []map[string][]string {
	return []map[string][]string{{"bearer": {string(scope)}}}
}

// scopeOf is the scope op needs: the role its security requirement names.
func scopeOf(op *huma.Operation) store.Scope {
	for _, req := range op.Security {
		for _, roles := range req {
			if len(roles) > 0 {
				return store.Scope(roles[0])
			}
		}
	}
	// An operation with a security requirement that names no scope is admin's alone, so
	// a route registered without one is closed, not open.
	return store.ScopeAdmin
}

// authenticate finds the tenant of the request's key for operations that need one, holds
// the key to the operation's scope and the tenant to its request rate.
func (s *Server) authenticate(ctx huma.Context, next func(huma.Context)) {
	op := ctx.Operation()
	if op == nil || len(op.Security) == 0 || s.svc == nil {
		next(ctx)
		return
	}
	var (
		t     store.Tenant
		scope = store.ScopeAdmin // open mode: the one user does everything
		err   error
		// who the audit log records: the key's id, never the key
		who = "open"
		key string
	)
	if s.opts.Open {
		t, err = s.svc.Open(ctx.Context())
	} else {
		var ok bool
		key, ok = bearerKey(ctx.Header("Authorization"))
		if !ok && ctx.Header("Authorization") != "" {
			err = &Problem{Title: http.StatusText(401), Status: 401, Code: CodeUnauthorized, Detail: "the Authorization header must be Bearer KEY"}
		} else {
			t, scope, err = s.svc.Authenticate(ctx.Context(), strings.TrimSpace(key))
			who = service.KeyActor(strings.TrimSpace(key))
		}
	}
	if need := scopeOf(op); err == nil && !scope.Grants(need) {
		ctx.SetHeader("WWW-Authenticate", `Bearer realm="scorekit", error="insufficient_scope", scope="`+string(need)+`"`)
		how := "scorekit keys create --tenant " + t.Name + " --scope " + string(need)
		if need == store.ScopeLabel {
			how += " --labeller NAME, or --scope admin"
		}
		err = problem(http.StatusForbidden, CodeInsufficientScope, fmt.Sprintf(
			"%s %s needs a key with scope %s; this key has scope %s. Use a key with scope %s (%s)",
			op.Method, op.Path, need, scope, need, how))
	}
	r, _ := humago.Unwrap(ctx)
	if err != nil {
		p := s.problemOf(err)
		if p.Status == http.StatusUnauthorized {
			ctx.SetHeader("WWW-Authenticate", `Bearer realm="scorekit"`)
		}
		s.refuse(ctx, r, p, "")
		return
	}
	if !s.allow(t) {
		s.refuse(ctx, r, problem(http.StatusTooManyRequests, CodeRateLimited,
			"tenant "+strconv.Quote(t.Name)+" is over its request rate of "+strconv.FormatFloat(t.Policy.RequestsPerSecond, 'g', -1, 64)+" per second; retry after the time in Retry-After"), "1")
		return
	}
	release, refusal := s.admit(t, r)
	if refusal != nil {
		s.refuse(ctx, r, refusal, "1")
		return
	}
	defer release()
	ctx = huma.WithValue(huma.WithValue(ctx, tenantKey{}, t), actorKey{}, who)
	if scope == store.ScopeLabel {
		// A label key writes its own labeller's labels only (service.AsLabeller).
		labeller, err := s.svc.KeyLabeller(ctx.Context(), strings.TrimSpace(key))
		if err != nil {
			s.refuse(ctx, r, s.problemOf(err), "")
			return
		}
		ctx = huma.WithContext(ctx, service.AsLabeller(ctx.Context(), labeller))
	}
	next(ctx)
}

// refuse answers p before the request's body is read; the connection closes after it,
// so the server does not read a body it refused (Go's server would read up to 256 KiB
// of it first, at the sender's pace).
func (s *Server) refuse(ctx huma.Context, r *http.Request, p *Problem, retryAfter string) {
	if retryAfter != "" {
		ctx.SetHeader("Retry-After", retryAfter)
	}
	if r != nil && hasBody(r) {
		ctx.SetHeader("Connection", "close")
	}
	s.write(ctx, p)
}

// closeUnread asks for the connection to close after the answer when r's body is unread.
func closeUnread(h http.Header, r *http.Request) {
	if hasBody(r) {
		h.Set("Connection", "close")
	}
}

func hasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
}

// admit holds the tenant to its share of the server: its requests in flight
// (MaxInFlightPerTenant), and of those, the ones that carry a body (MaxBodiesPerTenant),
// so that neither many requests nor slow bodies of one tenant take every slot. A request
// over either cap is refused before its body is read. release gives back what admit
// took. (The body's slot is held until the request is handled, not only until the body
// is read: counting reads would mean wrapping the body, which hides from net/http
// whether a refused body was left unread, and it then reuses a connection that still
// carries it.)
func (s *Server) admit(t store.Tenant, r *http.Request) (release func(), refusal *Problem) {
	body := r != nil && hasBody(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.held[t.ID]
	if h == nil {
		h = &held{}
		s.held[t.ID] = h
	}
	switch {
	case h.inFlight >= s.opts.MaxInFlightPerTenant:
		return nil, problem(http.StatusTooManyRequests, CodeRateLimited, fmt.Sprintf(
			"tenant %q has %d requests in flight, its share of the server; retry after the time in Retry-After", t.Name, h.inFlight))
	case body && h.bodies >= s.opts.MaxBodiesPerTenant:
		return nil, problem(http.StatusTooManyRequests, CodeRateLimited, fmt.Sprintf(
			"tenant %q has %d requests with bodies in flight, its share of the server; send bodies at full speed, or retry after the time in Retry-After", t.Name, h.bodies))
	}
	h.inFlight++
	if body {
		h.bodies++
	}
	return func() {
		s.mu.Lock()
		h.inFlight--
		if body {
			h.bodies--
		}
		if h.inFlight == 0 {
			delete(s.held, t.ID)
		}
		s.mu.Unlock()
	}, nil
}

// bearerKey returns the key of an Authorization header "Bearer KEY"; the scheme is
// case-insensitive (RFC 9110, section 11.1), the key is not.
func bearerKey(h string) (string, bool) {
	scheme, key, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return key, true
}

func (s *Server) write(ctx huma.Context, p *Problem) {
	if isTraces(ctx.Operation()) {
		writeOTLP(ctx, p)
		return
	}
	ctx.SetHeader("Content-Type", "application/problem+json")
	ctx.SetStatus(p.Status)
	_ = json.NewEncoder(ctx.BodyWriter()).Encode(p)
}

// allow applies the tenant's request rate.
func (s *Server) allow(t store.Tenant) bool {
	rps := t.Policy.RequestsPerSecond
	if rps <= 0 {
		return true
	}
	s.mu.Lock()
	tl, ok := s.limiters[t.ID]
	if !ok || tl.rps != rps {
		tl = &tenantLimiter{rps: rps, l: rate.NewLimiter(rate.Limit(rps), max(1, int(rps)))}
		s.limiters[t.ID] = tl
	}
	s.mu.Unlock()
	return tl.l.Allow()
}

// tenant is the request's tenant, set by authenticate.
func tenant(ctx context.Context) store.Tenant {
	t, _ := ctx.Value(tenantKey{}).(store.Tenant)
	return t
}

// problemOf maps err to a Problem, logging what the caller must not see.
func (s *Server) problemOf(err error) *Problem {
	if p := fromService(err); p != nil {
		return p
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return problem(http.StatusServiceUnavailable, CodeOverloaded, "the request was cancelled or ran out of time; retry it")
	}
	s.opts.Logger.Error("api: internal error", "err", err)
	return problem(http.StatusInternalServerError, CodeInternal, "internal error; the server log has the cause")
}

// fail is what handlers return for a service error.
func (s *Server) fail(err error) error { return s.problemOf(err) }

// bodyOutput is an answer that is its body and nothing else (huma documents the body's
// type, not this one).
type bodyOutput[T any] struct{ Body T }

// reply is a handler's answer to what the service returned: v as the body, or err as
// fail makes it.
func reply[T any](s *Server, v T, err error) (*bodyOutput[T], error) {
	if err != nil {
		return nil, s.fail(err)
	}
	return &bodyOutput[T]{Body: v}, nil
}
