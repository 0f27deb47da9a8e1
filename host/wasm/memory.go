package wasm

import (
	"sync"

	"github.com/tetratelabs/wazero/experimental"
)

// linearMemory backs one instance's WebAssembly memory outside the Go heap where the
// platform allows (memory_mmap.go): the instance's limit is reserved as address space and
// pages are committed as the guest grows, so growing never copies, an instance's
// resident memory never exceeds its limit, and closing an instance returns its memory to
// the system at once instead of at the host's next garbage collection. With wazero's
// default allocator each memory.grow copied the whole memory into a new Go slice, a
// guest filling 256 MiB took seconds, and the garbage made host RSS several times the
// guests' memory.
//
// Free is deferred while the instance is held by a call (hold/unhold): wazero runs guest
// code without checking that its module was closed, and a runtime closed under a running
// call would otherwise unmap memory the guest is using.
type linearMemory struct {
	limit uint64 // bytes; Reallocate refuses more (memory.grow fails)

	mu      sync.Mutex
	buf     []byte // reserved address space (mapped) or Go memory (fallback)
	mapped  bool
	used    uint64 // committed bytes
	held    bool
	freed   bool
	release func([]byte)
}

var _ experimental.LinearMemory = (*linearMemory)(nil)

// allocator returns wazero's memory allocator for an instance whose memory may not exceed
// limit bytes, and the memory it allocates, once it has (nil before instantiation).
type allocator struct {
	limit uint64
	mem   *linearMemory
}

func (a *allocator) Allocate(_, max uint64) experimental.LinearMemory {
	a.mem = newLinearMemory(min(max, a.limit))
	return a.mem
}

func (m *linearMemory) Reallocate(size uint64) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if size > m.limit || m.freed {
		return nil
	}
	if size > m.used {
		if !m.commit(size) {
			return nil
		}
		m.used = size
	}
	return m.buf[:size:size]
}

func (m *linearMemory) Free() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.freed = true
	if !m.held {
		m.unmap()
	}
}

// hold marks the memory in use by a call; it reports false when the memory was freed
// (the instance's runtime closed), and then the instance must not be called.
func (m *linearMemory) hold() bool {
	if m == nil {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed {
		return false
	}
	m.held = true
	return true
}

// unhold ends a hold, unmapping the memory if it was freed meanwhile.
func (m *linearMemory) unhold() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.held = false
	if m.freed {
		m.unmap()
	}
}

func (m *linearMemory) unmap() {
	if m.buf != nil && m.release != nil {
		m.release(m.buf)
	}
	m.buf = nil
}

// commit makes buf[:size] usable, growing a Go-memory fallback by doubling.
func (m *linearMemory) commit(size uint64) bool {
	if m.mapped {
		return protect(m.buf[m.used:size]) == nil
	}
	if size > uint64(cap(m.buf)) {
		grown := make([]byte, size, min(max(size, 2*uint64(cap(m.buf))), m.limit))
		copy(grown, m.buf)
		m.buf = grown
	}
	m.buf = m.buf[:size]
	return true
}

func newLinearMemory(limit uint64) *linearMemory {
	m := &linearMemory{limit: limit}
	if b, ok := reserve(limit); ok {
		m.buf, m.mapped, m.release = b, true, unreserve
	}
	return m
}
