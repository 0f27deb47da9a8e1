package cli

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// TestOversizeLines: a line over run_limits.max_run_bytes is skipped without being read
// whole, reported with its line number and its size, and becomes limit_exceeded for every
// scorer; the lines around it are scored.
func TestOversizeLines(t *testing.T) {
	cfg := writeFile(t, "config.json", `{"run_limits":{"max_run_bytes":100}}`)
	huge := `{"id":"huge","input":"q","output":"` + strings.Repeat("w ", 200_000) + `"}`
	atLimit := `{"id":"at","input":"q","output":"` + strings.Repeat("w", 100-len(`{"id":"at","input":"q","output":""}`)) + `"}`
	data := `{"id":"before","input":"q","output":"a b"}` + "\n" + huge + "\n" + atLimit + "\r\n" + `{"id":"after","input":"q","output":"a"}`
	path := writeFile(t, "runs.jsonl", data)
	r := runCLI(t, "", "score", "--scorers", "words,judged", "--format", "jsonl", "--config", cfg, path)
	if r.code != ExitBadInput {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	want := path + ":2: run over a limit: the run is 390.7 KiB, above the limit of 100 bytes (run_limits.max_run_bytes)"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
	}
	recs := decodeRecords(t, r.stdout)
	if len(recs) != 8 {
		t.Fatalf("%d records, want 8", len(recs))
	}
	for i, w := range []struct{ id, status, code string }{
		{"before", "scored", ""}, {"before", "skipped", ""},
		{"line-2", "failed", "limit_exceeded"}, {"line-2", "failed", "limit_exceeded"},
		{"at", "scored", ""}, {"at", "skipped", ""},
		{"after", "scored", ""}, {"after", "skipped", ""},
	} {
		m := recs[i]
		code := ""
		if e, ok := m["error"].(map[string]any); ok {
			code = e["code"].(string)
		}
		if m["run_id"] != w.id || m["status"] != w.status || code != w.code {
			t.Errorf("record %d: %v %v %q, want %s %s %q", i, m["run_id"], m["status"], code, w.id, w.status, w.code)
		}
	}
}

// TestLineReaderKeepsMemoryBounded reads a line far over the limit through a reader that
// counts what it hands out, and checks the line reader never kept more than the limit.
func TestLineReaderKeepsMemoryBounded(t *testing.T) {
	const limit = 1 << 10
	line := strings.Repeat("x", 10<<20)
	lr := newLineReader(strings.NewReader(line+"\nnext\n"), limit)
	got, size, err := lr.next(nil)
	if err != nil || size != int64(len(line)) || len(got) != 0 || cap(got) > 2*limit {
		t.Fatalf("len %d cap %d size %d err %v: want nothing kept of a %d-byte line", len(got), cap(got), size, err, len(line))
	}
	got, size, err = lr.next(nil)
	if err != nil || string(got) != "next" || size != 4 || lr.n != 2 {
		t.Fatalf("%q %d %v line %d", got, size, err, lr.n)
	}
}

func TestDatasetShapes(t *testing.T) {
	cases := []struct {
		name   string
		data   string
		code   int
		stderr string
		ids    []string
	}{
		{"empty file", "", ExitBadInput, "has no runs (it is empty or blank); score wants JSON Lines, one run per line", nil},
		{"blank file", "\n  \n\t\n", ExitBadInput, "has no runs", nil},
		{"JSON array on one line", `[{"output":"a"},{"output":"b"}]`, ExitBadInput, "is a JSON array, not JSON Lines (one run per line); convert it with: jq -c '.[]' ", nil},
		{"pretty-printed JSON array", "\n[\n  {\"output\": \"a\"}\n]\n", ExitBadInput, "jq -c '.[]'", nil},
		{"byte order mark", "\xef\xbb\xbf" + `{"id":"bom","input":"q","output":"a"}` + "\n", ExitOK, "", []string{"bom"}},
		{"CRLF line endings", `{"id":"a","input":"q","output":"a"}` + "\r\n" + `{"id":"b","input":"q","output":"b"}` + "\r\n", ExitOK, "", []string{"a", "b"}},
		{"numeric ids and chat shapes", `{"id":7,"input":[{"role":"system","content":"s"},{"role":"user","content":"q"}],"output":{"role":"assistant","content":"a b"}}` + "\n" +
			`{"id":8,"input":"q","output":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"},{"role":"assistant","content":"done"}]}`,
			ExitOK, "", []string{"7", "8"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, "runs.jsonl", c.data)
			r := runCLI(t, "", "score", "--scorers", "words", "--format", "jsonl", path)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, c.code, r.stderr)
			}
			if c.stderr != "" && !strings.Contains(r.stderr, path+" "+strings.TrimPrefix(c.stderr, " ")) && !strings.Contains(r.stderr, c.stderr) {
				t.Errorf("stderr lacks %q:\n%s", c.stderr, r.stderr)
			}
			var ids []string
			for _, m := range decodeRecords(t, r.stdout) {
				ids = append(ids, m["run_id"].(string))
				if m["status"] != "scored" {
					t.Errorf("record %v", m)
				}
			}
			if strings.Join(ids, ",") != strings.Join(c.ids, ",") {
				t.Errorf("ids %v, want %v", ids, c.ids)
			}
		})
	}
	r := runCLI(t, `[{"output":"a"}]`, "score", "--scorers", "words", "-")
	if r.code != ExitBadInput || !strings.Contains(r.stderr, "stdin is a JSON array") || !strings.Contains(r.stderr, "jq -c '.[]' FILE.json > runs.jsonl") {
		t.Errorf("stdin array: exit %d; stderr:\n%s", r.code, r.stderr)
	}
}

func TestFlagErrorsNameTheFlag(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--timeout", "0"}, "score: --timeout 0s: want a duration above 0, such as 30s or 2m"},
		{[]string{"--timeout", "-1s"}, "score: --timeout -1s: want a duration above 0"},
		{[]string{"--timeout", "soon"}, `invalid argument "soon" for "--timeout" flag`},
		{[]string{"--scale", "-1"}, "score: --scale -1: want a number above 0 (1 keeps scores in 0-1, 100 gives percentages)"},
		{[]string{"--scale", "0"}, "score: --scale 0: want a number above 0"},
		{[]string{"--scale", "NaN"}, "score: --scale NaN: want a number above 0"},
		{[]string{"--worst", "-1"}, "score: --worst -1: want 0 or more (0 lists no runs)"},
		{[]string{"--concurrency", "0"}, "score: --concurrency 0: want 1 or more"},
		{[]string{"--format", "xml"}, `score: --format "xml": want table, jsonl or junit`},
		{[]string{"--config", "/no/such/config.json"}, "read config: open /no/such/config.json"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := runCLI(t, `{"input":"q","output":"a"}`, append(append([]string{"score", "--scorers", "words"}, c.args...), "-")...)
			if r.code != ExitSetup || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("exit %d, want %d with %q; stderr:\n%s", r.code, ExitSetup, c.want, r.stderr)
			}
		})
	}
	// --worst 0 is valid: the table lists no runs.
	r := runCLI(t, `{"id":"x","input":"q","output":"a"}`, "score", "--scorers", "words", "--worst", "0", "-")
	if r.code != ExitOK || strings.Contains(r.stdout, "lowest scores") {
		t.Errorf("--worst 0: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// blockingScorer scores every run at once except those whose output is "block": it tells
// the test it has started one, then waits for the end of its context.
type blockingScorer struct {
	started chan struct{}
	once    *sync.Once
}

func (blockingScorer) Info() sdk.Info {
	return sdk.Info{Name: "blocking", Version: "1.0.0", ABIVersion: sdk.ABIVersion, Description: "Blocks on some runs.", Threshold: 0.5}
}

func (s blockingScorer) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	if call.Run.Output != "block" {
		return sdk.Scored(0.9, "fine"), nil
	}
	s.once.Do(func() { close(s.started) })
	<-ctx.Done()
	return sdk.Result{}, ctx.Err()
}

// TestInterruptPrintsPartialTable stands for Ctrl-C: the command's context ends while a
// line is being scored. The lines finished before are summarized, not lost; the line cut
// short is not counted as a failure; the exit status says it was interrupted.
func TestInterruptPrintsPartialTable(t *testing.T) {
	started := make(chan struct{})
	reg := func() (*host.Registry, error) {
		r := host.NewRegistry()
		err := r.Register(host.Native(func() sdk.Scorer { return blockingScorer{started: started, once: &sync.Once{}} }), false)
		return r, err
	}
	data := `{"id":"one","input":"q","output":"a"}` + "\n" + `{"id":"two","input":"q","output":"b"}` + "\n" +
		`{"id":"three","input":"q","output":"block"}` + "\n" + `{"id":"four","input":"q","output":"d"}` + "\n"
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-started; cancel() }()
	var out, errb strings.Builder
	e := &env{stdin: strings.NewReader(data), stdout: &out, stderr: &errb, registry: reg}
	code := e.run(ctx, []string{"score", "--scorers", "blocking", "--concurrency", "1", "-"})
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitInterrupted, errb.String())
	}
	lines := strings.Split(out.String(), "\n")
	if !strings.HasPrefix(lines[0], "Interrupted: a partial summary") {
		t.Errorf("no partial-summary note:\n%s", out.String())
	}
	row := ""
	for _, l := range lines {
		if strings.HasPrefix(l, "blocking ") {
			row = l
		}
	}
	if got := strings.Fields(row); len(got) < 7 || got[1] != "2" || got[2] != "2" || got[5] != "0" {
		t.Errorf("row %q: want 2 runs, 2 scored, 0 failed", row)
	}
	if !strings.Contains(errb.String(), "scorekit: interrupted after 2 line(s) of stdin") {
		t.Errorf("stderr:\n%s", errb.String())
	}
}

// The commands that open the service refuse a scorer deadline of 0 or less, as score
// does; eval and worker took 0 as 30s and passed a negative one on.
func TestServiceCommandsRefuseATimeoutOfZero(t *testing.T) {
	db := filepath.Join(t.TempDir(), "no-such-folder", "scorekit.db")
	for _, cmd := range [][]string{{"serve", "--addr", "127.0.0.1:0"}, {"worker", "--workers", "1"}, {"eval", "--agent", "triage"}} {
		for _, d := range []string{"0", "-1s"} {
			t.Run(cmd[0]+" "+d, func(t *testing.T) {
				r := runCLI(t, "", append(cmd, "--db", db, "--timeout", d)...)
				want := "--timeout " + strings.TrimSuffix(d, "s") + "s: want a duration above 0"
				if r.code == 0 || !strings.Contains(r.stderr, want) {
					t.Fatalf("exit %d, want an error with %q; stderr:\n%s", r.code, want, r.stderr)
				}
			})
		}
	}
}
