package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runREADMEBlock runs the bash block of README.md that follows the <!-- NAME commands -->
// marker, as written, in a fresh directory holding bin/scorekit and the examples, with
// port 8080 replaced by a free one and env added; it returns what the block printed.
func runREADMEBlock(t *testing.T, name string, timeout time.Duration, env ...string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- " + name + " commands:[^>]*-->\n```bash\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatalf("README.md has no %s commands block after its <!-- %s commands --> marker", name, name)
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(dir, "bin", "scorekit")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "examples"), filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	port := strings.TrimPrefix(freeAddr(t), "127.0.0.1:")
	script := "set -eu\ntrap 'kill $(jobs -p) 2>/dev/null; wait' EXIT\n" + strings.ReplaceAll(string(m[1]), "8080", port)
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the README's %s commands ran over %s:\n%s", name, timeout, out)
	}
	if err != nil {
		t.Fatalf("the README's %s commands failed: %v\n%s", name, err, out)
	}
	return string(out)
}

// The README's service commands work as written.
func TestREADMEServiceCommands(t *testing.T) {
	got := runREADMEBlock(t, "service", 3*time.Minute, "SCOREKIT_DB=")
	for _, want := range []string{
		`{"stored":270,`,               // the import
		`"status":"done"`, `"runs":10`, // the evaluation, read over HTTP
		"40 stored, 0 already stored, 0 rejected", // runs import
		"SCORER", "prescreen  10", "assistant-0040", // eval's table, newest run first
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
