package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/sdk"
)

// liveTurn is a line live.cjs prints per turn.
type liveTurn struct {
	Library  string `json:"library"`
	Turn     string `json:"turn"`
	User     string `json:"user"`
	Answer   string `json:"answer"`
	RunID    string `json:"run_id"`
	SpanName string `json:"span_name"`
	Done     bool   `json:"done"`
}

// TestOTelLiveApp: a real Node app (ingest/testdata/otel-libs/apps/node20, the AI SDK 6
// and the OpenTelemetry OpenAI instrumentation 0.21) runs the calendar agent's three
// turns against the fake OpenAI server and exports through the OpenTelemetry SDK's OTLP
// exporters (protobuf; the instrumentation's content as log records) to a real scorekit
// serve with the tenant's ingest key. Each turn becomes its run, under the id the app
// prints, with the question, the answer and the tool call with its result; the agent's
// arrival policy stores a pre-screen result for each. It fails, never skips, when Node
// or the app's packages are missing (make test installs them: make otel-live-app).
func TestOTelLiveApp(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: the live OTLP test runs a Node 20 app (make deps installs Node; make test installs the app's packages)")
	}
	libs := filepath.Join(root, "ingest", "testdata", "otel-libs")
	app := filepath.Join(libs, "apps", "node20")
	if _, err := os.Stat(filepath.Join(app, "node_modules", ".package-lock.json")); err != nil {
		t.Fatalf("the live app's packages are not installed (%v): run make otel-live-app (make test does)", err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "scorekit.db")
	scorekit(t, dir, "tenants", "create", "acme", "--db", db)
	key := strings.TrimSpace(scorekit(t, dir, "keys", "create", "--tenant", "acme", "--db", db))
	addr := freeAddr(t)
	srv := start(t, dir, "serve", "--addr", addr, "--db", db)
	waitHealthy(t, srv, addr)
	c := client{url: "http://" + addr, key: key}
	if st := c.do(t, "PUT", "/v1/agents/calendar-agent/policy", []byte(`{"scorers": ["prescreen"], "sample_rate": 1}`), nil); st != 200 {
		t.Fatalf("set the arrival policy: %d", st)
	}

	// The fake OpenAI-compatible server, on a port of its own choosing.
	fake := exec.Command(node, filepath.Join(libs, "common", "openai-server.cjs"))
	fake.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := fake.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var fakeLog testkit.SyncBuffer
	fake.Stderr = &fakeLog
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Process.Kill(); _ = fake.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	openaiURL, ok := strings.CutPrefix(strings.TrimSpace(line), "FAKE_OPENAI_URL=")
	if err != nil || !ok {
		t.Fatalf("the fake OpenAI server printed %q, %v; stderr:\n%s", line, err, fakeLog.String())
	}

	live := exec.Command(node, filepath.Join(app, "live.cjs"))
	live.Env = append(os.Environ(),
		"OPENAI_BASE_URL="+openaiURL,
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+addr,
		"OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20"+key,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
	)
	var liveErr testkit.SyncBuffer
	live.Stderr = &liveErr
	stdout, err := live.Output()
	if err != nil {
		t.Fatalf("live.cjs: %v\nstdout:\n%s\nstderr:\n%s\nserve:\n%s", err, stdout, liveErr.String(), srv.stderr.String())
	}
	if strings.Contains(liveErr.String(), "Partial Success") {
		t.Errorf("the exporters were told of spans or records not taken:\n%s", liveErr.String())
	}
	var turns []liveTurn
	for _, l := range lines(string(stdout)) {
		var lt liveTurn
		if err := json.Unmarshal([]byte(l), &lt); err != nil {
			t.Fatalf("live.cjs printed %q: %v", l, err)
		}
		if !lt.Done {
			turns = append(turns, lt)
		}
	}
	if len(turns) != 6 {
		t.Fatalf("live.cjs ran %d turns, want 3 for each library:\n%s", len(turns), stdout)
	}

	// The AI SDK's runs and the instrumentation's turns are made once their traces are
	// complete (quiet for service.DefaultTraceQuiet), by the service's job.
	deadline := time.Now().Add(service.DefaultTraceQuiet + 90*time.Second)
	for _, lt := range turns {
		var rv service.RunView
		for {
			if c.get(t, "/v1/runs/"+lt.RunID, &rv) == 200 && len(rv.Results) > 0 {
				break
			}
			if time.Now().After(deadline) {
				var v service.IngestView
				c.get(t, "/v1/ingest", &v)
				t.Fatalf("%s %s: run %s has no result yet (%+v); ingest view %+v\nserve:\n%s", lt.Library, lt.Turn, lt.RunID, rv, v, srv.stderr.String())
			}
			time.Sleep(500 * time.Millisecond)
		}
		var run sdk.Run
		if err := json.Unmarshal(rv.Run, &run); err != nil {
			t.Fatal(err)
		}
		what := lt.Library + " " + lt.Turn
		if run.Agent != "calendar-agent" || run.Input != lt.User || run.Output != lt.Answer {
			t.Errorf("%s: run %s agent %q, %q -> %q; want calendar-agent, %q -> %q", what, lt.RunID, run.Agent, run.Input, run.Output, lt.User, lt.Answer)
		}
		if lt.Turn != "capital" && (len(run.ToolCalls) != 1 || run.ToolCalls[0].Name != "cancel_event" || !strings.Contains(run.ToolCalls[0].Result, `"cancelled":true`)) {
			t.Errorf("%s: tool calls %+v, want cancel_event with its result", what, run.ToolCalls)
		}
		r := rv.Results[0]
		if r.Scorer != "prescreen" || r.Status != string(sdk.StatusScored) {
			t.Errorf("%s: result %+v, want a scored pre-screen", what, r)
		}
	}
	var v service.IngestView
	if c.get(t, "/v1/ingest", &v) != 200 || v.Runs != 6 || len(v.Dropped) != 0 {
		t.Errorf("ingest view %+v: want 6 runs and nothing dropped", v)
	}
	t.Logf("%d runs from %d spans and %d log records", v.Runs, v.Spans, v.LogRecords)
}

// get GETs path into out and returns the status.
func (c client) get(t *testing.T, path string, out any) int {
	t.Helper()
	return c.do(t, "GET", path, nil, out)
}
