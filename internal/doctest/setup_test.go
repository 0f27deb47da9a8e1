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
	root := repoRoot(t)
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
