package wasm

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/wasmabi"
	"github.com/scorekit/scorekit/sdk"
)

// plugin is one scorer of a loaded artifact.
type plugin struct {
	a     *artifact
	index uint32
	info  sdk.Info

	mu     sync.Mutex
	closed bool
}

var _ host.Plugin = (*plugin)(nil)

func (p *plugin) Info() sdk.Info  { return p.info }
func (p *plugin) Runtime() string { return host.RuntimeWASM }

// Open returns a backend for t that draws instances from t's pool for the artifact: a
// tenant's scorers of one artifact share its instances, each instance configuring a scorer
// the first time it serves it. The backend runs under the artifact's limits lowered by
// t.Limits. Open configures an instance right away, so a config the scorer rejects fails
// here.
func (p *plugin) Open(ctx context.Context, t host.Tenant, config json.RawMessage) (host.Backend, error) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("open %s: plugin %w", p.info.Name, ErrClosed)
	}
	tenant := t.Name
	if tenant == "" {
		tenant = host.DefaultTenant
	}
	pl, err := p.a.pool(tenant, p.a.limits.Lower(t.Limits))
	if err != nil {
		return nil, fmt.Errorf("open %s for tenant %q: %w", p.info.Name, tenant, err)
	}
	b := &backend{
		p:      p,
		pool:   pl,
		config: string(config),
		log:    p.a.log.With("scorer", p.info.Name, "tenant", tenant),
	}
	ctx, cancel := context.WithTimeout(ctx, pl.timeout())
	defer cancel()
	inst, err := b.acquire(ctx)
	if err != nil {
		pl.unref(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("open %s for tenant %q: %w", p.info.Name, tenant, err)
	}
	b.release(ctx, inst, true)
	return b, nil
}

// Close releases the plugin; the artifact's runtime closes with its last plugin.
func (p *plugin) Close(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	return p.a.release(ctx)
}

// poolKey identifies a pool: instances are never shared across tenants, nor across limits
// (an instance's memory limit is fixed when it is made).
type poolKey struct {
	tenant string
	limits host.Limits
}

// pool is one tenant's instances of one artifact, at most limits.PoolSize of them, shared
// by the backends the tenant opened on the artifact's scorers.
type pool struct {
	a      *artifact
	key    poolKey
	limits host.Limits
	// slots holds a token per instance in use, bounding the pool.
	slots chan struct{}

	mu     sync.Mutex
	idle   []*instance
	refs   int
	closed bool
	stats  PoolStats
}

// pool returns the pool of tenant at limits, making it on first use, with one more
// reference.
func (a *artifact) pool(tenant string, limits host.Limits) (*pool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refs == 0 {
		return nil, fmt.Errorf("artifact %s: %w", a.name, ErrClosed)
	}
	key := poolKey{tenant, limits}
	pl := a.pools[key]
	if pl == nil {
		pl = &pool{a: a, key: key, limits: limits, slots: make(chan struct{}, limits.PoolSize)}
		a.pools[key] = pl
	}
	pl.mu.Lock()
	pl.refs++
	pl.mu.Unlock()
	return pl, nil
}

func (pl *pool) timeout() time.Duration {
	return time.Duration(pl.limits.TimeoutMS) * time.Millisecond
}

// unref drops a backend's reference; the last one closes the idle instances.
func (pl *pool) unref(ctx context.Context) {
	pl.a.mu.Lock()
	pl.mu.Lock()
	pl.refs--
	var idle []*instance
	if pl.refs == 0 {
		pl.closed = true
		idle, pl.idle = pl.idle, nil
		pl.stats.Discarded += len(idle)
		delete(pl.a.pools, pl.key)
	}
	pl.mu.Unlock()
	pl.a.mu.Unlock()
	for _, inst := range idle {
		pl.forget(inst)
		inst.close(ctx)
	}
}

// forget removes a discarded instance's memory from the pool's count.
func (pl *pool) forget(inst *instance) {
	pl.mu.Lock()
	pl.stats.MemoryBytes -= inst.counted
	pl.stats.Instances--
	inst.counted = 0
	pl.mu.Unlock()
	pl.a.budget.drop(inst)
}

// backend is one tenant's configured scorer. It draws instances from the tenant's pool
// for the scorer's artifact; each instance serves one call at a time.
type backend struct {
	p      *plugin
	pool   *pool
	config string
	log    *slog.Logger

	mu     sync.Mutex
	closed bool
}

var _ host.Backend = (*backend)(nil)

// PoolStats counts what a pool (one tenant's instances of one artifact) did.
type PoolStats struct {
	// Created counts instances instantiated; Discarded those closed (trap, deadline,
	// N calls, memory threshold, pool closed, memory budget); Evicted those of them
	// closed while idle to keep the engine within Options.MemoryBudgetBytes.
	Created, Discarded, Evicted int
	// Idle counts instances waiting for a call; Instances counts live ones.
	Idle, Instances int
	// MemoryBytes is the linear memory of the live instances, as of their last call.
	MemoryBytes int
	// PeakInstanceBytes is the most linear memory one instance of the pool held after a
	// call.
	PeakInstanceBytes int
}

// Stats returns the counters of the backend's pool.
func (b *backend) Stats() PoolStats {
	pl := b.pool
	pl.mu.Lock()
	defer pl.mu.Unlock()
	s := pl.stats
	s.Idle = len(pl.idle)
	return s
}

// Score runs the guest on run under the pool's deadline (or ctx's, if earlier). A trap,
// deadline or invalid reply is returned as an *sdk.Error with its code, and the instance
// that produced it is discarded.
func (b *backend) Score(ctx context.Context, run *sdk.Run, judge sdk.Judge) (sdk.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, b.pool.timeout())
	defer cancel()
	if b.p.a.batch {
		items := [1]host.BatchItem{{Run: run, Judge: judge}}
		b.batch(ctx, items[:], 0, false)
		return items[0].Result, items[0].Err
	}
	inst, err := b.acquire(ctx)
	if err != nil {
		return sdk.Result{}, err
	}
	if ctx.Err() != nil { // the instance is sound; the call's time is gone
		b.release(ctx, inst, true)
		return sdk.Result{}, b.fail(inst, exitFor(ctx))
	}
	if b.p.a.binary {
		inst.payload, err = wasmabi.AppendRun(inst.payload[:0], run)
	} else {
		inst.payload, err = json.Marshal(run)
	}
	if err != nil {
		b.release(ctx, inst, true)
		return sdk.Result{}, &sdk.Error{Code: sdk.CodeInvalidRun, Message: "encode run: " + err.Error()}
	}
	res, keep, err := b.call(ctx, inst, inst.payload, judge)
	b.release(ctx, inst, keep)
	return res, err
}

func (b *backend) call(ctx context.Context, inst *instance, payload []byte, judge sdk.Judge) (res sdk.Result, keep bool, err error) {
	inst.calls++
	inst.state.judge, inst.state.info, inst.state.tenant = judge, &b.p.info, b.pool.key.tenant
	defer func() { inst.state.judge = nil; b.flushOutput(ctx, inst) }()
	ptr, err := inst.write(ctx, payload)
	if err != nil {
		return res, false, b.fail(inst, err)
	}
	var flags uint64
	if judge != nil {
		flags |= wasmabi.FlagJudge
	}
	if b.p.a.binary {
		flags |= wasmabi.FlagBinary
	}
	inst.stack = [4]uint64{uint64(b.p.index), flags, uint64(ptr), uint64(len(payload))}
	if err := inst.call(ctx, inst.score); err != nil {
		return res, false, b.fail(inst, err)
	}
	return b.decode(inst, inst.stack[0])
}

// decode reads and checks the result packed in v, reporting whether the instance may be
// kept: a reply over the size limit, outside memory or undecodable discards it; a
// well-formed but invalid result is the scorer's failure alone.
func (b *backend) decode(inst *instance, v uint64) (res sdk.Result, keep bool, err error) {
	view, err := inst.reply(v, b.pool.limits.MaxResultBytes)
	if err != nil {
		return res, false, err
	}
	if !b.p.a.binary {
		// JSON from the guest is checked against schemas/result.schema.json.
		res, err = host.DecodeResult(view)
		if err != nil {
			return sdk.Result{}, true, &sdk.Error{Code: sdk.CodeInvalidResult, Message: fmt.Sprintf("%s: %v", wasmabi.ExportScore, err)}
		}
		return res, true, nil
	}
	// The binary codec carries typed fields only; its decoder checks the encoding.
	if res, err = wasmabi.ReadResult(view); err != nil {
		return sdk.Result{}, false, &sdk.Error{Code: sdk.CodeInvalidResult, Message: fmt.Sprintf(
			"%s replied with an undecodable result (%v); see the binary codec in docs/ABI.md", wasmabi.ExportScore, err)}
	}
	if err := res.Validate(); err != nil {
		return sdk.Result{}, true, &sdk.Error{Code: sdk.CodeInvalidResult, Message: err.Error()}
	}
	return res, true, nil
}

// failure describes a failed guest call, output being what the guest wrote meanwhile. A
// trap or a deadline reached with the guest at its memory limit is the memory limit, and
// so is a Go guest's "out of memory" abort, which can come well below the limit when one
// allocation asks for more than is left.
func (inst *instance) failure(err error, output string) *sdk.Error {
	e := describe(err, output).(*sdk.Error)
	outOfMemory := e.Code == sdk.CodeTrap && strings.Contains(output, "out of memory") // a Go guest's abort
	if (e.Code == sdk.CodeTrap || e.Code == sdk.CodeTimeout) && inst.atMemoryLimit() || outOfMemory {
		e = &sdk.Error{Code: sdk.CodeLimitExceeded, Message: fmt.Sprintf(
			"memory limit of %d MiB reached (%s); raise limits.memory_mib in the manifest or use less memory",
			inst.limit>>20, e.Message)}
	}
	return e
}

// fail describes a failed guest call for the caller (inst.failure, with the scorer named
// on a timeout).
func (b *backend) fail(inst *instance, err error) error {
	kept, _ := inst.out.take()
	e := inst.failure(err, kept)
	if e.Code == sdk.CodeTimeout {
		e.Message = fmt.Sprintf("scorer %s %s", b.p.info.Name, e.Message)
	}
	return e
}

// flushOutput logs what the guest wrote to stdout/stderr during the call, capped.
func (b *backend) flushOutput(ctx context.Context, inst *instance) {
	kept, total := inst.out.take()
	if total == 0 {
		return
	}
	level := slog.LevelInfo
	if total > len(kept) {
		level = slog.LevelWarn
	}
	b.log.Log(ctx, level, "guest output", "bytes", total, "kept", len(kept), "truncated", total > len(kept), "text", kept)
}

// acquire takes a slot of the pool and an instance configured for this backend's scorer
// and config: an idle one that serves them already, else an idle one that has not served
// this scorer (configured now), else a new one.
func (b *backend) acquire(ctx context.Context) (*instance, error) {
	pl := b.pool
	select {
	case pl.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, describe(fmt.Errorf("wait for a pooled instance: %w", exitFor(ctx)), "")
	}
	for {
		inst, stale, err := b.take()
		if err != nil {
			<-pl.slots
			return nil, err
		}
		if stale != nil {
			pl.discard(ctx, stale)
		}
		if inst == nil {
			if inst, err = b.newInstance(ctx); err != nil {
				<-pl.slots
				return nil, err
			}
		}
		if !inst.lin.hold() { // the runtime closed under the idle instance
			pl.discard(ctx, inst)
			continue
		}
		if _, ok := inst.configured[b.p.index]; ok {
			return inst, nil
		}
		if ctx.Err() != nil { // the wait or the instantiation took the call's time
			b.release(ctx, inst, true)
			return nil, b.fail(inst, exitFor(ctx))
		}
		if err := b.configure(ctx, inst); err != nil {
			inst.lin.unhold()
			pl.discard(ctx, inst)
			<-pl.slots
			return nil, err
		}
		return inst, nil
	}
}

// take picks an idle instance for the backend (nil: make one) and, when every idle
// instance serves this scorer with another config, one to discard to make room.
func (b *backend) take() (inst, stale *instance, err error) {
	pl := b.pool
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if closed || pl.closed {
		return nil, nil, fmt.Errorf("score %s: backend %w", b.p.info.Name, ErrClosed)
	}
	pick := -1
	for i := len(pl.idle) - 1; i >= 0; i-- {
		cfg, ok := pl.idle[i].configured[b.p.index]
		if ok && cfg == b.config {
			pick = i
			break
		}
		if !ok && pick < 0 {
			pick = i
		}
	}
	if pick < 0 && len(pl.idle) > 0 && len(pl.idle)+len(pl.slots) > cap(pl.slots) {
		// Every idle instance serves this scorer with another config and the pool is
		// full: replace one.
		stale = pl.idle[0]
		pl.idle = pl.idle[1:]
		pl.a.budget.wake(stale)
	}
	if pick >= 0 {
		inst = pl.idle[pick]
		pl.idle = append(pl.idle[:pick], pl.idle[pick+1:]...)
		pl.a.budget.wake(inst)
	}
	return inst, stale, nil
}

// configure configures inst for the backend's scorer; a config the scorer rejects is an
// invalid config, anything else is the guest's failure.
func (b *backend) configure(ctx context.Context, inst *instance) error {
	err := inst.configureWith(ctx, b.p.index, []byte(b.config))
	if err == nil {
		return nil
	}
	if e, ok := err.(*sdk.Error); ok && e.Code != sdk.CodeTrap && e.Code != sdk.CodeTimeout && e.Code != sdk.CodeCanceled {
		return fmt.Errorf("configure %s: %s: %w", b.p.info.Name, e.Message, host.ErrInvalidConfig)
	}
	return fmt.Errorf("configure %s: %w", b.p.info.Name, b.fail(inst, err))
}

func (b *backend) newInstance(ctx context.Context) (*instance, error) {
	pl := b.pool
	// Room for the new instance's initial memory and its call stack's bound; what its
	// memory grows to is counted after each call.
	pl.a.budget.makeRoom(ctx, int64(pl.a.minMemory)+stackHostBytes(pl.limits.StackKiB))
	inst, err := pl.a.newInstance(ctx, pl.limits)
	if err != nil {
		return nil, err
	}
	inst.pool = pl
	pl.a.budget.charge(inst)
	pl.mu.Lock()
	pl.stats.Created++
	pl.stats.Instances++
	pl.mu.Unlock()
	return inst, nil
}

// discard closes an instance that will not serve again.
func (pl *pool) discard(ctx context.Context, inst *instance) {
	pl.forget(inst)
	pl.mu.Lock()
	pl.stats.Discarded++
	pl.mu.Unlock()
	inst.close(context.WithoutCancel(ctx))
}

// release returns inst to the pool, or closes it after a failure or an interrupt, after
// limits.max_calls calls, when its memory grew past three quarters of its limit, or when
// the pool closed.
func (b *backend) release(ctx context.Context, inst *instance, keep bool) {
	pl := b.pool
	mem := inst.memoryBytes()
	inst.lin.unhold()
	keep = keep && !inst.spent() && !inst.doubted && inst.calls < pl.limits.MaxCalls && mem <= inst.limit*3/4
	pl.mu.Lock()
	pl.stats.MemoryBytes += mem - inst.counted
	inst.counted = mem
	pl.stats.PeakInstanceBytes = max(pl.stats.PeakInstanceBytes, mem)
	pl.a.budget.charge(inst)
	kept := keep && !pl.closed
	if kept {
		pl.idle = append(pl.idle, inst)
		pl.a.budget.rest(inst)
	}
	pl.mu.Unlock()
	if !kept {
		pl.discard(ctx, inst)
	}
	<-pl.slots
	if kept {
		pl.a.budget.makeRoom(ctx, 0)
	}
}

// Close releases the backend. The pool's idle instances close with its last backend;
// instances in use close when their call returns.
func (b *backend) Close(ctx context.Context) error {
	b.mu.Lock()
	closed := b.closed
	b.closed = true
	b.mu.Unlock()
	if !closed {
		b.pool.unref(ctx)
	}
	return nil
}
