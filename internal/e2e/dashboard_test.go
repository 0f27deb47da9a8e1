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

// The README's insights walkthrough works as written: the block after the "dashboard
// commands" marker runs in a fresh directory holding bin/scorekit and the examples, on a
// free port. The example runs raise no insight and show on the dashboard; the broken
// deploy raises a critical one, printed with its evidence.
func TestREADMEDashboardCommands(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- dashboard commands:[^>]*-->\n```bash\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no dashboard commands block after its <!-- dashboard commands --> marker")
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
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(4 * time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the README's commands ran over 4 minutes:\n%s", out)
	}
	if err != nil {
		t.Fatalf("the README's commands failed: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{
		`"status":"done"`,                                                                               // each evaluation
		`{"insights":[]}`,                                                                               // no false alarm on the example runs
		`data-agent="assistant"`, `data-agent="email-triage"`, "No open insight", `class="chart spark"`, // the dashboard
		"CRITICAL gross_failures  email-triage/prescreen", // the bad deploy, caught
		"measured: share of gross failures (error_text, empty_output)",
		"window: 100 runs (100 scored",
		"[error_text]", "run email-triage-03", // the worst runs, with their flags
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, `"status":"done"`) != 3 {
		t.Errorf("want 3 evaluations done:\n%s", got)
	}
}
