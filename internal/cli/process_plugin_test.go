package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestScorersPluginNeverHandshakes: `scorekit scorers` with a process plugin that never
// completes go-plugin's handshake, and whose child holds its stdout and stderr, fails within
// the start timeout, names it, and leaves no process of the plugin behind.
func TestScorersPluginNeverHandshakes(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "hang.sh")
	body := "#!/bin/sh\n" +
		"if [ \"$1\" = child ]; then sleep 300; exit 0; fi\n" +
		"\"$0\" child &\n" + // inherits (and holds) the plugin's stdout and stderr
		"sleep 300\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(body))
	manifest := fmt.Sprintf(`{"name":"hang","runtime":"process","artifact":"hang.sh","sha256":%q}`, hex.EncodeToString(sum[:]))
	if err := os.WriteFile(filepath.Join(dir, "hang.plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan cliResult, 1)
	go func() { done <- runCLI(t, "", "scorers", "--plugins", dir) }()
	var r cliResult
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("scorekit scorers still running after 2 minutes: it hangs on a plugin that never handshakes")
	}
	if r.code == 0 || !strings.Contains(r.stderr, "no handshake within the start timeout") {
		t.Fatalf("exit %d, stderr:\n%s\nwant a failure naming the start timeout", r.code, r.stderr)
	}
	for range 100 {
		if left := processesRunning(script); len(left) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	left := processesRunning(script)
	for _, pid := range left {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	t.Fatalf("processes of the plugin outlived the command: %v", left)
}

// processesRunning lists the live processes whose command line mentions path.
func processesRunning(path string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmd, []byte(path)) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
				continue
			}
		}
		out = append(out, pid)
	}
	return out
}
