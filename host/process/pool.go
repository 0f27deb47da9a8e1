package process

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/scorekit/scorekit/host"
)

// poolKey picks a pool: processes are never shared across tenants, nor between limits
// (a process's rlimits are set when it starts).
type poolKey struct {
	tenant string
	lim    host.Limits
}

// pool is one tenant's processes of an artifact: up to lim.PoolSize, each serving every
// scorer of the artifact, one call at a time.
type pool struct {
	a     *artifact
	key   poolKey
	lim   host.Limits
	log   *slog.Logger
	slots chan struct{} // one per process that may be busy or idle

	users int // open backends; guarded by a.mu

	mu     sync.Mutex
	idle   []*proc
	live   map[*proc]struct{}
	closed bool

	stopping sync.WaitGroup // processes being stopped off the call path; close waits
}

// errClosed: the backend or its pool was closed.
var errClosed = errors.New("closed")

// cpuCheckEvery is how often (in calls) a process's CPU time is read against
// Limits.CPUSeconds.
const cpuCheckEvery = 64

func newPool(a *artifact, k poolKey) *pool {
	return &pool{
		a:     a,
		key:   k,
		lim:   k.lim,
		log:   a.log.With("tenant", k.tenant),
		slots: make(chan struct{}, max(1, k.lim.PoolSize)),
		live:  map[*proc]struct{}{},
	}
}

// acquire returns an idle process or starts one, waiting while the pool is busy; ctx
// bounds the wait and the start.
func (p *pool) acquire(ctx context.Context) (*proc, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return nil, errClosed
	}
	for len(p.idle) > 0 {
		pr := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if !pr.r.exited() {
			p.mu.Unlock()
			return pr, nil
		}
		// Died while idle: replace it without failing anyone's call.
		delete(p.live, pr)
		p.log.Warn("plugin process exited while idle; starting another", "pid", pr.pid)
		p.stopLater(pr)
	}
	p.mu.Unlock()

	// A start the caller gave up on keeps its slot until it has finished.
	pr, err := p.a.startBounded(ctx, p.lim, p.log, func() { <-p.slots })
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		pr.stop()
		<-p.slots
		return nil, errClosed
	}
	p.live[pr] = struct{}{}
	p.mu.Unlock()
	return pr, nil
}

// release returns pr to the pool after a call, or stops it once it has served
// Limits.MaxCalls calls or used most of its Limits.CPUSeconds.
func (p *pool) release(pr *proc) {
	recycle := p.lim.MaxCalls > 0 && pr.calls >= p.lim.MaxCalls
	if !recycle && p.lim.CPUSeconds > 0 && pr.calls%cpuCheckEvery == 0 {
		recycle = pr.cpuSeconds() >= 0.75*float64(p.lim.CPUSeconds)
	}
	p.mu.Lock()
	switch {
	case p.closed:
		// close has stopped (or is stopping) every process that was live.
		delete(p.live, pr)
	case recycle:
		delete(p.live, pr)
		p.stopLater(pr)
	default:
		p.idle = append(p.idle, pr)
	}
	p.mu.Unlock()
	<-p.slots
}

// discard kills pr (crashed, hung, or cancelled mid-call) without making the caller wait.
// Its slot returns once the process is really gone, so abandoned work never piles up past
// the pool's size; the next call starts a fresh process.
func (p *pool) discard(pr *proc) {
	p.mu.Lock()
	delete(p.live, pr)
	tracked := !p.closed
	if tracked {
		p.stopping.Add(1)
	}
	p.mu.Unlock()
	pr.r.killGroup()
	go func() {
		if tracked {
			defer p.stopping.Done()
		}
		pr.kill()
		select {
		case <-pr.r.done:
		case <-time.After(killWait):
			p.log.Error("a killed plugin process has not exited; its pool slot stays taken until it does", "pid", pr.pid)
			<-pr.r.done
		}
		<-p.slots
	}()
}

// stopLater stops pr off the call path; close waits for it. The caller holds p.mu.
func (p *pool) stopLater(pr *proc) {
	p.stopping.Add(1)
	go func() {
		defer p.stopping.Done()
		pr.stop()
	}()
}

// forget releases b's instances in every live process of the pool.
func (p *pool) forget(ctx context.Context, b *backend) {
	p.mu.Lock()
	procs := p.liveProcs()
	p.mu.Unlock()
	each(procs, func(pr *proc) { pr.release(ctx, b) })
}

// close stops every process of the pool and waits for them.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	procs := p.liveProcs()
	p.live = map[*proc]struct{}{}
	p.idle = nil
	p.mu.Unlock()
	each(procs, (*proc).stop)
	p.stopping.Wait()
}

// liveProcs lists the live processes; the caller holds p.mu.
func (p *pool) liveProcs() []*proc {
	out := make([]*proc, 0, len(p.live))
	for pr := range p.live {
		out = append(out, pr)
	}
	return out
}

// each runs f on every process at once and waits for all.
func each(procs []*proc, f func(*proc)) {
	var wg sync.WaitGroup
	for _, pr := range procs {
		wg.Go(func() { f(pr) })
	}
	wg.Wait()
}

// pids are the process groups of the pool's live processes.
func (p *pool) pids() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]int, 0, len(p.live))
	for _, pr := range p.liveProcs() {
		out = append(out, pr.pid)
	}
	return out
}
