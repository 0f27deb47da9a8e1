package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// wasmPlugin builds a WAT module of host/wasm/testdata (or takes a built artifact) into
// dir with a manifest; extra fields are added to the manifest.
func wasmPlugin(t *testing.T, dir, name, src string, extra map[string]any) {
	t.Helper()
	art := filepath.Join(dir, name+".wasm")
	if strings.HasSuffix(src, ".wat") {
		if _, err := exec.LookPath("wat2wasm"); err != nil {
			t.Fatalf("wat2wasm not found (%v): install it with: apt-get install wabt", err)
		}
		if out, err := exec.Command("wat2wasm", src, "-o", art).CombinedOutput(); err != nil {
			t.Fatalf("wat2wasm %s: %v\n%s", src, err, out)
		}
	} else {
		cmd := exec.Command("make", "-s", "-C", filepath.Dir(src), "OUT="+art)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %s: %v\n%s", src, strings.Join(cmd.Args, " "), err, out)
		}
	}
	b, err := os.ReadFile(art)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	m := map[string]any{"name": name, "runtime": "wasm", "artifact": name + ".wasm", "sha256": hex.EncodeToString(sum[:])}
	for k, v := range extra {
		m[k] = v
	}
	j, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, name+".plugin.json"), j, 0o644); err != nil {
		t.Fatal(err)
	}
}

const watDir = "../../host/wasm/testdata/"

// TestLoadingIsolated: hostile and broken plugins beside a good one are each reported
// with their error, by scorers and scorers --json; the good plugin and the built-ins
// load; score refuses only a selected scorer that is unavailable, and says why.
func TestLoadingIsolated(t *testing.T) {
	dir := t.TempDir()
	wasmPlugin(t, dir, "c_contains", "../../examples/wasm-c/scorer.c", nil)
	wasmPlugin(t, dir, "forbidden", watDir+"forbidden.wat", map[string]any{"scorers": []string{"forbidden"}})
	wasmPlugin(t, dir, "noscore", watDir+"noscore.wat", nil)
	wasmPlugin(t, dir, "greedy", watDir+"ok.wat", map[string]any{"limits": map[string]any{"memory_mib": 4096}})
	if err := os.WriteFile(filepath.Join(dir, "broken.plugin.json"), []byte(`{"name": "broken",`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A process plugin goes through the same loading: its failure is its own too.
	proc, _ := json.Marshal(map[string]any{"name": "badproc", "runtime": "process", "artifact": "/bin/true",
		"sha256": strings.Repeat("0", 64), "scorers": []string{"badproc"}})
	if err := os.WriteFile(filepath.Join(dir, "badproc.plugin.json"), proc, 0o644); err != nil {
		t.Fatal(err)
	}
	failures := map[string]string{ // listed name -> part of its error
		"forbidden": "forbidden import env.open_socket",
		"noscore":   "missing export scorekit_v1_score",
		"greedy":    "limits.memory_mib is 4096, the host allows at most 256",
		"broken":    "read manifest",
		"badproc":   "artifact sha256 mismatch",
	}

	r := runCLIWith(t, builtinRegistry, "", "scorers", "--plugins", dir)
	if r.code != ExitOK {
		t.Fatalf("scorers: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "c_contains 1.0.0 (wasm)") || !strings.Contains(r.stdout, "prescreen 0.3.0 (native)") {
		t.Errorf("allowed: the good plugin and the built-ins are listed:\n%s", r.stdout)
	}
	for name, msg := range failures {
		if !strings.Contains(r.stdout, name+" (unavailable: plugin "+name) || !strings.Contains(r.stdout, msg) {
			t.Errorf("denied: %s is listed as unavailable with %q:\n%s", name, msg, r.stdout)
		}
		if !strings.Contains(r.stderr, "plugin not loaded") {
			t.Errorf("the failures are logged on stderr:\n%s", r.stderr)
		}
	}

	r = runCLIWith(t, builtinRegistry, "", "scorers", "--json", "--plugins", dir)
	var list []scorerListing
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("scorers --json: %v\n%s", err, r.stdout)
	}
	got := map[string]scorerListing{}
	for _, s := range list {
		got[s.Name] = s
	}
	if s := got["c_contains"]; s.Runtime != "wasm" || s.Error != "" {
		t.Errorf("--json: c_contains %+v, want a loaded wasm scorer", s)
	}
	for name, msg := range failures {
		if s := got[name]; !strings.Contains(s.Error, msg) || s.Plugin != name || s.Manifest == "" {
			t.Errorf("--json: %s %+v, want error %q, its plugin and manifest", name, s, msg)
		}
	}

	// A start function that never returns holds up loading for the load deadline (10 s),
	// once; the other plugins load regardless.
	slow := t.TempDir()
	wasmPlugin(t, slow, "loopstart", watDir+"loopstart.wat", nil)
	r = runCLIWith(t, builtinRegistry, "", "scorers", "--plugins", slow, "--plugins", dir)
	if r.code != ExitOK || !strings.Contains(r.stdout, "loopstart (unavailable: plugin loopstart") ||
		!strings.Contains(r.stdout, "the start function: timeout") || !strings.Contains(r.stdout, "c_contains 1.0.0 (wasm)") {
		t.Errorf("denied: a start function that never returns, beside a good plugin: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	data := writeFile(t, "runs.jsonl", `{"id": "a", "input": "Capital of France?", "output": "Paris", "expected": "paris"}`+"\n")
	r = runCLIWith(t, builtinRegistry, "", "score", "--format", "jsonl", "--scorers", "c_contains,prescreen", "--plugins", dir, data)
	if r.code != ExitOK || strings.Count(r.stdout, `"status":"scored"`) != 2 {
		t.Errorf("allowed: scoring with loaded scorers: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLIWith(t, builtinRegistry, "", "score", "--scorers", "c_contains,forbidden", "--plugins", dir, data)
	if r.code != ExitSetup || !strings.Contains(r.stderr, `scorer "forbidden": plugin forbidden`) || !strings.Contains(r.stderr, "forbidden import") {
		t.Errorf("denied: a selected scorer whose plugin failed: exit %d\n%s", r.code, r.stderr)
	}
	r = runCLIWith(t, builtinRegistry, "", "score", "--scorers", "nowhere", "--plugins", dir, data)
	if r.code != ExitSetup || !strings.Contains(r.stderr, "failed to load, see why with: scorekit scorers") {
		t.Errorf("denied: an unknown scorer, with plugins that failed: exit %d\n%s", r.code, r.stderr)
	}
}

// TestShadowing: a plugin scorer named like a built-in (prescreen) replaces it only when
// its manifest opts in, and then says so in scorers and in every result.
func TestShadowing(t *testing.T) {
	data := writeFile(t, "runs.jsonl", `{"id": "empty", "input": "What is the capital of France?", "output": ""}`+"\n")
	score := func(t *testing.T, dir string) map[string]any {
		r := runCLIWith(t, builtinRegistry, "", "score", "--format", "jsonl", "--scorers", "prescreen", "--plugins", dir, data)
		if r.code != ExitOK {
			t.Fatalf("score: exit %d\n%s", r.code, r.stderr)
		}
		rows := decodeRecords(t, r.stdout)
		if len(rows) != 1 {
			t.Fatalf("%d rows, want 1", len(rows))
		}
		return rows[0]
	}
	t.Run("denied: without replaces the built-in stays", func(t *testing.T) {
		dir := t.TempDir()
		wasmPlugin(t, dir, "shadow", watDir+"shadow.wat", nil)
		row := score(t, dir)
		tel := row["telemetry"].(map[string]any)
		if row["score"] == 1.0 || tel["runtime"] != "native" || tel["replaced"] != nil {
			t.Errorf("an empty output scored %v in %v (replaced %v); want the built-in pre-screen's verdict", row["score"], tel["runtime"], tel["replaced"])
		}
		r := runCLIWith(t, builtinRegistry, "", "scorers", "--plugins", dir)
		if !strings.Contains(r.stdout, "prescreen 0.3.0 (native)") || !strings.Contains(r.stdout, `add "replaces": ["prescreen"] to shadow's manifest`) {
			t.Errorf("scorers shows the built-in and the refused plugin with the fix:\n%s", r.stdout)
		}
	})
	t.Run("allowed: with replaces the plugin runs, and says so", func(t *testing.T) {
		dir := t.TempDir()
		wasmPlugin(t, dir, "shadow", watDir+"shadow.wat", map[string]any{"replaces": []string{"prescreen"}})
		row := score(t, dir)
		tel := row["telemetry"].(map[string]any)
		if row["score"] != 1.0 || row["reason"] != "shadow says yes" || tel["runtime"] != "wasm" || tel["replaced"] != "shadow" {
			t.Errorf("got score %v reason %v runtime %v replaced %v; want the plugin's 1, in wasm, replaced by shadow",
				row["score"], row["reason"], tel["runtime"], tel["replaced"])
		}
		r := runCLIWith(t, builtinRegistry, "", "scorers", "--plugins", dir)
		if !strings.Contains(r.stdout, "prescreen 9.9.9 (wasm, from plugin shadow, replacing the built-in of this name)") {
			t.Errorf("scorers shows the replacement:\n%s", r.stdout)
		}
		r = runCLIWith(t, builtinRegistry, "", "scorers", "--json", "--plugins", dir)
		if !strings.Contains(r.stdout, `"replaced": "shadow"`) {
			t.Errorf("scorers --json shows the replacement:\n%s", r.stdout)
		}
	})
}
