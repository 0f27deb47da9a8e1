package pythontest

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pipInstall installs the Python package in the repository folder pkg into a fresh folder
// with the command the docs give (pip, offline: --no-build-isolation builds with Debian's
// setuptools, --no-deps leaves the dependencies to Debian's packages) and returns the
// folder, for PYTHONPATH. The package is built from a copy, so the checkout stays clean.
func pipInstall(t *testing.T, pkg string) string {
	t.Helper()
	py := pythonExe(t)
	work := t.TempDir()
	// The sandbox runs plugins as another user, who reads the installed SDK.
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(work, "src")
	if out, err := exec.Command("cp", "-r", filepath.Join(repoRoot(t), pkg), src).CombinedOutput(); err != nil {
		t.Fatalf("copy %s: %v\n%s", pkg, err, out)
	}
	site := filepath.Join(work, "site")
	cmd := exec.Command(py, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index", "--target", site, src)
	cmd.Env = append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_ROOT_USER_ACTION=ignore")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pip install %s (python3-pip and python3-setuptools: make test installs them as root): %v\n%s", pkg, err, out)
	}
	return site
}

// junit is what the checks read of pytest's JUnit report.
type junit struct {
	Suites []struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Skipped  int `xml:"skipped,attr"`
	} `xml:"testsuite"`
}

// pytest runs pytest on paths (relative to the repository) with env added, and fails the
// test when pytest fails, runs no test or skips one.
func pytest(t *testing.T, env []string, paths ...string) {
	t.Helper()
	report := filepath.Join(t.TempDir(), "junit.xml")
	args := append([]string{"-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", "--junitxml", report}, paths...)
	cmd := exec.Command(pythonExe(t), args...)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Log(out.String())
	if err != nil {
		t.Fatalf("pytest %s: %v", strings.Join(paths, " "), err)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var r junit
	if err := xml.Unmarshal(b, &r); err != nil {
		t.Fatalf("pytest's JUnit report: %v", err)
	}
	tests, skipped := 0, 0
	for _, s := range r.Suites {
		tests += s.Tests
		skipped += s.Skipped
	}
	if tests == 0 || skipped > 0 {
		t.Fatalf("pytest ran %d tests and skipped %d; every test must run", tests, skipped)
	}
}

// TestSDKPytest installs the SDK from the repository with pip and runs its tests and the
// examples' (the test kit in-process, the plugin's gRPC protocol driven directly, and the
// check that a plugin loads in a real host, through this checkout's scorekit). The
// example's gate (test_gate.py, which needs the client) runs in docs/FIRST-SCORER.md's
// walkthrough (internal/doctest).
func TestSDKPytest(t *testing.T) {
	site := pipInstall(t, "sdks/python")
	pytest(t, []string{"PYTHONPATH=" + site, "SCOREKIT_BIN=" + scorekitBin(t)},
		"sdks/python/tests", "examples/python-scorer/test_word_budget.py", "examples/python-judge/test_answers_question.py")
}

// TestClientPytest installs the client from the repository with pip and runs its tests
// against a real scorekit serve of this checkout (which the tests start), the pytest gate
// among them, locally with this checkout's scorekit and the Python example as a plugin.
func TestClientPytest(t *testing.T) {
	site := pipInstall(t, "clients/python")
	plugins := t.TempDir()
	if err := os.Chmod(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	pythonExe(t)
	writeManifest(t, plugins, "python-scorer", filepath.Join(repoRoot(t), "examples", "python-scorer", "word_budget.py"),
		map[string]string{"PYTHONPATH": sdkSrc(t)}, []string{sdkSrc(t)})
	pytest(t, []string{"PYTHONPATH=" + site, "SCOREKIT_BIN=" + scorekitBin(t), "SCOREKIT_TEST_PLUGINS=" + plugins}, "clients/python/tests")
}
