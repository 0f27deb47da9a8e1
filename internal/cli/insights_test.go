package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/service/store"
)

// scorekit insights after the example runs and after the broken deploy; the webhook and
// experimental subcommands, and their bad input.
func TestInsightsCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "scorekit.db")
	examples := filepath.Join("..", "..", "examples", "service")
	run := func(code int, args ...string) cliResult {
		t.Helper()
		r := runCLIWith(t, builtinRegistry, "", append(args, "--db", db)...)
		if r.code != code {
			t.Fatalf("scorekit %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
		}
		return r
	}
	run(ExitOK, "runs", "import", filepath.Join(examples, "email-triage.jsonl"))
	run(ExitOK, "eval", "--agent", "email-triage", "--last", "270")
	if r := run(ExitOK, "insights"); r.stdout != "no open insights (tenant default)\n" {
		t.Fatalf("insights on correct runs:\n%s", r.stdout)
	}
	run(ExitOK, "runs", "import", filepath.Join(examples, "email-triage-broken.jsonl"))
	run(ExitOK, "eval", "--agent", "email-triage", "--last", "100")
	r := run(ExitOK, "insights", "--agent", "email-triage", "--severity", "critical")
	for _, want := range []string{"CRITICAL gross_failures  email-triage/prescreen", "measured: share of gross failures", "window: 100 runs (100 scored", "run email-triage-03", "[error_text]"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("insights lack %q:\n%s", want, r.stdout)
		}
	}
	var list []store.Insight
	if err := json.Unmarshal([]byte(run(ExitOK, "insights", "--json").stdout), &list); err != nil || len(list) == 0 || list[0].Evidence.Window.Runs != 100 {
		t.Fatalf("insights --json: %+v %v", list, err)
	}
	if r := run(ExitOK, "insights", "--agent", "email-triage", "--state", "resolved"); !strings.Contains(r.stdout, "no resolved insights about email-triage") {
		t.Errorf("resolved: %s", r.stdout)
	}
	if r := run(ExitSetup, "insights", "--severity", "high"); !strings.Contains(r.stderr, `severity "high": want warning or critical`) {
		t.Errorf("bad severity: %s", r.stderr)
	}
	if r := run(ExitSetup, "insights", "--agent", "nobody"); !strings.Contains(r.stderr, `agent "nobody" has no runs`) {
		t.Errorf("unknown agent: %s", r.stderr)
	}

	if r := run(ExitOK, "insights", "webhook", "--url", "https://hooks.example.com/x"); !strings.HasPrefix(r.stdout, "whsec_") {
		t.Errorf("webhook prints %q; want the secret", r.stdout)
	}
	if r := run(ExitSetup, "insights", "webhook", "--url", "ftp://x"); !strings.Contains(r.stderr, "want an http:// or https:// URL") {
		t.Errorf("bad webhook: %s", r.stderr)
	}
	run(ExitSetup, "insights", "webhook")
	if r := run(ExitOK, "insights", "webhook", "--remove"); !strings.Contains(r.stdout, "no webhook now") {
		t.Errorf("remove: %s", r.stdout)
	}
	if r := run(ExitOK, "insights", "experimental", "prescreen"); r.stdout != "tenant default marks experimental: prescreen\n" {
		t.Errorf("experimental: %q", r.stdout)
	}
	if r := run(ExitSetup, "insights", "experimental", "nope"); !strings.Contains(r.stderr, `unknown scorer "nope"`) {
		t.Errorf("experimental nope: %s", r.stderr)
	}
	if r := run(ExitOK, "insights", "experimental", "--clear"); r.stdout != "tenant default marks no scorer experimental\n" {
		t.Errorf("clear: %q", r.stdout)
	}
}
