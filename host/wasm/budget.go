package wasm

import (
	"container/list"
	"context"
	"slices"
	"sync"
)

// memoryBudget bounds the memory the idle instances of all of an Engine's pools keep, so
// that a thousand tenants with a scorer each do not keep a thousand pools' worth of
// instances. It counts every live instance at its linear memory's size (what the
// instance's mapping commits; memory.go) and its call stack's bound (stackHostBytes: the
// stack wazero keeps with the score export), keeps idle instances in least-recently-used
// order, and closes the least recently used first when the count is over the limit: after
// a call returns its instance, and before an instance is made. It never refuses: a call
// that finds no idle instance makes one, over the budget if instances in use hold it all,
// because waiting for another tenant's call to end would let one tenant's slow scorer
// hold up the others. The count is over the limit then only by what calls are using.
//
// Lock order: a pool's mu, then the budget's mu; eviction takes them one after the other.
type memoryBudget struct {
	limit int64 // bytes; <= 0: none

	mu      sync.Mutex
	held    int64     // every live instance's memory, idle or in use
	peak    int64     // the most held ever was
	idle    list.List // of *instance, least recently used at the front
	evicted int
}

// MemoryStats is what an Engine's instances hold, across all tenants and artifacts.
type MemoryStats struct {
	// BudgetBytes is Options.MemoryBudgetBytes (0: none).
	BudgetBytes int64
	// HeldBytes is the linear memory and call stack bound of every live instance, in
	// use or idle; PeakHeldBytes the most it has been.
	HeldBytes, PeakHeldBytes int64
	// Idle counts the instances kept for a next call.
	Idle int
	// Evicted counts idle instances closed to keep within the budget.
	Evicted int
}

// MemoryStats returns what the engine's instances hold now.
func (e *Engine) MemoryStats() MemoryStats {
	b := e.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	return MemoryStats{BudgetBytes: max(b.limit, 0), HeldBytes: b.held, PeakHeldBytes: b.peak, Idle: b.idle.Len(), Evicted: b.evicted}
}

// charge sets inst's count to its memory's current size and its call stack's bound.
func (b *memoryBudget) charge(inst *instance) {
	n := int64(inst.memoryBytes()) + inst.stackBytes()
	b.mu.Lock()
	b.held += n - inst.charged
	b.peak = max(b.peak, b.held)
	inst.charged = n
	b.mu.Unlock()
}

// drop removes a closed instance from the count.
func (b *memoryBudget) drop(inst *instance) {
	b.mu.Lock()
	b.held -= inst.charged
	inst.charged = 0
	if inst.idleAt != nil {
		b.idle.Remove(inst.idleAt)
		inst.idleAt = nil
	}
	b.mu.Unlock()
}

// rest marks inst idle, most recently used. The caller holds inst's pool's mu and has
// put inst in the pool's idle list.
func (b *memoryBudget) rest(inst *instance) {
	b.mu.Lock()
	if inst.idleAt != nil {
		b.idle.MoveToBack(inst.idleAt)
	} else {
		inst.idleAt = b.idle.PushBack(inst)
	}
	b.mu.Unlock()
}

// wake marks inst in use. The caller holds inst's pool's mu and has taken inst out of
// the pool's idle list.
func (b *memoryBudget) wake(inst *instance) {
	b.mu.Lock()
	if inst.idleAt != nil {
		b.idle.Remove(inst.idleAt)
		inst.idleAt = nil
	}
	b.mu.Unlock()
}

// makeRoom closes least recently used idle instances until need more bytes fit in the
// budget, or none is idle.
func (b *memoryBudget) makeRoom(ctx context.Context, need int64) {
	if b.limit <= 0 {
		return
	}
	for {
		b.mu.Lock()
		front := b.idle.Front()
		if b.held+need <= b.limit || front == nil {
			b.mu.Unlock()
			return
		}
		inst := b.idle.Remove(front).(*instance)
		inst.idleAt = nil
		b.mu.Unlock()
		b.evict(ctx, inst)
	}
}

// evict closes inst if it is still idle in its pool: a call may have taken it between
// the budget's choice and now, and then it is that call's.
func (b *memoryBudget) evict(ctx context.Context, inst *instance) {
	pl := inst.pool
	pl.mu.Lock()
	i := slices.Index(pl.idle, inst)
	if i >= 0 {
		pl.idle = slices.Delete(pl.idle, i, i+1)
		pl.stats.Evicted++
	}
	pl.mu.Unlock()
	if i < 0 {
		return
	}
	b.mu.Lock()
	b.evicted++
	b.mu.Unlock()
	pl.discard(ctx, inst)
}
