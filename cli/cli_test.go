package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/cli"
	"github.com/scorekit/scorekit/sdk"
)

// shout scores 1 for an output in capitals. Its Info leaves ABIVersion out, as a scorer
// written in a hurry does.
type shout struct{ name string }

func (s shout) Info() sdk.Info {
	return sdk.Info{Name: s.name, Version: "0.1.0", Description: "1 when the output is in capitals.", Range: sdk.Unit, Threshold: 0.5}
}

func (s shout) Score(_ context.Context, call sdk.Call) (sdk.Result, error) {
	if call.Run.Output != "" && call.Run.Output == strings.ToUpper(call.Run.Output) {
		return sdk.Scored(1, "all capitals"), nil
	}
	return sdk.Scored(0, "not all capitals"), nil
}

func run(t *testing.T, stdin string, scorers []func() sdk.Scorer, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(t.Context(), args, strings.NewReader(stdin), &out, &errb, scorers...)
	return code, out.String(), errb.String()
}

// A linked-in scorer is a scorer like the built-ins in every command: listed, with its
// schema, and scored, natively; the built-ins are still there.
func TestLinkedInScorer(t *testing.T) {
	mine := []func() sdk.Scorer{func() sdk.Scorer { return shout{name: "shout"} }}
	code, out, errs := run(t, "", mine, "scorers")
	if code != cli.ExitOK || !strings.Contains(out, "shout 0.1.0 (native)") || !strings.Contains(out, "prescreen ") {
		t.Fatalf("scorers: exit %d\n%s%s", code, out, errs)
	}
	runs := `{"id":"loud","input":"q","output":"PARIS"}` + "\n" + `{"id":"quiet","input":"q","output":"Paris"}` + "\n"
	code, out, errs = run(t, runs, mine, "score", "--format", "jsonl", "--scorers", "shout,prescreen", "-")
	if code != cli.ExitOK {
		t.Fatalf("score: exit %d\n%s", code, errs)
	}
	got := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec struct {
			RunID     string  `json:"run_id"`
			Scorer    string  `json:"scorer"`
			Score     float64 `json:"score"`
			Telemetry struct {
				Runtime string `json:"runtime"`
			} `json:"telemetry"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Scorer == "shout" {
			got[rec.RunID] = rec.Score
			if rec.Telemetry.Runtime != "native" {
				t.Errorf("shout ran in %q, want native", rec.Telemetry.Runtime)
			}
		}
	}
	if got["loud"] != 1 || got["quiet"] != 0 {
		t.Errorf("shout scored %v, want loud 1 and quiet 0", got)
	}
}

// A linked-in scorer cannot take a built-in's name, nor another's: the command stops
// with a setup error that says to rename it.
func TestLinkedInScorerNameTaken(t *testing.T) {
	for _, c := range []struct {
		name    string
		scorers []func() sdk.Scorer
	}{
		{"a built-in's name", []func() sdk.Scorer{func() sdk.Scorer { return shout{name: "prescreen"} }}},
		{"twice the same name", []func() sdk.Scorer{func() sdk.Scorer { return shout{name: "shout"} }, func() sdk.Scorer { return shout{name: "shout"} }}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errs := run(t, "", c.scorers, "scorers")
			if code != cli.ExitSetup || !strings.Contains(errs, "scorer already registered") || !strings.Contains(errs, "give yours another name") {
				t.Errorf("exit %d, want %d with the fix:\n%s", code, cli.ExitSetup, errs)
			}
		})
	}
}
