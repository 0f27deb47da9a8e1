// Package testkit holds the helpers the tests and benchmarks of several packages share, so
// that none keeps a copy of its own: a buffer goroutines may write while a test reads it
// ([SyncBuffer]), the process's CPU time for benchmarks on a shared machine ([CPUTime]),
// and a scorer whose Info and behaviour a test sets ([Scorer]).
//
// It imports nothing of scorekit but sdk, so the internal tests of any package that sdk
// does not import (host, host/process, host/wasm ...) may use it without an import cycle.
package testkit

import (
	"bytes"
	"sync"
)

// SyncBuffer is a bytes.Buffer that goroutines may write while others read it: a logger's
// output or a child process's stderr that a test reads while it is written. The zero
// value is ready to use.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
