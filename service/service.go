// Package service is scorekit's evaluation service for a Go program that embeds it: a
// platform that keeps its agents' runs in its own database, evaluates them with scorekit's
// scorers and serves the results, in its own process. It is what `scorekit serve` runs,
// behind a small API:
//
//  1. [Open] the service with a [Config]: the database (a SQLite file or PostgreSQL), the
//     host that runs the scorers (package host, with plugins/builtin's scorers and any of
//     your own) and, optionally, the judge broker (host/broker) for the scorers that use an
//     LLM judge. Open migrates the database and starts the evaluation workers.
//  2. Serve [Service.Handler]: the HTTP API that docs/SERVICE.md describes and the
//     repository's openapi.json specifies (runs, evaluations, OTLP traces, insights,
//     labels, published scorers), and the dashboard if asked for.
//  3. Or call it directly: [Service.ImportRuns] stores runs, [Service.CreateEvaluation]
//     evaluates an agent's newest runs, [Service.Evaluation] reads an evaluation, its
//     per-scorer summary and its results.
//  4. [Service.Close] stops the workers and closes the database; the host and the judge
//     stay the caller's.
//
// Every method that reads or writes runs takes the tenant's name; "" is the open tenant,
// the one a handler with [HandlerOptions.Open] serves every request as. Another tenant's
// run or evaluation is [ErrNotFound], never data.
//
// The service checks a WASM module a tenant publishes (POST /v1/scorers) in a child process
// that is this program run again (host/wasm's Vet). A program that serves the handler
// calls wasm.VetChild first in its main, which runs that check when the program was
// started for it:
//
//	func main() {
//		if code, ok := wasm.VetChild(); ok {
//			os.Exit(code)
//		}
//		...
//	}
//
// The rest of the service (its store, jobs, telemetry, the command line's operations on
// tenants, keys, retention and labels) is internal: the command line uses all of it, and
// a Go program reaches it through the HTTP API, which is the service's contract.
package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	impl "github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/jobs"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/service/web"
)

// Errors callers branch on, with errors.Is; each message says what is wrong.
var (
	// ErrNotFound: no such tenant, run, agent or evaluation (or another tenant's).
	ErrNotFound = impl.ErrNotFound
	// ErrExists: the tenant exists already.
	ErrExists = impl.ErrExists
	// ErrInvalid: the request is malformed or out of range; the message says what to fix.
	ErrInvalid = impl.ErrInvalid
	// ErrUnknownScorer: the host has no scorer of that name.
	ErrUnknownScorer = impl.ErrUnknownScorer
	// ErrInvalidConfig: a scorer config does not match the scorer's config schema.
	ErrInvalidConfig = impl.ErrInvalidConfig
)

// Config is what [Open] opens a service with.
type Config struct {
	// DB is the database: a SQLite file, or a postgres:// URL. Open migrates it. Required.
	DB string
	// Host runs the scorers; its registry is what tenants choose from. Required.
	Host *host.Host
	// Judge is the judge broker behind Host's judge (given to it with host.WithJudge). The
	// service gives it each tenant's judge limits and records its model on the results of
	// the scorers that use it. Optional. Default is none: scorers that need a judge are
	// skipped with a reason.
	Judge *broker.Broker
	// Workers is how many evaluation jobs this process works at once. Optional. Default is
	// 4, as `scorekit serve`'s; a negative number works none, leaving the jobs to other
	// processes on the same database (`scorekit worker`).
	Workers int
	// Logger logs what goes wrong inside the jobs and the handler. Optional. Default is
	// slog.Default().
	Logger *slog.Logger
}

// defaultWorkers is Config.Workers's default.
const defaultWorkers = 4

// Service is an open evaluation service. It is safe for concurrent use.
type Service struct {
	svc    *impl.Service
	logger *slog.Logger
}

// Open opens the database at c.DB (migrating it) and starts c.Workers evaluation workers.
// Close releases what Open opened.
func Open(ctx context.Context, c Config) (*Service, error) {
	workers := c.Workers
	switch {
	case workers == 0:
		workers = defaultWorkers
	case workers < 0:
		workers = 0
	}
	logger := c.Logger
	if logger == nil {
		logger = slog.Default()
	}
	svc, err := impl.Open(ctx, impl.Config{DB: c.DB, Host: c.Host, Judge: c.Judge,
		Jobs: jobs.Options{Workers: workers, Logger: logger}})
	if err != nil {
		return nil, err
	}
	return &Service{svc: svc, logger: logger}, nil
}

// Close stops the workers (a job cut off runs again on the next start) and closes the
// database. The host and the judge stay open: they are the caller's.
func (s *Service) Close(ctx context.Context) error { return s.svc.Close(ctx) }

// HandlerOptions say what [Service.Handler] serves.
type HandlerOptions struct {
	// Open serves every request as the open tenant, without a key: one user, on a loopback
	// address. Optional. Default is false: every /v1 request carries a tenant's key
	// (Authorization: Bearer KEY; [Service.CreateKey]).
	Open bool
	// Dashboard serves the dashboard at / beside the API. Optional. Default is the API
	// alone.
	Dashboard bool
}

// Handler returns the service's HTTP API (and its dashboard when o.Dashboard), with the
// body caps, timeouts and per-tenant limits of `scorekit serve`'s defaults. Serve it with
// an http.Server of your own; it may be mounted beside other handlers.
func (s *Service) Handler(o HandlerOptions) (http.Handler, error) {
	h := http.Handler(api.New(s.svc, api.Options{Open: o.Open, Logger: s.logger}))
	if !o.Dashboard {
		return h, nil
	}
	d, err := web.New(s.svc, web.Options{Open: o.Open, Next: h, Logger: s.logger})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// CreateTenant creates a tenant. Names are 1-63 lower-case letters, digits, '.', '_' or
// '-', starting with a letter or digit; a name taken is [ErrExists].
func (s *Service) CreateTenant(ctx context.Context, name string) error {
	_, err := s.svc.CreateTenant(ctx, name, store.Policy{})
	return err
}

// CreateKey makes a new API key of the tenant, which may do everything the API offers
// for that tenant, and returns it. Only its hash is stored: this is the one time it can be
// read.
func (s *Service) CreateKey(ctx context.Context, tenant string) (string, error) {
	key, _, err := s.svc.CreateKey(ctx, tenant)
	return key, err
}

// ImportOptions say how [Service.ImportRuns] reads runs.
type ImportOptions struct {
	// Agent is given to runs that name none; a run that names another agent is rejected.
	// Optional. Default is none: every run names its agent.
	Agent string
}

// ImportResult says what an import stored.
type ImportResult struct {
	Stored int `json:"stored"`
	// Duplicates are runs the tenant has already (by id), which are kept as they were.
	Duplicates int `json:"duplicates"`
	Rejected   int `json:"rejected"`
	// Errors say, for each run rejected, its line and what is wrong with it.
	Errors []string `json:"errors,omitempty"`
	// Evaluations are the ids of the evaluations the runs joined on arrival (an agent's
	// policy set through the API).
	Evaluations []string `json:"evaluations,omitempty"`
}

// ImportRuns stores the tenant's runs from body: one run, a JSON array of runs, or JSON
// Lines (one run a line). Each run is checked against the run contract and the run limits;
// a bad run is rejected with its line and the reason, and the good ones are kept. A run
// without an id gets one derived from its content, so sending it again stores it once.
func (s *Service) ImportRuns(ctx context.Context, tenant string, body []byte, o ImportOptions) (ImportResult, error) {
	t, err := s.tenant(ctx, tenant)
	if err != nil {
		return ImportResult{}, err
	}
	r, err := s.svc.ImportRuns(ctx, t, body, impl.ImportOptions{Agent: o.Agent})
	if err != nil {
		return ImportResult{}, err
	}
	out := ImportResult{Stored: r.Stored, Duplicates: r.Duplicates, Rejected: r.Rejected, Evaluations: r.Evaluations}
	for _, run := range r.Runs {
		if run.Status == impl.RunRejected {
			out.Errors = append(out.Errors, fmt.Sprintf("line %d: %s", run.Line, run.Error))
		}
	}
	return out, nil
}

// EvaluationRequest says what [Service.CreateEvaluation] evaluates.
type EvaluationRequest struct {
	// Limit is how many of the agent's newest runs (by the run's time) to evaluate.
	// Required.
	Limit int
	// Scorers are the scorers to run. Optional. Default is the agent policy's, else
	// prescreen.
	Scorers []string
	// Config maps a scorer to its config. Optional.
	Config map[string]json.RawMessage
}

// Evaluation is an evaluation with its progress, a summary per scorer and, when read with
// [ReadOptions.Results], every result.
type Evaluation struct {
	ID    string `json:"id"`
	Agent string `json:"agent"`
	// Status is running until every result is stored, then done.
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	// Runs is how many runs the evaluation covers; ExpectedResults is runs x scorers,
	// DoneResults how many of them are stored.
	Runs            int64           `json:"runs"`
	ExpectedResults int64           `json:"expected_results"`
	DoneResults     int64           `json:"done_results"`
	Scorers         []ScorerSummary `json:"scorers"`
	Results         []Result        `json:"results,omitempty"`
}

// ScorerSummary sums up one scorer's results. The mean and the pass rate count scored
// results only: a skipped or failed result is never a score of 0.
type ScorerSummary struct {
	Name     string   `json:"name"`
	Version  string   `json:"version"`
	Scored   int64    `json:"scored"`
	Skipped  int64    `json:"skipped"`
	Failed   int64    `json:"failed"`
	Pending  int64    `json:"pending"`
	Mean     *float64 `json:"mean"`
	PassRate *float64 `json:"pass_rate"`
}

// Result is one scorer's result on one run.
type Result struct {
	RunID         string `json:"run_id"`
	Scorer        string `json:"scorer"`
	ScorerVersion string `json:"scorer_version"`
	// Status is scored, skipped or failed; Score and Passed are set when scored.
	Status string   `json:"status"`
	Score  *float64 `json:"score"`
	Passed *bool    `json:"passed"`
	Flags  []string `json:"flags,omitempty"`
	Reason string   `json:"reason,omitempty"`
}

// CreateEvaluation starts evaluating the agent's newest runs with the scorers asked for,
// checking each scorer and its config first, and returns the evaluation as it starts. The
// workers store its results; [Service.Evaluation] reads them.
func (s *Service) CreateEvaluation(ctx context.Context, tenant, agent string, req EvaluationRequest) (Evaluation, error) {
	t, err := s.tenant(ctx, tenant)
	if err != nil {
		return Evaluation{}, err
	}
	v, err := s.svc.CreateEvaluation(ctx, t, agent, impl.EvaluationRequest{Limit: req.Limit, Scorers: req.Scorers, Config: req.Config})
	if err != nil {
		return Evaluation{}, err
	}
	return evaluation(v), nil
}

// ReadOptions say how [Service.Evaluation] reads an evaluation.
type ReadOptions struct {
	// Wait is how long to wait for the evaluation to be done before answering. Optional.
	// Default is 0: the evaluation as it is.
	Wait time.Duration
	// Results includes every result. Optional. Default is the summary alone.
	Results bool
}

// Evaluation returns the tenant's evaluation id.
func (s *Service) Evaluation(ctx context.Context, tenant, id string, o ReadOptions) (Evaluation, error) {
	t, err := s.tenant(ctx, tenant)
	if err != nil {
		return Evaluation{}, err
	}
	v, err := s.svc.WaitEvaluation(ctx, t, id, o.Wait, impl.ViewOptions{Results: o.Results})
	if err != nil {
		return Evaluation{}, err
	}
	return evaluation(v), nil
}

// tenant is the tenant of name: the open tenant for "".
func (s *Service) tenant(ctx context.Context, name string) (store.Tenant, error) {
	if name == "" {
		return s.svc.Open(ctx)
	}
	t, err := s.svc.Tenant(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return t, fmt.Errorf("no tenant %q (create it with CreateTenant): %w", name, ErrNotFound)
	}
	return t, err
}

// evaluation is the facade's view of the service's.
func evaluation(v impl.EvaluationView) Evaluation {
	e := Evaluation{ID: v.ID, Agent: v.Agent, Status: v.Status, CreatedAt: v.CreatedAt,
		Runs: v.Runs, ExpectedResults: v.ExpectedResults, DoneResults: v.DoneResults}
	for _, sc := range v.Scorers {
		e.Scorers = append(e.Scorers, ScorerSummary{Name: sc.Name, Version: sc.Version, Scored: sc.Scored, Skipped: sc.Skipped,
			Failed: sc.Failed, Pending: sc.Pending, Mean: sc.Mean, PassRate: sc.PassRate})
	}
	for _, r := range v.Results {
		e.Results = append(e.Results, Result{RunID: r.RunID, Scorer: r.Scorer, ScorerVersion: r.ScorerVersion,
			Status: r.Status, Score: r.Score, Passed: r.Passed, Flags: r.Flags, Reason: r.Reason})
	}
	return e
}
