package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/judgetest"
)

const mixedDataset = `{"id":"ok-1","input":"q","output":"one two three four"}
{"id":"broken json", 
{"id":"no-output","input":"q"}
{"id":"wrong-type","input":"q","output":3}

{"input":"q","output":""}
["not","an","object"]
{"id":"ok-2","input":"q","output":"one two"}
`

func TestScoreBadLines(t *testing.T) {
	path := writeFile(t, "runs.jsonl", mixedDataset)
	r := runCLI(t, "", "score", "--format", "jsonl", "--scorers", "words,judged", path)
	if r.code != ExitBadInput {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, ExitBadInput, r.stderr)
	}
	// Each bad line is named as FILE:LINE with what is wrong.
	for _, want := range []string{
		path + ":2: ",
		path + ":3: ",
		path + ":4: ",
		path + ":7: ",
		"4 invalid line(s)",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	for _, c := range []struct{ line, want string }{
		{":3: ", `"output"`},
		{":4: ", "output"},
	} {
		msg := lineOf(r.stderr, path+c.line)
		if !strings.Contains(msg, c.want) {
			t.Errorf("message for line%s does not name %s: %q", c.line, c.want, msg)
		}
	}

	recs := decodeRecords(t, r.stdout)
	type key struct {
		line   float64
		scorer string
	}
	got := map[key]map[string]any{}
	var order []float64
	for _, m := range recs {
		got[key{m["line"].(float64), m["scorer"].(string)}] = m
		if m["scorer"] == "words" {
			order = append(order, m["line"].(float64))
		}
	}
	if want := []float64{1, 2, 3, 4, 6, 7, 8}; !slices.Equal(order, want) {
		t.Errorf("lines in output %v, want %v (blank line 5 skipped, input order kept)", order, want)
	}
	cases := []struct {
		name   string
		line   float64
		scorer string
		status string
		runID  string
		code   string
		score  any
	}{
		{"valid line scored", 1, "words", "scored", "ok-1", "", 1.0},
		{"invalid JSON fails for words", 2, "words", "failed", "line-2", "invalid_run", nil},
		{"invalid JSON fails for judged", 2, "judged", "failed", "line-2", "invalid_run", nil},
		{"missing output", 3, "words", "failed", "line-3", "invalid_run", nil},
		{"wrong type", 4, "judged", "failed", "line-4", "invalid_run", nil},
		{"empty output scores 0, id from line", 6, "words", "scored", "line-6", "", 0.0},
		{"array is not a run", 7, "words", "failed", "line-7", "invalid_run", nil},
		{"line after bad ones still scored", 8, "words", "scored", "ok-2", "", 0.5},
		{"no judge is skipped, not failed", 8, "judged", "skipped", "ok-2", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, ok := got[key{c.line, c.scorer}]
			if !ok {
				t.Fatalf("no record for line %v scorer %s", c.line, c.scorer)
			}
			if m["status"] != c.status || m["run_id"] != c.runID {
				t.Errorf("status %v run_id %v, want %s %s", m["status"], m["run_id"], c.status, c.runID)
			}
			if m["score"] != c.score {
				t.Errorf("score %v, want %v", m["score"], c.score)
			}
			code := ""
			if e, ok := m["error"].(map[string]any); ok {
				code, _ = e["code"].(string)
			}
			if code != c.code {
				t.Errorf("error code %q, want %q (record %v)", code, c.code, m)
			}
		})
	}
}

func lineOf(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func TestScoreJSONLShape(t *testing.T) {
	r := runCLI(t, `{"id":"a","input":"q","output":"two words"}`+"\n", "score", "--format", "jsonl", "--scorers", "words", "-")
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	recs := decodeRecords(t, r.stdout)
	if len(recs) != 1 {
		t.Fatalf("got %d records, want 1:\n%s", len(recs), r.stdout)
	}
	var keys []string
	for k := range recs[0] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"dimensions", "error", "flags", "line", "passed", "reason", "run_id", "score", "scorer", "status", "telemetry"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	m := recs[0]
	if m["run_id"] != "a" || m["scorer"] != "words" || m["status"] != "scored" || m["score"] != 0.5 || m["reason"] != "2 words" {
		t.Errorf("record %v", m)
	}
	if tel, _ := m["telemetry"].(map[string]any); tel["runtime"] != "native" {
		t.Errorf("telemetry %v, want runtime native", m["telemetry"])
	}
}

func TestScoreOrderUnderConcurrency(t *testing.T) {
	var b strings.Builder
	const n = 200
	for i := range n {
		// Outputs of varying length so lines finish at different times.
		fmt.Fprintf(&b, `{"id":"r%d","input":"q","output":%q}`+"\n", i, strings.Repeat("w ", i%17+1))
	}
	r := runCLI(t, b.String(), "score", "--format", "jsonl", "--scorers", "words", "--concurrency", "8", "-")
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	recs := decodeRecords(t, r.stdout)
	if len(recs) != n {
		t.Fatalf("%d records, want %d", len(recs), n)
	}
	for i, m := range recs {
		if m["run_id"] != fmt.Sprintf("r%d", i) || m["line"] != float64(i+1) {
			t.Fatalf("record %d is %v/%v: output out of input order", i, m["run_id"], m["line"])
		}
	}
}

func TestScoreTable(t *testing.T) {
	data := `{"id":"long","input":"q","output":"a b c d e f"}
{"id":"empty","input":"q","output":""}
{"id":"short","input":"q","output":"a"}
{"id":"noinput","input":"","output":"a b"}
{"id":"explodes","input":"q","output":"boom"}
`
	r := runCLI(t, data, "score", "--scorers", "words,judged", "-")
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	lines := strings.Split(r.stdout, "\n")
	if got := strings.Fields(lines[0]); !slices.Equal(got, []string{"SCORER", "RUNS", "SCORED", "MEAN", "PASS", "RATE", "FAILED", "SKIPPED"}) {
		t.Errorf("header %q", lines[0])
	}
	// words: 5 runs; scored long (1), empty (0), short (0.25): mean 0.42; one failed, one skipped.
	if got := strings.Fields(lines[1]); !slices.Equal(got[:4], []string{"words", "5", "3", "0.42"}) || got[5] != "1" || got[6] != "1" {
		t.Errorf("words row %q", lines[1])
	}
	// judged needs a judge and has none: it did not run, and the row says so.
	if got := strings.Fields(lines[2]); !slices.Equal(got, []string{"judged", "5", "0", "no", "judge", "-", "0", "5"}) {
		t.Errorf("judged row %q", lines[2])
	}
	// The runs that did not pass, lowest first; long (1.00) passed, so it is not listed,
	// though --worst 5 leaves room for it.
	worst := after(r.stdout, "words: lowest scores\n")
	for i, want := range []string{"0.00   empty (line 2) [empty_output]: the output is empty", "0.25   short (line 3)", ""} {
		if l := strings.TrimSpace(worst[i]); !strings.HasPrefix(l, want) || want == "" && l != "" {
			t.Errorf("worst[%d] = %q, want prefix %q", i, l, want)
		}
	}
	failed := after(r.stdout, "words: failed\n")
	if !strings.Contains(failed[0], "explodes (line 5): scorer_error: scorer exploded") {
		t.Errorf("failed section %q", failed[0])
	}
	skipped := after(r.stdout, "words: skipped\n")
	if want := "  1 run(s): no input to compare with"; skipped[0] != want {
		t.Errorf("words skipped section %q, want %q", skipped[0], want)
	}
	// In place of its skip reasons: that it did not run, and how to configure a judge.
	notRun := after(r.stdout, "judged: did not run, for want of an LLM judge\n")
	if !strings.HasPrefix(notRun[0], "  judged needs an LLM judge and none is configured") || !strings.Contains(notRun[0], "--judge-url") || notRun[1] != "" {
		t.Errorf("judged section %q", notRun[:2])
	}
	if strings.Contains(r.stdout, "judged: skipped") {
		t.Errorf("the skip reason is repeated:\n%s", r.stdout)
	}
}

// TestScoreJudgeScorersWithoutJudge is the first run of a user who picks the judge scorers
// and configures no judge: they grade the empty output and the stack trace without a call
// (0) and skip the rest. The table must not read as "mean 0.00, pass rate 0%": their rows
// say there was no judge, a note says what to pass, and a gate on them fails saying why.
// With a judge, the same rows carry a mean.
func TestScoreJudgeScorersWithoutJudge(t *testing.T) {
	r := runCLIWith(t, builtinRegistry, "", "score", "--scorers", "prescreen,relevancy,masis", "--fail-under", "masis=0.5", examplesPath)
	if r.code != ExitGate {
		t.Fatalf("exit %d, want %d (the masis gate); stderr:\n%s", r.code, ExitGate, r.stderr)
	}
	rows := map[string][]string{}
	for _, l := range strings.Split(r.stdout, "\n")[1:4] {
		f := strings.Fields(l)
		rows[f[0]] = f[1:]
	}
	if got := rows["prescreen"]; got[2] != "0.73" {
		t.Errorf("prescreen row %q: want its mean", got)
	}
	for _, name := range []string{"relevancy", "masis"} {
		if got, want := rows[name], []string{"12", "2", "no", "judge", "-", "0", "10"}; !slices.Equal(got, want) {
			t.Errorf("%s row %q, want %q", name, got, want)
		}
		note := after(r.stdout, name+": did not run, for want of an LLM judge\n")
		if !strings.Contains(note[0], "--judge-url URL and --judge-model NAME") || !strings.Contains(note[1], "scored only the 2 run(s) it grades without a call") {
			t.Errorf("%s note %q", name, note[:2])
		}
		if strings.Contains(r.stdout, name+": lowest scores") {
			t.Errorf("%s lists lowest scores it did not judge:\n%s", name, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "gate --fail-under masis=0.5: masis did not run (it needs an LLM judge and none is configured") {
		t.Errorf("gate message:\n%s", r.stderr)
	}

	srv := judgetest.New(judgetest.Rule{Reply: `{"reasoning": "it does what was asked", "score": 0.9}`})
	defer srv.Close()
	r = runCLIWith(t, builtinRegistry, "", "score", "--scorers", "relevancy", "--judge-url", srv.URL(), "--judge-model", "m",
		"--judge-key-env", "none", examplesPath)
	if got := strings.Fields(strings.Split(r.stdout, "\n")[1]); r.code != ExitOK || got[0] != "relevancy" || got[3] == "no" {
		t.Errorf("with a judge: exit %d, row %q; stderr:\n%s", r.code, got, r.stderr)
	}
}

func after(s, marker string) []string {
	_, rest, ok := strings.Cut(s, marker)
	if !ok {
		return []string{""}
	}
	return strings.Split(rest, "\n")
}

func TestScoreSetupErrors(t *testing.T) {
	cases := []struct {
		name   string
		config string // written to a file and passed with --config when set
		args   []string
		want   []string
	}{
		{"unknown scorer names the known ones", "", []string{"--scorers", "nope"}, []string{`unknown scorer "nope"`, "judged, words"}},
		{"bad format", "", []string{"--format", "xml"}, []string{`--format "xml"`}},
		{"bad runtime", "", []string{"--runtime", "jvm"}, []string{`--runtime "jvm": want native, wasm or process`}},
		{"scorer in another runtime", "", []string{"--runtime", "wasm"}, []string{"scorer words runs native", "--plugins DIR"}},
		{"unknown config key", `{"scorers":{},"judges":{}}`, nil, []string{`unknown key "judges"`}},
		{"unknown judge key", `{"judge":{"endpoint":"x"}}`, nil, []string{`unknown key "endpoint"`}},
		{"config for unknown scorer", `{"scorers":{"wrds":{}}}`, nil, []string{"scorers.wrds: unknown scorer"}},
		{"scorer config not an object", `{"scorers":{"words":3}}`, nil, []string{"scorers.words: want a JSON object"}},
		{"scorer config rejected by the scorer", `{"scorers":{"words":{"per_wrd":1}}}`, nil, []string{"open words", "per_wrd"}},
		{"judge model without url", "", []string{"--judge-model", "m"}, []string{"need both --judge-url and --judge-model"}},
		{"missing file", "", []string{"/does/not/exist.jsonl"}, []string{"no such file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"score", "--scorers", "words"}
			if c.config != "" {
				args = append(args, "--config", writeFile(t, "config.json", c.config))
			}
			args = append(args, c.args...)
			if !slices.ContainsFunc(c.args, func(a string) bool { return strings.HasSuffix(a, ".jsonl") }) {
				args = append(args, "-")
			}
			r := runCLI(t, `{"input":"q","output":"a"}`, args...)
			if r.code != ExitSetup {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, ExitSetup, r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

func TestScoreConfigAndScale(t *testing.T) {
	cfg := writeFile(t, "config.json", `{"scorers":{"words":{"per_word":0.1}}}`)
	cases := []struct {
		name string
		args []string
		want float64
	}{
		{"default config", nil, 0.75},
		{"config file", []string{"--config", cfg}, 0.3},
		{"config and scale", []string{"--config", cfg, "--scale", "100"}, 30},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"score", "--format", "jsonl", "--scorers", "words"}, c.args...)
			r := runCLI(t, `{"input":"q","output":"a b c"}`, append(args, "-")...)
			if r.code != ExitOK {
				t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
			}
			recs := decodeRecords(t, r.stdout)
			if got, _ := recs[0]["score"].(float64); !near(got, c.want) {
				t.Errorf("score %v, want %v", recs[0]["score"], c.want)
			}
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestScoreOutFile(t *testing.T) {
	out := writeFile(t, "results.jsonl", "stale\n")
	r := runCLI(t, `{"input":"q","output":"a"}`, "score", "--scorers", "words", "-", "--format", "jsonl", "--out", out)
	if r.code != ExitOK || r.stdout != "" {
		t.Fatalf("exit %d stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	b, err := readFileString(out)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(b), &m); err != nil || m["score"] != 0.25 {
		t.Errorf("out file %q (%v)", b, err)
	}
}
