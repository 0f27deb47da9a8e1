package process

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// hclogFor returns the hclog.Logger go-plugin writes to, feeding log. go-plugin parses a
// plugin's JSON stderr lines (hclog's format: @level, @message, fields) and logs them through
// this logger, so forwarding its JSON output keeps the plugin's levels and fields.
func hclogFor(log *slog.Logger) hclog.Logger {
	level := hclog.Info
	if log.Enabled(context.Background(), slog.LevelDebug) {
		// go-plugin logs a plugin's plain (non-JSON) stderr lines at debug.
		level = hclog.Debug
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:       "plugin",
		Level:      level,
		Output:     &hclogWriter{log: log},
		JSONFormat: true,
	})
}

// hclogWriter turns hclog JSON lines into slog records.
type hclogWriter struct {
	log *slog.Logger
}

func (w *hclogWriter) Write(p []byte) (int, error) {
	for _, line := range bytes.Split(p, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var entry map[string]any
		if err := json.Unmarshal(line, &entry); err != nil {
			w.log.Info(string(line))
			continue
		}
		msg, _ := entry["@message"].(string)
		lvl, _ := entry["@level"].(string)
		attrs := make([]any, 0, 2*len(entry))
		for k, v := range entry {
			switch k {
			case "@message", "@level", "@timestamp", "timestamp":
				continue
			case "@module":
				k = "module"
			case "plugin":
				// go-plugin's "plugin" is the executable's path; ours is the manifest name.
				k = "executable"
			}
			attrs = append(attrs, strings.TrimPrefix(k, "@"), v)
		}
		w.log.Log(context.Background(), slogLevel(lvl), msg, attrs...)
	}
	return len(p), nil
}

func slogLevel(s string) slog.Level {
	switch s {
	case "trace", "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// lineWriter logs what a plugin prints on its stdout or stderr after the handshake
// (go-plugin streams them to the host), one record per line.
type lineWriter struct {
	log    *slog.Logger
	stream string
	out    *outputCap // drops what is over the call's output budget

	mu  sync.Mutex
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	if !w.out.take(len(p)) {
		return len(p), nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimRight(string(w.buf[:i]), "\r"); line != "" {
			w.log.Info(line, "stream", w.stream)
		}
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}
