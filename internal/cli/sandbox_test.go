package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/testkit"
)

// TestServeRequireSandbox: serve --require-sandbox, or the config file's require_sandbox,
// refuses to load a process plugin it cannot confine (here bubblewrap is missing from
// PATH), naming what is missing and what the operator asked for; with the sandbox there,
// the same plugin loads. Without the requirement it loads degraded, with a warning.
func TestServeRequireSandbox(t *testing.T) {
	plugins := processPluginDir(t)
	required := writeFile(t, "config.json", `{"require_sandbox": true}`)
	for _, tc := range []struct {
		name     string
		args     []string
		noBwrap  bool
		refused  bool
		wantLogs string
	}{
		{name: "allowed", args: []string{"--require-sandbox"}},
		{name: "denied/flag", args: []string{"--require-sandbox"}, noBwrap: true, refused: true},
		{name: "denied/config file", args: []string{"--config", required}, noBwrap: true, refused: true},
		{name: "degraded without the requirement", noBwrap: true, wantLogs: "DEGRADED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.noBwrap {
				// No bubblewrap (nor any other tool) on PATH.
				t.Setenv("PATH", t.TempDir())
			}
			stderr := serveUntilReady(t, append([]string{"--plugins", plugins}, tc.args...)...)
			refused := strings.Contains(stderr, "plugin not loaded")
			if refused != tc.refused {
				t.Fatalf("plugin refused: %v, want %v; stderr:\n%s", refused, tc.refused, stderr)
			}
			if tc.refused && (!strings.Contains(stderr, "cannot be confined") || !strings.Contains(stderr, "bubblewrap is not installed") || !strings.Contains(stderr, "require")) {
				t.Errorf("the refusal does not say what is missing and why it is required:\n%s", stderr)
			}
			if !strings.Contains(stderr, tc.wantLogs) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantLogs, stderr)
			}
		})
	}
}

// processPluginDir is a folder with a manifest of the process build of the built-ins
// (make process-plugins), whose artifact is named by its absolute path.
func processPluginDir(t *testing.T) string {
	t.Helper()
	build, err := filepath.Abs(filepath.Join("..", "..", "build", "process"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(build, "builtin.plugin.json"))
	if err != nil {
		t.Fatalf("no process build of the built-ins: run `make process-plugins` (make test does): %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["artifact"] = filepath.Join(build, m["artifact"].(string))
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "builtin.plugin.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// serveUntilReady runs scorekit serve on a loopback port with args until it serves (or a
// minute passes), stops it, and returns what it wrote on stderr.
func serveUntilReady(t *testing.T, args ...string) string {
	t.Helper()
	var stderr testkit.SyncBuffer
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &stderr, registry: builtinRegistry}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() {
		done <- e.run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "scorekit.db")}, args...))
	}()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && !strings.Contains(stderr.String(), "serving on"); {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Fatalf("serve exit %d:\n%s", code, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("serve did not stop within a minute of being cancelled")
	}
	return stderr.String()
}
