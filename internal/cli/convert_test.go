package cli

import (
	"strings"
	"testing"
)

// TestConvertThenScore converts OpenTelemetry GenAI spans to runs and scores them, as
// `scorekit convert --from otel-genai traces.json | scorekit score -` does.
func TestConvertThenScore(t *testing.T) {
	r := runCLIWith(t, builtinRegistry, "", "convert", "--from", "otel-genai", "../../ingest/testdata/otel-openllmetry.json")
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if n := strings.Count(r.stdout, "\n"); n != 2 {
		t.Fatalf("%d runs, want 2:\n%s", n, r.stdout)
	}
	s := runCLIWith(t, builtinRegistry, r.stdout, "score", "--format", "jsonl", "-")
	if s.code != ExitOK {
		t.Fatalf("score: exit %d; stderr:\n%s", s.code, s.stderr)
	}
	recs := decodeRecords(t, s.stdout)
	byID := map[any]map[string]any{}
	for _, r := range recs {
		byID[r["run_id"]] = r
	}
	// One span stopped at its token limit (finish_reason length): the pre-screen reads that
	// from the metadata the conversion kept. The other asked for a tool call whose next
	// round the trace lacks: a run judged on its call, which passes.
	if r := byID["4bf92f3577b34da6a3ce929d0e0e4736-2222222222222222"]; r["passed"] != false {
		t.Errorf("a cut-off answer passed: %v", r)
	}
	if r := byID["4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111"]; r["passed"] != true {
		t.Errorf("a tool-call round failed: %v", r)
	}
	if !strings.Contains(r.stderr, "1 records read, 2 runs written, 0 skipped") {
		t.Errorf("stderr %q, want the summary", r.stderr)
	}
}

// TestConvertJoinsLogRecords: the OpenTelemetry OpenAI instrumentation records message
// content only as log records; with the logs export beside the traces (--logs), its three
// turns are runs, with the question and its answer; without it, its spans are reported as
// having recorded no output, each named.
func TestConvertJoinsLogRecords(t *testing.T) {
	const dir = "../../ingest/testdata/otel-libs/otel-openai/"
	r := runCLIWith(t, builtinRegistry, "", "convert", "--from", "otel-genai", "--logs", dir+"logs.jsonl", dir+"traces.jsonl")
	if r.code != ExitOK || strings.Count(r.stdout, "\n") != 3 || !strings.Contains(r.stdout, `"input":"What is the capital of France?"`) ||
		!strings.Contains(r.stdout, `"output":"Paris."`) {
		t.Fatalf("exit %d; stdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = runCLIWith(t, builtinRegistry, "", "convert", "--from", "otel-genai", dir+"traces.jsonl")
	if r.code != ExitBadInput || !strings.Contains(r.stderr, "no output recorded") || !strings.Contains(r.stderr, "0 runs written, 5 skipped") {
		t.Errorf("without the logs: exit %d; stderr:\n%s", r.code, r.stderr)
	}
	r = runCLIWith(t, builtinRegistry, "", "convert", "--from", "openai-chat", "--logs", dir+"logs.jsonl", dir+"traces.jsonl")
	if r.code == ExitOK || !strings.Contains(r.stderr, "--logs") {
		t.Errorf("--logs with another format: exit %d; stderr:\n%s", r.code, r.stderr)
	}
}

// TestConvertKeepsGoingPastACutOffRecord: a log cut off mid-record in the middle loses
// that record only; the summary on stderr counts what was written and what was skipped,
// and the exit status says some records were bad.
func TestConvertKeepsGoingPastACutOffRecord(t *testing.T) {
	r := runCLIWith(t, builtinRegistry, "", "convert", "--from", "anthropic-messages", "../../ingest/testdata/anthropic-messages.jsonl")
	if r.code != ExitBadInput || strings.Count(r.stdout, "\n") != 4 {
		t.Fatalf("exit %d, %d runs; stderr:\n%s", r.code, strings.Count(r.stdout, "\n"), r.stderr)
	}
	for _, want := range []string{"record 3: line 3: not JSON: the record is cut off", "8 records read, 4 runs written, 1 skipped"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

func TestConvertErrors(t *testing.T) {
	cases := []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"unknown format", "", []string{"--from", "langsmith", "-"}, ExitSetup, `convert: --from "langsmith": want openai-chat, openai-responses, anthropic-messages, otel-genai`},
		{"no format", "", []string{"-"}, ExitSetup, `convert: --from "": want openai-chat, openai-responses, anthropic-messages, otel-genai`},
		{"empty input", "\n", []string{"--from", "openai-chat", "-"}, ExitBadInput, "stdin has no records"},
		{"records that are not runs are reported and skipped", `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}]}` + "\n" + `{"response":{}}` + "\n",
			[]string{"--from", "openai-chat", "-"}, ExitBadInput, `stdin: record 2: a "response" without its "request": the input it answered is missing`},
		{"not OTLP", `{"resourceSpans": 3}`, []string{"--from", "otel-genai", "-"}, ExitBadInput, "record 1: not OTLP JSON traces"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runCLIWith(t, builtinRegistry, c.stdin, append([]string{"convert"}, c.args...)...)
			if r.code != c.code || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("exit %d, want %d with %q; stderr:\n%s", r.code, c.code, c.want, r.stderr)
			}
		})
	}
}
