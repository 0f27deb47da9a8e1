// Package scorers keeps the scorers the service has opened, one per (tenant, scorer,
// config, tenant limits), in a bounded cache shared by API requests and evaluation jobs:
// a scorer is opened once and reused, never per request. Opening a WASM instance pool or
// starting a plugin process per request costs milliseconds and memory; a per-request
// config must not turn into one.
//
// Opening for a tenant is where the tenant's policy reaches the runtimes and the judge
// broker: the scorer is opened with host.OpenOptions{Tenant, Limits}, and the tenant's
// judge limits are given to the broker before its first call.
package scorers

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/service/store"
)

// ErrNotAllowed is wrapped when a tenant's policy does not let it run a scorer.
var ErrNotAllowed = errors.New("scorer not allowed by the tenant's policy")

// DefaultSize is the cache's default capacity.
const DefaultSize = 256

// JudgeLimiter sets a tenant's judge limits; *broker.Broker is one.
type JudgeLimiter interface {
	SetTenantLimits(tenant string, l broker.Limits) error
}

// Cache opens scorers for tenants and keeps them. It is safe for concurrent use.
type Cache struct {
	h     *host.Host
	judge JudgeLimiter // nil: no broker
	size  int
	pub   *Published // nil: the host's scorers only

	mu      sync.Mutex
	entries map[string]*entry
	lru     *list.List // of *entry, most recently used first
	closed  bool
}

type entry struct {
	key   string
	elem  *list.Element
	refs  int
	ready chan struct{} // closed once sc or err is set
	sc    *host.Scorer
	err   error
	// close releases what the scorer was opened from (a tenant's module), after it.
	close func(context.Context) error
}

// New returns a cache of at most size scorers (DefaultSize when size <= 0) opened on h.
// judge, when not nil, receives each tenant's judge limits.
func New(h *host.Host, judge JudgeLimiter, size int, opts ...Option) *Cache {
	if size <= 0 {
		size = DefaultSize
	}
	c := &Cache{h: h, judge: judge, size: size, entries: map[string]*entry{}, lru: list.New()}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Host is the host the cache opens scorers on.
func (c *Cache) Host() *host.Host { return c.h }

// Get returns the tenant's scorer name opened with config, and a func to call when done
// with it. An error wraps host.ErrUnknownScorer, ErrNotAllowed or host.ErrInvalidConfig.
func (c *Cache) Get(ctx context.Context, t store.Tenant, name string, config json.RawMessage) (*host.Scorer, func(), error) {
	// An unknown scorer is unknown whatever the policy says.
	if _, err := c.h.Registry().Lookup(name); err != nil {
		return nil, nil, err
	}
	if !t.Policy.Allows(name) {
		return nil, nil, fmt.Errorf("scorer %q: %w (allowed: %v)", name, ErrNotAllowed, t.Policy.Scorers)
	}
	key, err := cacheKey(t, name, config)
	if err != nil {
		return nil, nil, err
	}
	return c.get(ctx, t, key, func(ctx context.Context) (*host.Scorer, func(context.Context) error, error) {
		sc, err := c.h.Open(ctx, name, host.OpenOptions{Tenant: t.Name, Limits: t.Policy.Limits, Config: config})
		return sc, nil, err
	})
}

// get returns the scorer kept under key, opening it with open the first time.
func (c *Cache) get(ctx context.Context, t store.Tenant, key string, open func(context.Context) (*host.Scorer, func(context.Context) error, error)) (*host.Scorer, func(), error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, nil, errors.New("scorers: cache closed")
	}
	e, ok := c.entries[key]
	if ok {
		e.refs++
		c.lru.MoveToFront(e.elem)
		c.mu.Unlock()
		<-e.ready
		if e.err != nil {
			c.release(e)
			return nil, nil, e.err
		}
		return e.sc, func() { c.release(e) }, nil
	}
	e = &entry{key: key, refs: 1, ready: make(chan struct{})}
	e.elem = c.lru.PushFront(e)
	c.entries[key] = e
	c.mu.Unlock()

	if c.judge != nil {
		j := t.Policy.Judge
		e.err = c.judge.SetTenantLimits(t.Name, broker.Limits{MaxConcurrency: j.MaxConcurrency, RequestsPerSecond: j.RequestsPerSecond, Burst: j.Burst, TokenBudget: j.TokenBudget})
	}
	if e.err == nil {
		// The scorer outlives the request or job that opened it.
		e.sc, e.close, e.err = open(context.WithoutCancel(ctx))
	}
	close(e.ready)
	if e.err != nil {
		// Errors are not kept: the next call tries again (and a fixed plugin opens).
		c.mu.Lock()
		if c.entries[key] == e {
			delete(c.entries, key)
			c.lru.Remove(e.elem)
		}
		c.mu.Unlock()
		return nil, nil, e.err
	}
	c.evict(ctx)
	return e.sc, func() { c.release(e) }, nil
}

// cacheKey is tenant, scorer, the config as compact JSON and the tenant's limits: a
// changed policy opens a new scorer; the old one ages out.
func cacheKey(t store.Tenant, name string, config json.RawMessage) (string, error) {
	var cfg bytes.Buffer
	if len(bytes.TrimSpace(config)) > 0 {
		if err := json.Compact(&cfg, config); err != nil {
			return "", fmt.Errorf("%w: config of %s: %v", host.ErrInvalidConfig, name, err)
		}
	}
	lim, _ := json.Marshal([]any{t.Policy.Limits, t.Policy.Judge})
	return fmt.Sprintf("%s\x00%s\x00%s\x00%s", t.Name, name, cfg.Bytes(), lim), nil
}

func (c *Cache) release(e *entry) {
	c.mu.Lock()
	e.refs--
	c.mu.Unlock()
	c.evict(context.Background())
}

// evict closes the least recently used scorers nobody holds while the cache is over size.
func (c *Cache) evict(ctx context.Context) {
	var drop []*entry
	c.mu.Lock()
	for el := c.lru.Back(); el != nil && c.lru.Len() > c.size; {
		e := el.Value.(*entry)
		prev := el.Prev()
		if e.refs == 0 && e.sc != nil {
			c.lru.Remove(el)
			delete(c.entries, e.key)
			drop = append(drop, e)
		}
		el = prev
	}
	c.mu.Unlock()
	for _, e := range drop {
		_ = e.closeAll(context.WithoutCancel(ctx))
	}
}

// Len is how many scorers are open.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Close closes every scorer; Get fails after it.
func (c *Cache) Close(ctx context.Context) error {
	c.mu.Lock()
	c.closed = true
	var errs []error
	var all []*entry
	for _, e := range c.entries {
		all = append(all, e)
	}
	clear(c.entries)
	c.lru.Init()
	c.mu.Unlock()
	for _, e := range all {
		<-e.ready
		errs = append(errs, e.closeAll(ctx))
	}
	return errors.Join(errs...)
}

// closeAll closes the entry's scorer, then what it was opened from.
func (e *entry) closeAll(ctx context.Context) error {
	var errs []error
	if e.sc != nil {
		errs = append(errs, e.sc.Close(ctx))
	}
	if e.close != nil {
		errs = append(errs, e.close(ctx))
	}
	return errors.Join(errs...)
}
