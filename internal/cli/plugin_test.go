package cli

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
)

// builtArtifact copies the built-ins' build for runtime (make test builds it) into a
// fresh folder, as a scorer author's own build would be.
func builtArtifact(t *testing.T, runtime, file string) string {
	t.Helper()
	src := filepath.Join("..", "..", "build", runtime, file)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatalf("%v: run `make %s-plugins` (make test does)", err, runtime)
	}
	dst := filepath.Join(t.TempDir(), "out", file)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestPluginManifest(t *testing.T) {
	exe := builtArtifact(t, "process", "builtin")
	// -o into a folder that does not exist yet: it is created. The build is the built-ins',
	// so it replaces the one it is scored with below.
	out := filepath.Join(filepath.Dir(filepath.Dir(exe)), "plugins", "mine.plugin.json")
	r := runCLIWith(t, builtinRegistry, "", "plugin", "manifest", "-o", out, "--replaces", "prescreen", exe)
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	m, err := host.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "mine" || m.Runtime != host.RuntimeProcess || m.Artifact != "../out/builtin" || !slices.Equal(m.Replaces, []string{"prescreen"}) {
		t.Errorf("manifest %+v", m)
	}
	if err := m.VerifyArtifact(); err != nil {
		t.Error(err)
	}
	if !strings.Contains(r.stdout, "(process, sha256 "+m.SHA256[:12]+"): scorers ") || !strings.Contains(r.stdout, "prescreen") ||
		!strings.Contains(r.stdout, "load it with: scorekit score --plugins "+filepath.Dir(out)) {
		t.Errorf("stdout %q", r.stdout)
	}
	// The manifest loads: score with it.
	r = runCLIWith(t, builtinRegistry, `{"input":"What is the capital of France?","output":"Paris"}`,
		"score", "--plugins", filepath.Dir(out), "--runtime", "process", "--scorers", "prescreen", "--format", "jsonl", "-")
	if r.code != ExitOK || !strings.Contains(r.stdout, `"runtime":"process"`) {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestPluginManifestWASMAndErrors(t *testing.T) {
	wasm := builtArtifact(t, "wasm", "builtin.wasm")
	r := runCLIWith(t, builtinRegistry, "", "plugin", "manifest", "--check=false", wasm)
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	var m host.Manifest
	b, err := os.ReadFile(filepath.Join(filepath.Dir(wasm), "builtin.plugin.json"))
	if err != nil || json.Unmarshal(b, &m) != nil || m.Runtime != host.RuntimeWASM || m.Artifact != "builtin.wasm" {
		t.Fatalf("manifest %s (%v): want runtime wasm read from the module next to it", b, err)
	}
	notWASM := writeFile(t, "scorer.js", "#!/usr/bin/env node\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--runtime", "wasm", notWASM}, "is not a WebAssembly module"},
		{[]string{"--runtime", "jvm", notWASM}, `--runtime "jvm": want wasm or process`},
		{[]string{"-o", filepath.Join(t.TempDir(), "x.json"), notWASM}, "must end in .plugin.json"},
		{[]string{"/no/such/artifact"}, "no such file"},
		{[]string{notWASM}, "wrote " + filepath.Join(filepath.Dir(notWASM), "scorer.plugin.json") + ", but the plugin does not load"},
	} {
		r := runCLIWith(t, builtinRegistry, "", append([]string{"plugin", "manifest"}, c.args...)...)
		if r.code != ExitSetup || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, want %d with %q; stderr:\n%s", c.args, r.code, ExitSetup, c.want, r.stderr)
		}
	}
}

// score --stats counts the process plugins' memory with the command's own; natively there
// is none to count.
func TestScoreStats(t *testing.T) {
	exe := builtArtifact(t, "process", "builtin")
	dir := filepath.Join(filepath.Dir(filepath.Dir(exe)), "plugins")
	r := runCLIWith(t, builtinRegistry, "", "plugin", "manifest", "-o", filepath.Join(dir, "mine.plugin.json"), "--replaces", "prescreen", "--check=false", exe)
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	run := `{"input":"What is the capital of France?","output":"Paris"}`
	r = runCLIWith(t, builtinRegistry, run, "score", "--stats", "--plugins", dir, "--runtime", "process", "--scorers", "prescreen", "-")
	plugins := regexp.MustCompile(`stats: memory: scorekit \d+ MiB peak \+ process plugins (\d+) MiB in (\d+) process\(es\) = \d+ MiB`).FindStringSubmatch(r.stderr)
	if r.code != ExitOK || !strings.Contains(r.stderr, "stats: 1 line(s) in ") || plugins == nil || plugins[1] == "0" || plugins[2] == "0" {
		t.Fatalf("exit %d; stderr:\n%s\nwant the line count and the plugin processes' memory", r.code, r.stderr)
	}
	r = runCLIWith(t, builtinRegistry, run, "score", "--stats", "--scorers", "prescreen", "-")
	if r.code != ExitOK || !strings.Contains(r.stderr, "stats: memory: scorekit ") || strings.Contains(r.stderr, "process plugins") {
		t.Fatalf("native: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	r = runCLIWith(t, builtinRegistry, run, "score", "--scorers", "prescreen", "-")
	if strings.Contains(r.stderr, "stats:") {
		t.Fatalf("stats without --stats:\n%s", r.stderr)
	}
}

// --memory-mib goes into the manifest's limits; a negative one is refused, naming the flag.
func TestPluginManifestMemory(t *testing.T) {
	exe := builtArtifact(t, "process", "builtin")
	out := filepath.Join(filepath.Dir(exe), "mine.plugin.json")
	r := runCLIWith(t, builtinRegistry, "", "plugin", "manifest", "--check=false", "--memory-mib", "-5", "-o", out, exe)
	if r.code == ExitOK || !strings.Contains(r.stderr, "--memory-mib -5") {
		t.Fatalf("exit %d; stderr:\n%s\nwant a refusal naming --memory-mib", r.code, r.stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a refused manifest was written")
	}
	r = runCLIWith(t, builtinRegistry, "", "plugin", "manifest", "--check=false", "--memory-mib", "96", "-o", out, exe)
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	m, err := host.ReadManifest(out)
	if err != nil || m.Limits.MemoryMiB != 96 {
		t.Fatalf("manifest limits %+v, %v; want memory_mib 96", m.Limits, err)
	}
}

// --env and --read go into a process plugin's manifest (read paths relative to it, as the
// host resolves them); a malformed --env, a --read that does not exist and either for a
// WASM module are refused, naming the flag.
func TestPluginManifestEnvRead(t *testing.T) {
	exe := builtArtifact(t, "process", "builtin")
	lib := filepath.Join(filepath.Dir(filepath.Dir(exe)), "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(filepath.Dir(exe), "mine.plugin.json")
	r := runCLIWith(t, builtinRegistry, "", "plugin", "manifest", "--check=false", "--env", "PYTHONPATH="+lib, "--env", "MODE=a=b", "--read", lib, "-o", out, exe)
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	m, err := host.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Env["PYTHONPATH"] != lib || m.Env["MODE"] != "a=b" || !slices.Equal(m.Read, []string{"../lib"}) {
		t.Errorf("manifest env %v read %v; want PYTHONPATH, MODE=a=b and ../lib", m.Env, m.Read)
	}
	wasm := builtArtifact(t, "wasm", "builtin.wasm")
	// A refused manifest is not written: the one written before stays as it was.
	refused := filepath.Join(filepath.Dir(exe), "refused.plugin.json")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--env", "NOVALUE", "-o", refused, exe}, `--env "NOVALUE": want NAME=VALUE`},
		{[]string{"--read", filepath.Join(lib, "missing"), "-o", refused, exe}, "--read " + filepath.Join(lib, "missing")},
		{[]string{"--read", lib, "-o", refused, wasm}, "--env and --read are for process plugins"},
		{[]string{"--env", "TOKEN=x", "-o", refused, exe}, "a plugin never gets a credential"},
		{[]string{"--env", "PLUGIN_PROTOCOL_VERSIONS=9", "-o", refused, exe}, "the host sets go-plugin's variables itself"},
	} {
		r := runCLIWith(t, builtinRegistry, "", append([]string{"plugin", "manifest"}, c.args...)...)
		if r.code != ExitSetup || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, want %d with %q; stderr:\n%s", c.args, r.code, ExitSetup, c.want, r.stderr)
		}
		if _, err := os.Stat(refused); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%v: the refused manifest was written (stat: %v)", c.args, err)
			_ = os.Remove(refused)
		}
	}
}
