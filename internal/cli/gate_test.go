package cli

import (
	"encoding/xml"
	"strings"
	"testing"
)

// gateDataset has, for the words scorer (0.25 per word): three scored runs with mean
// (1 + 0.5 + 0.25) / 3 = 0.58, one failed run (boom) and one skipped run (no input).
const gateDataset = `{"id":"a","input":"q","output":"one two three four"}
{"id":"b","input":"q","output":"one two"}
{"id":"c","input":"q","output":"one"}
{"id":"d","input":"q","output":"boom"}
{"id":"e","input":"","output":"x"}
`

func TestGates(t *testing.T) {
	cases := []struct {
		name   string
		config string
		args   []string
		code   int
		stderr []string
	}{
		{"mean above the gate", "", []string{"--fail-under", "words=0.5"}, ExitOK,
			[]string{"gate --fail-under words=0.5: mean 0.58 over 3 scored results >= 0.5: passed"}},
		{"mean below the gate", "", []string{"--fail-under", "words=0.6"}, ExitGate,
			[]string{"gate --fail-under words=0.6: mean 0.58 over 3 scored results < 0.6: FAILED", "scorekit: gate failed: 1 of the gates above failed"}},
		{"the gate is normalized whatever --scale says", "", []string{"--scale", "100", "--fail-under", "words=0.6"}, ExitGate,
			[]string{"mean 0.58 over 3 scored results < 0.6: FAILED"}},
		{"a scorer without its judge fails its gate, saying why", "", []string{"--scorers", "words,judged", "--fail-under", "judged=0.1"}, ExitGate,
			[]string{"judged did not run (it needs an LLM judge and none is configured: pass --judge-url and --judge-model), so no mean to hold to 0.1: FAILED"}},
		{"failed results within the cap", "", []string{"--max-failed", "1"}, ExitOK,
			[]string{"gate --max-failed 1: 1 failed of 5 results (20.0%), at most 1 allowed: passed"}},
		{"failed results over the cap", "", []string{"--max-failed", "0"}, ExitGate,
			[]string{"gate --max-failed 0: 1 failed of 5 results (20.0%), at most 0 allowed: FAILED"}},
		{"failed results over a percentage", "", []string{"--max-failed", "10%"}, ExitGate,
			[]string{"at most 10% allowed: FAILED"}},
		{"config gates", `{"gate":{"fail_under":{"words":0.9},"max_failed":"50%"}}`, nil, ExitGate,
			[]string{"gate config gate.fail_under.words: mean 0.58 over 3 scored results < 0.9: FAILED", "gate config gate.max_failed: 1 failed of 5 results (20.0%), at most 50% allowed: passed"}},
		{"a flag wins over the config for its scorer", `{"gate":{"fail_under":{"words":0.9},"max_failed":0}}`, []string{"--fail-under", "words=0.5", "--max-failed", "2"}, ExitOK,
			[]string{"gate --fail-under words=0.5:", "gate --max-failed 2:"}},
		{"two gates fail", "", []string{"--fail-under", "words=0.9", "--max-failed", "0"}, ExitGate,
			[]string{"2 of the gates above failed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"score", "--scorers", "words"}
			if c.config != "" {
				args = append(args, "--config", writeFile(t, "config.json", c.config))
			}
			args = append(append(args, c.args...), "-")
			r := runCLI(t, gateDataset, args...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, c.code, r.stderr)
			}
			for _, w := range c.stderr {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if !strings.Contains(r.stdout, "SCORER") {
				t.Errorf("the table is missing when a gate is set:\n%s", r.stdout)
			}
		})
	}
}

// TestGateAfterBadLines: a dataset line that is not a run is exit 2 even when a gate
// failed too; the gate is still reported.
func TestGateAfterBadLines(t *testing.T) {
	r := runCLI(t, gateDataset+"{oops\n", "score", "--scorers", "words", "--max-failed", "0", "-")
	if r.code != ExitBadInput || !strings.Contains(r.stderr, "--max-failed 0: 2 failed of 6 results") {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
}

func TestGateErrors(t *testing.T) {
	cases := []struct {
		name   string
		config string
		args   []string
		want   string
	}{
		{"no equals sign", "", []string{"--fail-under", "words"}, `--fail-under "words": want SCORER=MIN, e.g. --fail-under prescreen=0.8`},
		{"not a number", "", []string{"--fail-under", "words=high"}, `--fail-under words=high: "high" is not a number`},
		{"above 1", "", []string{"--fail-under", "words=80"}, "--fail-under words=80: want a mean score from 0 to 1 (normalized, whatever --scale says)"},
		{"scorer not selected", "", []string{"--fail-under", "judged=0.5"}, "--fail-under judged=0.5: judged is not among the selected scorers (words)"},
		{"bad max-failed", "", []string{"--max-failed", "some"}, `--max-failed some: "some": want a count of failed results`},
		{"percentage over 100", "", []string{"--max-failed", "120%"}, `"120%": want a percentage from 0% to 100%`},
		{"config threshold out of range", `{"gate":{"fail_under":{"words":2}}}`, nil, "config gate.fail_under.words: want a mean score from 0 to 1"},
		{"config max_failed of the wrong kind", `{"gate":{"max_failed":"many"}}`, nil, `config gate.max_failed: "many"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"score", "--scorers", "words"}
			if c.config != "" {
				args = append(args, "--config", writeFile(t, "config.json", c.config))
			}
			r := runCLI(t, gateDataset, append(append(args, c.args...), "-")...)
			if r.code != ExitSetup || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("exit %d, want %d with %q; stderr:\n%s", r.code, ExitSetup, c.want, r.stderr)
			}
		})
	}
}

func TestJUnit(t *testing.T) {
	r := runCLI(t, gateDataset, "score", "--scorers", "words,judged", "--format", "junit", "--fail-under", "words=0.5", "-")
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if !strings.HasPrefix(r.stdout, `<?xml version="1.0" encoding="UTF-8"?>`) {
		t.Errorf("no XML header:\n%s", r.stdout)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Errors   int    `xml:"errors,attr"`
			Skipped  int    `xml:"skipped,attr"`
			Cases    []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Error *struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
				} `xml:"error"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	// One testcase per (run, scorer): 5 runs x 2 scorers.
	if doc.Tests != 10 || len(doc.Suites) != 2 || doc.Suites[0].Name != "words" || doc.Suites[1].Name != "judged" {
		t.Fatalf("tests %d suites %d", doc.Tests, len(doc.Suites))
	}
	words := doc.Suites[0]
	// b (0.5) is at the 0.5 threshold and passes; c (0.25) is below it and fails.
	if words.Tests != 5 || words.Failures != 1 || words.Errors != 1 || words.Skipped != 1 {
		t.Errorf("words suite %+v", words)
	}
	byName := map[string]int{}
	for i, c := range words.Cases {
		byName[c.Name] = i
		if c.Classname != "scorekit.words" {
			t.Errorf("classname %q", c.Classname)
		}
	}
	if c := words.Cases[byName["c (line 3)"]]; c.Failure == nil || c.Failure.Type != "below_threshold" ||
		c.Failure.Message != "score 0.25 is below the threshold 0.5" || c.Failure.Text != "1 words" {
		t.Errorf("c: %+v", c)
	}
	if c := words.Cases[byName["d (line 4)"]]; c.Error == nil || c.Error.Type != "scorer_error" || !strings.Contains(c.Error.Message, "exploded") {
		t.Errorf("d: %+v", c)
	}
	if c := words.Cases[byName["e (line 5)"]]; c.Skipped == nil || c.Skipped.Message != "no input to compare with" {
		t.Errorf("e: %+v", c)
	}
	if doc.Suites[1].Skipped != 5 || doc.Failures != 1 || doc.Errors != 1 || doc.Skipped != 6 {
		t.Errorf("totals: failures %d errors %d skipped %d; judged %+v", doc.Failures, doc.Errors, doc.Skipped, doc.Suites[1])
	}
}
