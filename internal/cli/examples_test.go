package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/wasm"
	"github.com/scorekit/scorekit/internal/citation"
	"github.com/scorekit/scorekit/plugins/builtin"
	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/serve"
)

// pluginArg makes the test binary serve the built-in scorers as a process plugin, so the
// --plugins test loads a real plugin executable without a separate build step.
const pluginArg = "scorekit-cli-test-plugin"

func TestMain(m *testing.M) {
	if code, ok := wasm.VetChild(); ok {
		os.Exit(code)
	}
	if len(os.Args) >= 2 && os.Args[1] == pluginArg {
		serve.Register(builtin.Factories()...)
		serve.Main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const examplesPath = "../../examples/runs.jsonl"

// TestExamples scores examples/runs.jsonl with the default scorer, as `make demo` does, and
// holds it to what examples/README.md says about each line.
func TestExamples(t *testing.T) {
	r := runCLIWith(t, builtinRegistry, "", "score", "--format", "jsonl", examplesPath)
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	byID := map[string]map[string]any{}
	for _, m := range decodeRecords(t, r.stdout) {
		if m["scorer"] != defaultScorer {
			t.Errorf("scorer %v, want the default %s", m["scorer"], defaultScorer)
		}
		byID[m["run_id"].(string)] = m
	}
	cases := []struct {
		id     string
		passed bool
		flag   string // a flag the run must carry; "" means it must carry none
	}{
		{"capital-paris", true, ""},
		{"email-triage", true, ""},
		{"list-agents", true, ""},
		{"empty-output", false, "empty_output"},
		{"stack-trace", false, "error_text"},
		{"harmless-refusal", false, "refusal"},
		// Off-topic by word overlap alone is a hint for the judge, never a failure.
		{"off-topic", true, "off_topic"},
		{"rag-cited", true, ""},
		{"short-yes", true, ""},
		{"translate", true, ""},
		{"echo", false, "echo"},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			m, ok := byID[c.id]
			if !ok {
				t.Fatalf("no result for %s", c.id)
			}
			if m["status"] != "scored" || m["passed"] != c.passed {
				t.Errorf("status %v passed %v, want scored %v (reason %v)", m["status"], m["passed"], c.passed, m["reason"])
			}
			flags, _ := m["flags"].([]any)
			switch {
			case c.flag == "" && len(flags) > 0:
				t.Errorf("flags %v, want none", flags)
			case c.flag != "" && !slices.Contains(flags, any(c.flag)):
				t.Errorf("flags %v, want %s", flags, c.flag)
			}
		})
	}
}

// TestPluginsFlag loads the built-in scorers as a process plugin with --plugins and holds
// the results to the native ones: the plugin's scorer replaces the built-in of its name,
// as its manifest's "replaces" allows.
func TestPluginsFlag(t *testing.T) {
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	var names []string
	for _, f := range builtin.Factories() {
		names = append(names, f().Info().Name)
	}
	manifest, _ := json.Marshal(map[string]any{
		"name": "builtin", "runtime": "process", "artifact": exe,
		"sha256": hex.EncodeToString(sum[:]), "args": []string{pluginArg}, "replaces": names,
	})
	if err := os.WriteFile(filepath.Join(dir, "builtin.plugin.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}

	args := []string{"score", "--format", "jsonl", "--scorers", "prescreen,exact_match", examplesPath}
	native := runCLIWith(t, builtinRegistry, "", args...)
	plugin := runCLIWith(t, builtinRegistry, "", append(args, "--plugins", dir)...)
	if native.code != ExitOK || plugin.code != ExitOK {
		t.Fatalf("exit %d (native), %d (plugin); stderr:\n%s\n%s", native.code, plugin.code, native.stderr, plugin.stderr)
	}
	nat, plu := decodeRecords(t, native.stdout), decodeRecords(t, plugin.stdout)
	if len(nat) != len(plu) || len(nat) == 0 {
		t.Fatalf("%d native records, %d plugin records", len(nat), len(plu))
	}
	for i := range nat {
		if rt := plu[i]["telemetry"].(map[string]any)["runtime"]; rt != "process" {
			t.Errorf("record %d ran in %v, want process", i, rt)
		}
		delete(nat[i], "telemetry")
		delete(plu[i], "telemetry")
		a, _ := json.Marshal(nat[i])
		b, _ := json.Marshal(plu[i])
		if string(a) != string(b) {
			t.Errorf("record %d differs:\nnative %s\nplugin %s", i, a, b)
		}
	}

	r := runCLIWith(t, builtinRegistry, "", append(args, "--plugins", dir, "--runtime", "process")...)
	if r.code != ExitOK {
		t.Errorf("--runtime process with the plugin loaded: exit %d\n%s", r.code, r.stderr)
	}
	r = runCLIWith(t, builtinRegistry, "", append(args, "--runtime", "process")...)
	if r.code != ExitSetup || !strings.Contains(r.stderr, "scorer prescreen runs native; load a process build") {
		t.Errorf("--runtime process without the plugin: exit %d\n%s", r.code, r.stderr)
	}

	r = runCLIWith(t, builtinRegistry, "", "scorers", "--plugins", dir)
	if r.code != ExitOK || !strings.Contains(r.stdout, "prescreen 0.3.0 (process, from plugin builtin, replacing the built-in of this name)") {
		t.Errorf("scorers --plugins: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLIWith(t, builtinRegistry, "", "scorers", "--plugins", t.TempDir())
	if r.code != ExitSetup || !strings.Contains(r.stderr, "no *.plugin.json") {
		t.Errorf("--plugins on an empty folder: exit %d\n%s", r.code, r.stderr)
	}
}

// TestExamplesCitations holds examples/README.md's account of the two RAG runs to what the
// host's citation audit finds.
func TestExamplesCitations(t *testing.T) {
	b, err := os.ReadFile(examplesPath)
	if err != nil {
		t.Fatal(err)
	}
	audits := map[string]sdk.CitationAudit{}
	for line := range bytes.Lines(b) {
		run, err := host.DecodeRun(line)
		if err != nil {
			t.Fatal(err)
		}
		if a, ok := citation.Audit(run.Output, run.Context); ok {
			audits[run.ID] = a
		}
	}
	cases := []struct {
		id           string
		invalid      []string
		hallucinated bool
	}{
		{"rag-cited", nil, false},
		{"rag-invalid-citation", []string{"3"}, true},
	}
	for _, c := range cases {
		a, ok := audits[c.id]
		if !ok {
			t.Errorf("%s: no citation audit", c.id)
			continue
		}
		if !slices.Equal(a.InvalidCitations, c.invalid) || a.HallucinationDetected != c.hallucinated {
			t.Errorf("%s: audit %+v, want invalid %v hallucination %v", c.id, a, c.invalid, c.hallucinated)
		}
	}
	if len(audits) != len(cases) {
		t.Errorf("audited runs %v, want only the two RAG runs", audits)
	}
}
