package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScorersConfigCommandWorks: every "config: scorekit schema ..." line `scorers` prints
// is a command that works as printed, for a built-in and for a plugin's scorer, which
// exists only with the --plugins the listing was made with.
func TestScorersConfigCommandWorks(t *testing.T) {
	dir := t.TempDir()
	info := `[{"name":"configured","version":"1.0.0","abi_version":1,"description":"WAT test module with a config",` +
		`"range":{"min":0,"max":1},"threshold":0.5,"config_schema":{"type":"object","properties":{"limit":{"type":"integer"}},"additionalProperties":false}}]`
	wat := fmt.Sprintf(`(module
  (memory (export "memory") 1)
  (data (i32.const 1024) %q)
  (func (export "scorekit_v1_alloc") (param i32) (result i32) (i32.const 8192))
  (func (export "scorekit_v1_info") (result i64) (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const %d)))
  (func (export "scorekit_v1_configure") (param i32 i32 i32) (result i64) (i64.const 0))
  (func (export "scorekit_v1_score") (param i32 i32 i32 i32) (result i64) (i64.const 0))
)`, info, len(info))
	src := filepath.Join(t.TempDir(), "configured.wat")
	if err := os.WriteFile(src, []byte(wat), 0o644); err != nil {
		t.Fatal(err)
	}
	wasmPlugin(t, dir, "configured", src, nil)

	r := runCLIWith(t, builtinRegistry, "", "scorers", "--plugins", dir)
	if r.code != ExitOK {
		t.Fatalf("scorers --plugins: exit %d\n%s", r.code, r.stderr)
	}
	commands := map[string]string{} // scorer -> the config line's command
	var scorer string
	for _, l := range strings.Split(r.stdout, "\n") {
		if !strings.HasPrefix(l, " ") && l != "" {
			scorer, _, _ = strings.Cut(l, " ")
		}
		if c, ok := strings.CutPrefix(l, "  config: "); ok {
			commands[scorer] = c
		}
	}
	for _, name := range []string{"configured", "prescreen"} {
		t.Run(name, func(t *testing.T) {
			c, ok := commands[name]
			if !ok {
				t.Fatalf("no config line for %s:\n%s", name, r.stdout)
			}
			args := strings.Fields(c)
			if args[0] != "scorekit" {
				t.Fatalf("config line %q is not a scorekit command", c)
			}
			s := runCLIWith(t, builtinRegistry, "", args[1:]...)
			if s.code != ExitOK || !strings.Contains(s.stdout, `"type": "object"`) {
				t.Errorf("%s: exit %d\n%s%s", c, s.code, s.stdout, s.stderr)
			}
			if name == "configured" && !strings.Contains(s.stdout, `"limit"`) {
				t.Errorf("%s printed another schema than the plugin's:\n%s", c, s.stdout)
			}
		})
	}
}

func TestShellQuote(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"a plain path stays", "build/wasm", "build/wasm"},
		{"a space is quoted", "/tmp/my plugins", "'/tmp/my plugins'"},
		{"a quote is escaped", "it's", `'it'\''s'`},
		{"empty is a word", "", "''"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := shellQuote(c.in); got != c.want {
				t.Errorf("shellQuote(%q) = %s, want %s", c.in, got, c.want)
			}
		})
	}
}
