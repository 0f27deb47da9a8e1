package doctest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pythonPart is the heading where docs/FIRST-SCORER.md's Python half starts.
const pythonPart = "# Your first scorer in Python"

// firstScorerBlocks returns the blocks of docs/FIRST-SCORER.md before its Python half
// (python false) or in it (python true).
func firstScorerBlocks(t *testing.T, root string, python bool) []Block {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "FIRST-SCORER.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := Blocks(string(doc))
	if err != nil {
		t.Fatalf("docs/FIRST-SCORER.md: %v", err)
	}
	split := 0
	for i, line := range strings.Split(string(doc), "\n") {
		if line == pythonPart {
			split = i + 1
		}
	}
	if split == 0 {
		t.Fatalf("docs/FIRST-SCORER.md has no %q heading: the Python half is gone", pythonPart)
	}
	var out []Block
	for _, b := range blocks {
		if (b.Line > split) == python {
			out = append(out, b)
		}
	}
	return out
}

// TestFirstScorer follows docs/FIRST-SCORER.md in a fresh folder: it writes the files the
// page shows, runs its commands in one shell in order, and checks that what each step
// printed contains the lines the page says it prints. The files must also equal the
// finished module in examples/first-scorer, so the page and the example cannot drift.
//
// It builds scorekit, the plugin natively and as WebAssembly: about a minute on a cold
// build cache.
func TestFirstScorer(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	follow(t, root, firstScorerBlocks(t, root, false), "go", "examples/first-scorer", 3, 5, os.Environ())
}

// TestFirstScorerPython follows the Python half of docs/FIRST-SCORER.md the same way: its
// files must equal examples/python-scorer's, and its commands run with Debian's python3
// first on PATH, as the page asks.
func TestFirstScorerPython(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Fatal("/usr/bin/python3 is not installed: make test installs Debian's python3 and its packages as root (make deps)")
	}
	env := append(os.Environ(), "PATH=/usr/bin:"+os.Getenv("PATH"), "PYTHONDONTWRITEBYTECODE=1")
	follow(t, root, firstScorerBlocks(t, root, true), "python", "examples/python-scorer", 4, 7, env)
}

// follow writes the page's files (blocks of lang with a file name, which must equal the
// files in example) and runs its shell blocks in order in one shell in a fresh folder,
// checking each against the text block after it. The page must keep at least minFiles
// files and minSteps steps.
func follow(t *testing.T, root string, blocks []Block, lang, example string, minFiles, minSteps int, env []string) {
	t.Helper()
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	type step struct {
		line int
		want []string
	}
	var steps []step
	files := 0
	for i, b := range blocks {
		switch {
		case b.Lang == lang && b.File != "":
			files++
			want, err := os.ReadFile(filepath.Join(root, example, b.File))
			if err != nil {
				t.Errorf("docs/FIRST-SCORER.md:%d shows %s, which %s lacks: %v", b.Line, b.File, example, err)
			} else if string(want) != b.Body {
				t.Errorf("docs/FIRST-SCORER.md:%d: %s differs from %s/%s; keep them the same", b.Line, b.File, example, b.File)
			}
			fmt.Fprintf(&script, "mkdir -p \"$(dirname %q)\"\ncat > %q <<'SCOREKIT_DOC_EOF'\n%sSCOREKIT_DOC_EOF\n", b.File, b.File, b.Body)
		case b.Lang == "sh":
			s := step{line: b.Line}
			if i+1 < len(blocks) && blocks[i+1].Lang == "text" {
				for _, l := range strings.Split(strings.TrimSpace(blocks[i+1].Body), "\n") {
					s.want = append(s.want, strings.TrimRight(l, " "))
				}
			}
			fmt.Fprintf(&script, "echo '@@step %d@@'\n%s", len(steps), b.Body)
			steps = append(steps, s)
		}
	}
	if files < minFiles || len(steps) < minSteps {
		t.Fatalf("docs/FIRST-SCORER.md (%s) has %d files and %d shell steps; the walkthrough lost its blocks", lang, files, len(steps))
	}
	dir := t.TempDir()
	// A plugin the sandbox runs as another user must reach its folder.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = dir
	cmd.Env = append(env, "SCOREKIT="+root)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("followed docs/FIRST-SCORER.md (%s) in %v", lang, time.Since(start).Round(time.Second))
	outputs := strings.Split(out.String(), "@@step ")
	if err != nil {
		last := outputs[len(outputs)-1]
		t.Fatalf("a step of docs/FIRST-SCORER.md failed (%v); its output:\n@@step %s", err, last)
	}
	for i, s := range steps {
		if i+1 >= len(outputs) {
			t.Fatalf("step at docs/FIRST-SCORER.md:%d did not run", s.line)
		}
		got := outputs[i+1]
		for _, w := range s.want {
			if !strings.Contains(got, w) {
				t.Errorf("step at docs/FIRST-SCORER.md:%d printed no line containing %q; it printed:\n%s", s.line, w, got)
			}
		}
	}
}
