package doctest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/cli"
	"github.com/scorekit/scorekit/internal/judgetest"
)

// TestRubricExamples runs the two examples of docs/RUBRIC.md as written (their config
// files and their scorekit score commands, the endpoint replaced by a scripted judge) and
// checks the outcomes the page states for the answers it quotes.
func TestRubricExamples(t *testing.T) {
	blocks := docBlocks(t, "docs/RUBRIC.md")
	dir := t.TempDir()
	var commands [][]string
	for _, b := range blocks {
		switch {
		case b.Lang == "json" && b.File != "":
			if err := os.WriteFile(filepath.Join(dir, b.File), []byte(b.Body), 0o644); err != nil {
				t.Fatal(err)
			}
		case b.Lang == "sh":
			cmd := strings.Fields(strings.ReplaceAll(b.Body, "\\\n", " "))
			if len(cmd) > 1 && cmd[0] == "bin/scorekit" && cmd[1] == "score" {
				commands = append(commands, cmd[1:])
			}
		}
	}
	if len(commands) != 2 {
		t.Fatalf("docs/RUBRIC.md has %d scorekit score commands, want the two examples'", len(commands))
	}
	srv := judgetest.New(
		judgetest.Rule{Match: "CASE-yes", Reply: `{"reasoning": "It refunds the charge and says when it lands.", "choice": "yes"}`},
		judgetest.Rule{Match: "CASE-partly", Reply: `{"reasoning": "We will look into it.", "choice": "Partly"}`},
		judgetest.Rule{Match: "CASE-maybe", Reply: `{"reasoning": "Hard to say.", "choice": "maybe"}`},
		judgetest.Rule{Match: "CASE-4", Reply: `{"reasoning": "Polite and clear, a little formal.", "score": 4}`},
		judgetest.Rule{Match: "CASE-fraction", Reply: `{"reasoning": "Polite.", "score": "4/5"}`},
		judgetest.Rule{Match: "CASE-6", Reply: `{"reasoning": "Lovely.", "score": 6}`},
		judgetest.Rule{Match: "CASE-80", Reply: `{"reasoning": "Good.", "score": 80}`},
	)
	defer srv.Close()
	srv.ListModels("gpt-4o-mini", "llama3") // the examples' models; the preflight lists them
	t.Setenv("OPENAI_API_KEY", "test-key")
	want := []map[string]string{
		{"CASE-yes": "1", "CASE-partly": "0.5", "CASE-maybe": "failed"},
		{"CASE-4": "0.75", "CASE-fraction": "0.75", "CASE-6": "failed", "CASE-80": "failed"},
	}
	for i, args := range commands {
		var runs bytes.Buffer
		for id := range want[i] {
			line, _ := json.Marshal(map[string]any{"id": id, "input": id + " I was charged twice.", "output": "Refunded; it lands in 3-5 days.",
				"metadata": map[string]any{"channel": "email"}})
			runs.Write(append(line, '\n'))
		}
		runsFile := filepath.Join(dir, "runs.jsonl")
		if err := os.WriteFile(runsFile, runs.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		for j, a := range args {
			switch {
			case j > 0 && args[j-1] == "--config":
				args[j] = filepath.Join(dir, a)
			case j > 0 && args[j-1] == "--judge-url":
				args[j] = srv.URL()
			case a == "runs.jsonl":
				args[j] = runsFile
			}
		}
		var stdout, stderr bytes.Buffer
		code := cli.Run(t.Context(), append(args, "--format", "jsonl"), strings.NewReader(""), &stdout, &stderr)
		if code != cli.ExitOK {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
		}
		for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
			var rec struct {
				RunID  string   `json:"run_id"`
				Status string   `json:"status"`
				Score  *float64 `json:"score"`
				Reason string   `json:"reason"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			got := rec.Status
			if rec.Score != nil {
				b, _ := json.Marshal(*rec.Score)
				got = string(b)
			}
			if got != want[i][rec.RunID] {
				t.Errorf("example %d, %s: %s (%s), want %s", i+1, rec.RunID, got, rec.Reason, want[i][rec.RunID])
			}
			if rec.RunID == "CASE-yes" && rec.Reason != `the judge's verdict: "yes" (1). It refunds the charge and says when it lands.` {
				t.Errorf("reason %q is not the one docs/RUBRIC.md quotes", rec.Reason)
			}
		}
	}
	// The scale example's template shows the channel from the run's metadata.
	last := srv.Requests()[srv.Calls()-1].LastUser()
	if !strings.Contains(last, "The channel: email") || !strings.Contains(last, "<reply>\nRefunded; it lands in 3-5 days.\n</reply>") {
		t.Errorf("the scale example's prompt:\n%s", last)
	}
}
