package api

import (
	"fmt"

	"github.com/scorekit/scorekit/internal/service/otlpcheck"
)

// HoldTraceBytes takes n bytes of s's MaxTraceBytesInFlight, as a request being taken
// would, until release: for tests of a server whose OTLP budget is taken.
func HoldTraceBytes(s *Server, n int64) (release func()) {
	if !s.traceBytes.TryAcquire(n) {
		panic("api: HoldTraceBytes: the budget is taken")
	}
	return func() { s.traceBytes.Release(n) }
}

// TraceBytes is what the server counts a POST /v1/traces request of body (gzipped when
// raw differs) to hold while it is taken, as checkOTLP estimates it.
func TraceBytes(s *Server, ct string, raw, body []byte) (int64, error) {
	held, refused := s.checkOTLP(otlpcheck.Traces, ct, raw, body)
	if refused != nil {
		return 0, fmt.Errorf("refused: %d %s", refused.Status, refused.Body)
	}
	return held, nil
}
