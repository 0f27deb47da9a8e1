// Package service is scorekit's evaluation service: it keeps the runs of every agent of
// every tenant, evaluates them on request (an agent's last N runs) or as they arrive (by
// a per-agent policy), and answers with results, summaries and each result's history.
//
// It is the facade the HTTP API (service/api) and the command line (scorekit tenants,
// keys, runs import, eval) share, over three rooms each testable alone: service/store (the
// data, SQLite or PostgreSQL), service/jobs (evaluation work on River) and
// service/scorers (scorers opened once per tenant, scorer and config).
//
// Every method that reads or writes tenant data takes the tenant: another tenant's run,
// agent or evaluation is [ErrNotFound], never data.
package service

import (
	"errors"
	"fmt"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/service/jobs"
	"github.com/scorekit/scorekit/service/scorers"
	"github.com/scorekit/scorekit/service/store"
)

// Errors callers branch on; the HTTP API maps each to a status and a stable code.
var (
	// ErrNotFound: no such run, agent, evaluation or policy for this tenant.
	ErrNotFound = store.ErrNotFound
	// ErrExists: the tenant exists already.
	ErrExists = store.ErrExists
	// ErrUnauthorized: no key, or a key that is unknown or revoked.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrInvalid: the request is malformed or out of range; the message says what to fix.
	ErrInvalid = errors.New("invalid request")
	// ErrUnknownScorer: no scorer of that name.
	ErrUnknownScorer = host.ErrUnknownScorer
	// ErrNotAllowed: the tenant's policy does not allow the scorer.
	ErrNotAllowed = scorers.ErrNotAllowed
	// ErrInvalidConfig: a scorer config does not match the scorer's config schema.
	ErrInvalidConfig = host.ErrInvalidConfig
)

// invalid returns an error wrapping ErrInvalid with a message that says what to fix.
func invalid(format string, args ...any) error {
	return &Error{kind: ErrInvalid, msg: fmt.Sprintf(format, args...)}
}

// Error is an error whose message is meant for the caller as it is (no prefixes).
type Error struct {
	kind error
	msg  string
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.kind }

// Defaults of Options.
const (
	DefaultMaxRunsPerEvaluation = 10000
	DefaultMaxRunBytes          = 1 << 20
)

// Options configure a Service. Zero fields take the defaults.
type Options struct {
	// MaxRunsPerEvaluation caps an evaluation's limit unless the tenant's policy sets
	// its own. Optional. Default is DefaultMaxRunsPerEvaluation.
	MaxRunsPerEvaluation int
	// MaxRunBytes caps one run's JSON unless the tenant's policy sets its own. Optional.
	// Default is DefaultMaxRunBytes.
	MaxRunBytes int
	// DefaultScorers are evaluated when a request names none and the agent has no
	// policy. Optional. Default is prescreen.
	DefaultScorers []string
}

// Service is the evaluation service. It is safe for concurrent use.
type Service struct {
	st   *store.Store
	eng  *jobs.Engine
	sc   *scorers.Cache
	opts Options
}

// New returns a service over st that enqueues on eng and opens scorers through sc.
func New(st *store.Store, eng *jobs.Engine, sc *scorers.Cache, o Options) *Service {
	if o.MaxRunsPerEvaluation <= 0 {
		o.MaxRunsPerEvaluation = DefaultMaxRunsPerEvaluation
	}
	if o.MaxRunBytes <= 0 {
		o.MaxRunBytes = DefaultMaxRunBytes
	}
	if len(o.DefaultScorers) == 0 {
		o.DefaultScorers = []string{jobs.PrescreenScorer}
	}
	return &Service{st: st, eng: eng, sc: sc, opts: o}
}

// Store is the service's store.
func (s *Service) Store() *store.Store { return s.st }

// Scorers is the service's scorer cache.
func (s *Service) Scorers() *scorers.Cache { return s.sc }

func (s *Service) maxRuns(t store.Tenant) int {
	if t.Policy.MaxRunsPerEvaluation > 0 {
		return t.Policy.MaxRunsPerEvaluation
	}
	return s.opts.MaxRunsPerEvaluation
}

func (s *Service) maxRunBytes(t store.Tenant) int {
	if t.Policy.MaxRunBytes > 0 {
		return t.Policy.MaxRunBytes
	}
	return s.opts.MaxRunBytes
}
