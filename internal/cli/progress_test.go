package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestProgressOnlyOnTerminal: the bar goes to stderr when it is a terminal and never into
// a log file or a pipe; stdout carries only results either way.
func TestProgressOnlyOnTerminal(t *testing.T) {
	path := writeFile(t, "runs.jsonl", strings.Repeat(`{"input":"q","output":"a b"}`+"\n", 20))
	for _, c := range []struct {
		name     string
		terminal bool
		wantBar  bool
	}{
		{"terminal", true, true},
		{"pipe", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, registry: testRegistry, stderrIsTerminal: c.terminal}
			if code := e.run(t.Context(), []string{"score", "--scorers", "words", "--format", "jsonl", path}); code != ExitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, errb.String())
			}
			if got := strings.Contains(errb.String(), "scoring"); got != c.wantBar {
				t.Errorf("progress bar drawn: %v, want %v; stderr %q", got, c.wantBar, errb.String())
			}
			if n := strings.Count(out.String(), "\n"); n != 20 {
				t.Errorf("stdout has %d lines, want 20 results", n)
			}
		})
	}
}
