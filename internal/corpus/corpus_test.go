package corpus

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestLoad(t *testing.T) {
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	bySource := map[string]int{}
	for i, c := range cases {
		if ids[c.Run.ID] {
			t.Errorf("duplicate id %s", c.Run.ID)
		}
		ids[c.Run.ID] = true
		bySource[c.Source]++
		if again[i].Run.ID != c.Run.ID {
			t.Fatalf("order not stable at %d: %s then %s", i, c.Run.ID, again[i].Run.ID)
		}
		if c.Label == "" {
			t.Errorf("%s: no label", c.Run.ID)
		}
		if c.WantPass && c.Run.Output == "" {
			t.Errorf("%s: a passing case with an empty output", c.Run.ID)
		}
	}
	// Row counts of the public sets, so a truncated or moved file is noticed.
	tests := []struct {
		source string
		want   int
	}{
		{"halueval", 500},
		{"truthfulqa", 817},
		{"ares", 200},
		{"coqa", 20},
		{"coqa_off_topic", 20},
		{"email_triage", 16},
		{"ragas_triage", 40},
		{"synthetic_empty", 6},
		{"gnome_help", 302},
		{"product_failures", 673},
		{"product_permission", 323},
		{"null_templates", 594},
		{"gemma_refusals", 21},
		{"mt_bench", 15},
		{"issue_failures", 19},
		{"scope_refusals", 8},
		{"go_examples", 120},
		{"python_examples", 120},
		{"code_cut", 60},
		{"go_stdlib", 200},
		{"python_stdlib", 200},
		{"python_faq", 143},
		{"debian_faq", 478},
		{"trivia_people", 71},
		{"code_loops", 400},
		{"answer_loops", 201},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			if got := bySource[tt.source]; got != tt.want {
				t.Errorf("%s: %d cases, want %d", tt.source, got, tt.want)
			}
		})
	}
	for _, s := range []string{"halueval_off_topic", "truthfulqa_off_topic", "ares_off_topic", "xstest", "xstest_refusal", "xstest_unsafe_refusal", "synthetic_error"} {
		if bySource[s] == 0 {
			t.Errorf("set %s is empty", s)
		}
	}
	t.Logf("%v", bySource)
}

func TestDirInRepository(t *testing.T) {
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "testdata"); dir != want {
		t.Fatalf("Dir() = %s, want %s: the labelled sets live in the repository", dir, want)
	}
}

// TestNothingReadsOutsideTheClone holds the rule that a clone alone passes its tests: no
// code, script or make rule of the repository reads the folder that sits beside it on
// the project's own machines.
func TestNothingReadsOutsideTheClone(t *testing.T) {
	root := filepath.Join("..", "..")
	exts := map[string]bool{".go": true, ".sh": true, ".mk": true, ".ts": true, ".js": true, ".mjs": true}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "build", "bin", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !exts[filepath.Ext(path)] && d.Name() != "Makefile" && d.Name() != "run" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// Spelled in pieces, so that this file does not hold what it looks for.
		for _, bad := range []string{"../" + "shared", "SCOREKIT_" + "SHARED_DATA"} {
			if bytes.Contains(b, []byte(bad)) {
				t.Errorf("%s mentions %s: tests and tools read the repository's testdata/, never a folder beside the clone", path, bad)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCatalogNeutral(t *testing.T) {
	cases, err := CatalogNeutral()
	if err != nil {
		t.Fatal(err)
	}
	langs := map[string]bool{}
	for _, c := range cases {
		if c.Run.Output == "" || !c.WantPass || c.Source != "catalog_neutral" {
			t.Fatalf("%s: want a correct catalog_neutral case with an output, got %+v", c.Run.ID, c)
		}
		langs[c.Lang] = true
	}
	if len(cases) != 3577 || len(langs) < 100 {
		t.Errorf("%d messages in %d languages, want 3577 in 100 or more", len(cases), len(langs))
	}
}
