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
	// The second span stopped at its token limit (finish_reason length): the pre-screen
	// reads that from the metadata the conversion kept.
	if recs[1]["run_id"] != "2222222222222222" || recs[1]["passed"] != false {
		t.Errorf("a cut-off answer passed: %v", recs[1])
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
		{"unknown format", "", []string{"--from", "langsmith", "-"}, ExitSetup, `convert: --from "langsmith": want openai-chat or otel-genai`},
		{"no format", "", []string{"-"}, ExitSetup, `convert: --from "": want openai-chat or otel-genai`},
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
