package cli

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/api"
)

// labels import and agreement tenant against the database and against a running service:
// a bad line is reported by number and the rest stored; both ways print the same answer.
func TestLabelsAndTenantAgreement(t *testing.T) {
	db := filepath.Join(t.TempDir(), "scorekit.db")
	runs := writeFile(t, "runs.jsonl", strings.Join([]string{
		`{"id": "r1", "input": "q", "output": "one", "time": "2025-01-01T00:00:00Z"}`,
		`{"id": "r2", "input": "q", "output": "one two", "time": "2025-01-02T00:00:00Z"}`,
		`{"id": "r3", "input": "q", "output": "a b c", "time": "2025-01-03T00:00:00Z"}`,
		`{"id": "r4", "input": "q", "output": "a b c d e", "time": "2025-01-04T00:00:00Z"}`,
	}, "\n"))
	for _, args := range [][]string{
		{"tenants", "create", "acme"},
		{"runs", "import", "--agent", "bot", runs},
		{"eval", "--agent", "bot", "--last", "3", "--scorers", "words", "--poll", "20ms"},
	} {
		if r := runCLI(t, "", append(args, "--db", db)...); r.code != ExitOK {
			t.Fatalf("%v: %d %s%s", args, r.code, r.stdout, r.stderr)
		}
	}
	labels := writeFile(t, "labels.jsonl", strings.Join([]string{
		`{"run_id": "r1", "scorer": "words", "labeller": "ana", "passed": true}`,
		`{"run_id": "r2", "scorer": "words", "labeller": "ana", "passed": true}`,
		`{"run_id": "r3", "scorer": "words", "labeller": "ana", "passed": true}`,
		`{"run_id": "r4", "scorer": "words", "labeller": "ana", "passed": true}`,
		`{"run_id": "r2", "scorer": "words", "labeller": "ben", "passed": false, "note": "too short"}`,
		`{"run_id": "r3", "scorer": "words", "labeller": "ben", "passed": true}`,
		`{"run_id": "r4", "scorer": "words", "labeller": "ben", "passed": true}`,
		`{"run_id": "r9", "scorer": "words", "labeller": "ben", "passed": true}`,
		`{"run_id": "r4", "scorer": "words", "labeller": "ben", "passed": "yes"}`,
	}, "\n"))
	r := runCLI(t, "", "labels", "import", "--db", db, labels)
	if r.code != ExitBadInput || !strings.Contains(r.stdout, "7 stored, 0 replaced, 2 rejected (tenant acme)") ||
		!strings.Contains(r.stderr, labels+`:8: no run "r9"`) || !strings.Contains(r.stderr, labels+":9: passed: want a boolean") {
		t.Fatalf("labels import: %d %s%s", r.code, r.stdout, r.stderr)
	}

	r = runCLI(t, "", "agreement", "tenant", "--scorer", "words", "--db", db)
	for _, want := range []string{
		`Agreement of words (version 1.2.0) with the labels of "words": 7 labels of 4 runs by ana, ben`,
		"Not scored by this version: 1 labelled runs (1 never scored",
		"Cost: the scorer calls no judge",
		"Note: 1 runs left out of pass/fail: their labellers split evenly",
	} {
		if r.code != ExitOK || !strings.Contains(r.stdout, want) {
			t.Fatalf("agreement tenant: %d; want %q in\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
	// r2 is a tie (ana pass, ben fail), left out; r1 is not scored: 2 runs. ana and ben
	// share r2, r3 and r4.
	for _, row := range []string{`(?m)^words vs people\s+2\s+1\.000 `, `(?m)^people: ben vs ana\s+3\s+0\.667 `} {
		if !regexp.MustCompile(row).MatchString(r.stdout) {
			t.Fatalf("no row %s in\n%s", row, r.stdout)
		}
	}
	// r1 is scored through the queue: enqueued here, worked by a worker on the database.
	r = runCLI(t, "", "agreement", "tenant", "--scorer", "words", "--db", db, "--score-missing")
	m := regexp.MustCompile(`Scoring 1 labelled runs with words 1\.2\.0: evaluations (ev_\w+)\.`).FindStringSubmatch(r.stdout)
	if r.code != ExitOK || m == nil {
		t.Fatalf("--score-missing: %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "", "agreement", "tenant", "--scorer", "words", "--db", db, "--score-missing", "--json"); r.code == ExitOK || !strings.Contains(r.stderr, "without --json") {
		t.Fatalf("--score-missing --json: %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, "", "agreement", "tenant", "--scorer", "judged", "--db", db); r.code == ExitOK || !strings.Contains(r.stderr, `no labels for "judged"`) {
		t.Fatalf("no labels: %d %s%s", r.code, r.stdout, r.stderr)
	}

	// The same through a running service, with the key from the environment; its worker
	// scores r1.
	e := &env{stderr: &strings.Builder{}, registry: testRegistry}
	s, err := e.openStack(t.Context(), db, hostOptions{timeout: time.Second},
		jobFlags{workers: 1, chunk: 10, attempts: 1, rescueAfter: time.Minute, poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.close(context.Background()) })
	key, _, err := s.svc.CreateKey(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	acme, err := s.svc.Tenant(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := s.svc.WaitEvaluation(t.Context(), acme, m[1], 30*time.Second, service.ViewOptions{}); err != nil || v.Status != service.StatusDone {
		t.Fatalf("the labelled run's evaluation: %+v, %v", v, err)
	}
	ts := httptest.NewServer(api.New(s.svc, api.Options{}))
	t.Cleanup(ts.Close)
	t.Setenv("TEST_LABELS_KEY", key)

	local := runCLI(t, "", "agreement", "tenant", "--scorer", "words", "--db", db, "--json")
	remote := runCLI(t, "", "agreement", "tenant", "--scorer", "words", "--server", ts.URL, "--key-env", "TEST_LABELS_KEY", "--json")
	var a, b service.ScorerAgreement
	if err := json.Unmarshal([]byte(local.stdout), &a); err != nil {
		t.Fatalf("--db --json: %v\n%s%s", err, local.stdout, local.stderr)
	}
	if err := json.Unmarshal([]byte(remote.stdout), &b); err != nil {
		t.Fatalf("--server --json: %v\n%s%s", err, remote.stdout, remote.stderr)
	}
	if !reflect.DeepEqual(a, b) || a.PassFail == nil || a.PassFail.Runs != 3 || a.NotScored.Runs != 0 {
		t.Fatalf("--db and --server differ:\n%s\n%s", local.stdout, remote.stdout)
	}
	again := writeFile(t, "again.jsonl", `{"run_id": "r1", "scorer": "words", "labeller": "ana", "passed": false}`+"\n")
	if r := runCLI(t, "", "labels", "import", "--server", ts.URL, "--key-env", "TEST_LABELS_KEY", again); r.code != ExitOK ||
		!strings.Contains(r.stdout, "0 stored, 1 replaced, 0 rejected (server "+ts.URL+")") {
		t.Fatalf("labels import --server: %d %s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "", "labels", "import", "--server", ts.URL, "--key-env", "TEST_NO_SUCH_KEY", again); r.code == ExitOK ||
		!strings.Contains(r.stderr, "$TEST_NO_SUCH_KEY") {
		t.Fatalf("labels import without a key: %d %s%s", r.code, r.stdout, r.stderr)
	}
}
