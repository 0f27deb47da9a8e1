package cli

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// wordsV2 is the words scorer after a fix: a new version that scores longer outputs higher.
type wordsV2 struct{ wordsScorer }

func (w *wordsV2) Info() sdk.Info {
	i := w.wordsScorer.Info()
	i.Version = "2.0.0"
	return i
}

func (w *wordsV2) Configure(raw json.RawMessage) error {
	if err := w.wordsScorer.Configure(raw); err != nil {
		return err
	}
	w.perWord *= 2
	return nil
}

func fixedRegistry() (*host.Registry, error) {
	reg := host.NewRegistry()
	err := reg.Register(host.Native(func() sdk.Scorer { return &wordsV2{} }), false)
	return reg, err
}

// tenants, keys, runs import and eval against one SQLite file; after a scorer version
// change eval prints the old and new score of each run side by side.
func TestServiceCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "scorekit.db")
	runs := writeFile(t, "runs.jsonl", strings.Join([]string{
		`{"id": "r1", "input": "q", "output": "one", "time": "2025-01-01T00:00:00Z"}`,
		`{"id": "r2", "input": "q", "output": "one two", "time": "2025-01-02T00:00:00Z"}`,
		`{"id": "r3", "output": 5}`,
		`{"id": "r4", "input": "q", "output": "a b c", "time": "2025-01-03T00:00:00Z"}`,
	}, "\n"))

	r := runCLI(t, "", "tenants", "create", "acme", "--db", db)
	if r.code != ExitOK || !strings.Contains(r.stdout, "tenant acme created") {
		t.Fatalf("tenants create: %d %s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "", "tenants", "create", "Acme Corp", "--db", db); r.code != ExitSetup || !strings.Contains(r.stderr, "lower-case") {
		t.Fatalf("bad tenant name: %d %s", r.code, r.stderr)
	}
	pol := writeFile(t, "policy.json", `{"scorers": ["words"], "max_runs_per_evaluation": 50}`)
	if r := runCLI(t, "", "tenants", "set-policy", "acme", "--policy", pol, "--db", db); r.code != ExitOK {
		t.Fatalf("set-policy: %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, "", "tenants", "list", "--db", db); !strings.Contains(r.stdout, `"max_runs_per_evaluation":50`) {
		t.Fatalf("tenants list: %s", r.stdout)
	}
	if r := runCLI(t, "", "tenants", "set-policy", "acme", "--policy", writeFile(t, "bad.json", `{"scorer": []}`), "--db", db); r.code != ExitSetup || !strings.Contains(r.stderr, `unknown field "scorer"`) {
		t.Fatalf("bad policy: %d %s", r.code, r.stderr)
	}
	r = runCLI(t, "", "keys", "create", "--tenant", "acme", "--db", db)
	key := strings.TrimSpace(r.stdout)
	if r.code != ExitOK || !strings.HasPrefix(key, "sk_") || len(key) != 46 || !strings.Contains(r.stderr, "once") || !strings.Contains(r.stderr, "admin key (the default)") {
		t.Fatalf("keys create: %d %q %s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "", "keys", "create", "--tenant", "acme", "--scope", "ingest", "--db", db)
	ingest := strings.TrimSpace(r.stdout)
	if r.code != ExitOK || !strings.HasPrefix(ingest, "sk_") || !strings.Contains(r.stderr, "the ingest key") || strings.Contains(r.stderr, "(the default)") {
		t.Fatalf("keys create --scope ingest: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "", "keys", "create", "--tenant", "acme", "--scope", "owner", "--db", db); r.code != ExitSetup || !strings.Contains(r.stderr, "want one of ingest, read, label, admin") {
		t.Fatalf("keys create --scope owner: %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, "", "keys", "create", "--tenant", "acme", "--scope", "label", "--db", db); r.code != ExitSetup || !strings.Contains(r.stderr, "--labeller NAME") {
		t.Fatalf("keys create --scope label without a labeller: %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, "", "keys", "create", "--tenant", "acme", "--scope", "read", "--labeller", "ana", "--db", db); r.code != ExitSetup || !strings.Contains(r.stderr, "add --scope label") {
		t.Fatalf("keys create --scope read --labeller: %d %s", r.code, r.stderr)
	}
	r = runCLI(t, "", "keys", "create", "--tenant", "acme", "--scope", "label", "--labeller", "ana", "--db", db)
	labelKey := strings.TrimSpace(r.stdout)
	if r.code != ExitOK || !strings.HasPrefix(labelKey, "sk_") || !strings.Contains(r.stderr, "the label key") {
		t.Fatalf("keys create --scope label --labeller ana: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "", "keys", "list", "--tenant", "acme", "--db", db); strings.Contains(r.stdout, key) || !strings.Contains(r.stdout, key[:11]) ||
		!regexp.MustCompile(regexp.QuoteMeta(key[:11])+`\s+admin\s`).MatchString(r.stdout) || !regexp.MustCompile(regexp.QuoteMeta(ingest[:11])+`\s+ingest\s`).MatchString(r.stdout) ||
		!regexp.MustCompile(regexp.QuoteMeta(labelKey[:11])+`\s+label \(ana\)\s`).MatchString(r.stdout) {
		t.Fatalf("keys list shows the key, or not its id and scope: %s", r.stdout)
	}
	r = runCLI(t, "", "runs", "import", "--agent", "bot", "--db", db, runs)
	if r.code != ExitBadInput || !strings.Contains(r.stdout, "3 stored, 0 already stored, 1 rejected (tenant acme)") || !strings.Contains(r.stderr, runs+":3: output") {
		t.Fatalf("runs import: %d %s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "", "eval", "--agent", "bot", "--last", "2", "--scorers", "words", "--db", db, "--poll", "20ms")
	if r.code != ExitOK || !strings.Contains(r.stdout, "SCORER") || !strings.Contains(r.stdout, "words   2") || strings.Contains(r.stdout, "OLD") {
		t.Fatalf("eval: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "r1") {
		t.Fatalf("eval --last 2 evaluated the oldest run:\n%s", r.stdout)
	}
	// The scorer is fixed; the same runs again show old and new side by side.
	r = runCLIWith(t, fixedRegistry, "", "eval", "--agent", "bot", "--last", "2", "--scorers", "words", "--db", db, "--poll", "20ms")
	for _, want := range []string{"words: version 2.0.0 against 1.2.0 (2 runs scored before)", "OLD (1.2.0)", "NEW (2.0.0)", "r4", "0.75", "1.00", "+0.25"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("eval after the fix lacks %q:\n%s%s", want, r.stdout, r.stderr)
		}
	}
	if r := runCLI(t, "", "keys", "revoke", "--tenant", "acme", "--db", db, key[:11]); r.code != ExitOK {
		t.Fatalf("revoke: %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, "", "keys", "revoke", "--tenant", "acme", "--db", db, key[:11]); r.code != ExitSetup || !strings.Contains(r.stderr, "no live key") {
		t.Fatalf("revoke twice: %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, "", "eval", "--agent", "bot", "--last", "0", "--db", db); r.code != ExitSetup || !strings.Contains(r.stderr, "--last 0") {
		t.Fatalf("--last 0: %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, "", "eval", "--agent", "bot", "--last", "51", "--db", db); r.code != ExitSetup || !strings.Contains(r.stderr, "want 1 to 50") {
		t.Fatalf("over the tenant's max runs: %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, "", "eval", "--agent", "bot", "--scorers", "nope", "--db", db); r.code != ExitSetup || !strings.Contains(r.stderr, `unknown scorer "nope"`) {
		t.Fatalf("unknown scorer: %d %s", r.code, r.stderr)
	}
}
