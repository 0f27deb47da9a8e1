package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runs delete, export, audit and tenants delete against one SQLite file.
func TestDeletionCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "scorekit.db")
	runs := writeFile(t, "runs.jsonl", `{"id": "r1", "agent": "bot", "input": "q", "output": "one"}
{"id": "r2", "agent": "bot", "input": "q", "output": "two"}
{"id": "r3", "agent": "helper", "input": "q", "output": "three"}`)
	for _, args := range [][]string{{"tenants", "create", "acme"}, {"runs", "import", runs}} {
		if r := runCLI(t, "", append(args, "--db", db)...); r.code != ExitOK {
			t.Fatalf("%v: %d %s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"neither ids nor agent", []string{"runs", "delete"}, ExitSetup, "", "--agent NAME"},
		{"an unknown run", []string{"runs", "delete", "nope"}, ExitSetup, "", `no run "nope"`},
		{"a run", []string{"runs", "delete", "r1"}, ExitOK, "run r1 deleted: 1 runs, 0 results", ""},
		{"its id imported again", []string{"runs", "import", runs}, ExitOK, "1 not stored: runs of their ids were deleted", ""},
		{"an agent", []string{"runs", "delete", "--agent", "helper"}, ExitOK, "agent helper deleted: 1 runs", ""},
		{"the audit log", []string{"audit"}, ExitOK, "delete_agent  helper", ""},
		{"a tenant without --yes", []string{"tenants", "delete", "acme"}, ExitSetup, "", "export it first"},
	}
	for _, c := range cases {
		r := runCLI(t, "", append(c.args, "--db", db)...)
		if r.code != c.code || !strings.Contains(r.stdout, c.stdout) || !strings.Contains(r.stderr, c.stderr) {
			t.Fatalf("%s: %d\n%s%s", c.name, r.code, r.stdout, r.stderr)
		}
	}
	out := filepath.Join(t.TempDir(), "acme.jsonl")
	if r := runCLI(t, "", "export", "--out", out, "--db", db); r.code != ExitOK {
		t.Fatalf("export: %d %s", r.code, r.stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if !strings.Contains(lines[0], `"kind":"tenant"`) || !strings.Contains(string(b), `"id":"r2"`) || strings.Contains(string(b), `"id":"r1"`) ||
		!strings.HasPrefix(lines[len(lines)-1], `{"kind":"end","data":{`) {
		t.Fatalf("export:\n%s", b)
	}
	if r := runCLI(t, "", "tenants", "delete", "acme", "--yes", "--db", db); r.code != ExitOK || !strings.Contains(r.stdout, "tenant acme deleted: 1 runs") {
		t.Fatalf("tenants delete: %d %s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "", "audit", "--deleted-tenants", "--db", db); r.code != ExitOK || !strings.Contains(r.stdout, "delete_tenant  acme") {
		t.Fatalf("audit --deleted-tenants: %d %s%s", r.code, r.stdout, r.stderr)
	}
}
