package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// readmeBlock returns the bash block of README.md that follows its <!-- NAME commands -->
// marker.
func readmeBlock(t *testing.T, name string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- " + name + " commands:[^>]*-->\n```bash\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatalf("README.md has no %s commands block after its <!-- %s commands --> marker", name, name)
	}
	return string(m[1])
}

// readmePort is a port a walkthrough serves on, as the README writes it.
var readmePort = regexp.MustCompile(`(127\.0\.0\.1|localhost):(80\d\d)\b`)

// runREADMEBlocks runs the named bash blocks of README.md one after the other in one shell,
// as a user pasting them into one terminal would, in a fresh directory that stands for the
// repository root (bin/scorekit and the examples), with each port the blocks serve on
// replaced by a free one. A block must stop what it starts: a process still running after
// it fails the test. So does a file the blocks leave in the directory (a database, a
// cookie jar, a report): the walkthroughs keep their files out of the repository. It
// returns what each block printed, by name.
func runREADMEBlocks(t *testing.T, timeout time.Duration, names ...string) map[string]string {
	t.Helper()
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
	ports := map[string]string{}
	var script strings.Builder
	// A failed block must not leave its server behind, holding the output pipe open.
	script.WriteString("set -eu\ntrap 'left=$(jobs -pr); [ -z \"$left\" ] || kill $left 2>/dev/null || true' EXIT\n")
	for _, name := range names {
		block := readmePort.ReplaceAllStringFunc(readmeBlock(t, name), func(s string) string {
			host, port, _ := strings.Cut(s, ":")
			if ports[port] == "" {
				ports[port] = strings.TrimPrefix(freeAddr(t), "127.0.0.1:")
			}
			return host + ":" + ports[port]
		})
		script.WriteString("echo '@@block " + name + "@@'\n" + block)
		script.WriteString("[ -z \"$(jobs -pr)\" ] || { echo '@@the " + name + " commands left a process running: '\"$(jobs -r)\"; exit 1; }\n")
	}
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir(), "SCOREKIT_DB=")
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the README's %s commands ran over %s:\n%s", strings.Join(names, " and "), timeout, out)
	}
	if err != nil {
		t.Fatalf("the README's %s commands failed: %v\n%s", strings.Join(names, " and "), err, out)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !slices.Contains([]string{"bin", "examples"}, e.Name()) {
			t.Errorf("the README's commands left %s in the repository root; keep a walkthrough's files in its own temporary folder", e.Name())
		}
	}
	got := map[string]string{}
	for _, part := range strings.Split(string(out), "@@block ")[1:] {
		name, text, _ := strings.Cut(part, "@@\n")
		got[name] = text
	}
	return got
}

// The README's walkthroughs work as written, pasted into one shell in turn: each stops the
// service it started and keeps its files out of the repository, so the next one does not
// find a server on its port or a database in its way.
func TestREADMEWalkthroughs(t *testing.T) {
	got := runREADMEBlocks(t, 6*time.Minute, "service", "dashboard")
	t.Run("service", func(t *testing.T) { checkServiceWalkthrough(t, got["service"]) })
	t.Run("dashboard", func(t *testing.T) { checkDashboardWalkthrough(t, got["dashboard"]) })
}

// checkServiceWalkthrough: the import, the evaluation read over HTTP, runs import and
// eval's table.
func checkServiceWalkthrough(t *testing.T, got string) {
	for _, want := range []string{
		`{"stored":270,`,               // the import
		`"status":"done"`, `"runs":10`, // the evaluation, read over HTTP
		"40 stored, 0 already stored, 0 rejected",         // runs import
		"10 runs of assistant", "SCORER", "prescreen  10", // eval's table
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
