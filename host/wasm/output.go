package wasm

import "sync"

// cappedWriter keeps the first max bytes a guest writes during one call (stdout, stderr
// and log lines together) and counts the rest. It never returns an error, so a guest
// flooding stdout cannot spin on a failing write, and it never holds more than max bytes,
// so a flood costs the host no memory.
type cappedWriter struct {
	mu    sync.Mutex
	max   int
	used  int
	buf   []byte
	total int
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, w.admit(p)...)
	return len(p), nil
}

// admit counts p against the cap and returns the part of it that may be kept.
func (w *cappedWriter) admit(p []byte) []byte {
	w.total += len(p)
	room := max(w.max-w.used, 0)
	if len(p) > room {
		p = p[:room]
	}
	w.used += len(p)
	return p
}

// admitLine is admit for a log line, which the host logs itself instead of keeping.
func (w *cappedWriter) admitLine(p []byte) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.admit(p))
}

// take returns what was kept of stdout/stderr and the total written (log lines
// included), and empties the writer.
func (w *cappedWriter) take() (kept string, total int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	kept, total = string(w.buf), w.total
	w.buf, w.used, w.total = w.buf[:0], 0, 0
	return kept, total
}
