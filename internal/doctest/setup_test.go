package doctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeTestToolsNotInstalledUnasked: the README's set-up says `make test` installs what
// it lacks only as root with apt, and otherwise stops with the command that installs it.
// CI runs as root with apt, where make test installs for real (.ci/run in a fresh clone);
// this test covers the other paths by hiding tools from PATH (.ci/without-tools) and,
// when it runs as root, by running make as the nobody user.
func TestMakeTestToolsNotInstalledUnasked(t *testing.T) {
	root := buildFiles(t)
	hide := filepath.Join(root, ".ci", "without-tools")
	cases := []struct {
		name     string
		hidden   string // regular expression of the commands hidden from PATH
		asNobody bool   // drop root, as a user on a laptop
		args     []string
		want     []string
		wantNot  []string
	}{
		{
			name:     "not root: the sudo command, nothing installed",
			hidden:   `^(clang.*|wat2wasm)$`,
			asNobody: true,
			want: []string{
				"make test needs clang wat2wasm, which this machine lacks. Install them with:",
				"    sudo apt-get install -y --no-install-recommends clang wabt",
				"as root, make test installs them itself",
			},
			wantNot: []string{"installing"},
		},
		{
			name:   "no apt-get: the Debian package names, nothing installed",
			hidden: `^(clang.*|wat2wasm|apt-get)$`,
			want: []string{
				"make test needs clang wat2wasm, which this machine lacks. Install them with:",
				"    apt-get install -y --no-install-recommends clang wabt",
				"this machine has no apt-get",
			},
			wantNot: []string{"installing", "sudo"},
		},
		{
			name:   "a Node.js older than the client's engines",
			hidden: `^$`,
			args:   []string{"NODE_MIN=99"},
			want:   []string{"make test needs Node.js 99 or later (clients/typescript/package.json \"engines\")", "https://nodejs.org/en/download"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			argv := append([]string{hide, c.hidden, "make", "-s", "-C", root, "tools"}, c.args...)
			if c.asNobody && os.Geteuid() == 0 {
				if _, err := exec.LookPath("runuser"); err != nil {
					t.Fatalf("running make as a user other than root needs runuser (util-linux): %v", err)
				}
				argv = append([]string{"runuser", "-u", "nobody", "--"}, argv...)
			}
			out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
			if err == nil {
				t.Fatalf("%s: exit 0; want make tools to stop:\n%s", strings.Join(argv, " "), out)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range c.wantNot {
				if strings.Contains(string(out), w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}

// buildFiles copies what `make tools` reads (the Makefile, mk/, the client's package.json,
// .ci/without-tools) into a folder every user may read, so that make runs there as nobody
// whatever the permissions of the checkout (a home folder is often private).
func buildFiles(t *testing.T) string {
	t.Helper()
	src := repoRoot(t)
	dst, err := os.MkdirTemp("", "scorekit-tools-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dst) })
	mks, err := filepath.Glob(filepath.Join(src, "mk", "*"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"Makefile", filepath.Join("clients", "typescript", "package.json"), filepath.Join(".ci", "without-tools")}
	for _, m := range mks {
		files = append(files, strings.TrimPrefix(m, src+string(filepath.Separator)))
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, info.Mode().Perm()|0o444); err != nil {
			t.Fatal(err)
		}
	}
	// MkdirTemp makes a folder only its owner may enter.
	if err := os.Chmod(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}
