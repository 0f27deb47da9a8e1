package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// wordsScorer is a small real scorer the CLI tests run through the host: it scores
// words*per_word capped at 1, flags empty outputs, skips runs without input and fails on
// outputs containing "boom", so each status the CLI reports has a cause.
type wordsScorer struct{ perWord float64 }

var _ sdk.Configurer = (*wordsScorer)(nil)

func (w *wordsScorer) Info() sdk.Info {
	return sdk.Info{
		Name: "words", Version: "1.2.0", ABIVersion: sdk.ABIVersion,
		Description:  "Counts the words of the output.",
		Range:        sdk.Unit,
		Threshold:    0.5,
		ConfigSchema: json.RawMessage(`{"type":"object","properties":{"per_word":{"type":"number"}},"additionalProperties":false}`),
		Defaults:     json.RawMessage(`{"per_word":0.25}`),
	}
}

func (w *wordsScorer) Configure(raw json.RawMessage) error {
	w.perWord = 0.25
	if len(raw) == 0 {
		return nil
	}
	var c struct {
		PerWord *float64 `json:"per_word"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return err
	}
	if c.PerWord != nil {
		w.perWord = *c.PerWord
	}
	return nil
}

func (w *wordsScorer) Score(_ context.Context, call sdk.Call) (sdk.Result, error) {
	run := call.Run
	switch {
	case run.Input == "":
		return sdk.Skipped("no input to compare with"), nil
	case strings.Contains(run.Output, "boom"):
		return sdk.Result{}, fmt.Errorf("scorer exploded on %q", run.Output)
	case run.Output == "":
		r := sdk.Scored(0, "the output is empty")
		r.Flags = []string{"empty_output"}
		return r, nil
	}
	n := len(strings.Fields(run.Output))
	return sdk.Scored(math.Min(1, float64(n)*w.perWord), fmt.Sprintf("%d words", n)), nil
}

// judgeScorer asks the judge to rate the output from 1 to 5 and, as the contract asks,
// skips when no judge is configured.
type judgeScorer struct{}

func (judgeScorer) Info() sdk.Info {
	return sdk.Info{
		Name: "judged", Version: "0.1.0", ABIVersion: sdk.ABIVersion, Description: "Asks a judge.",
		Range: sdk.Range{Min: 1, Max: 5}, Threshold: 0.7, Capabilities: []sdk.Capability{sdk.CapJudge},
		Dimensions: []sdk.Dimension{{Name: "relevance", Weight: 0.6}, {Name: "faithfulness", Weight: 0.4}},
	}
}

func (judgeScorer) Score(ctx context.Context, call sdk.Call) (sdk.Result, error) {
	if call.Judge == nil {
		return sdk.NoJudge("judged"), nil
	}
	resp, err := sdk.Ask(ctx, call.Judge, "", "Rate from 1 to 5 as {\"rating\": n}: "+call.Run.Output)
	if err != nil {
		return sdk.Result{}, err
	}
	var v struct {
		Rating float64 `json:"rating"`
	}
	if err := json.Unmarshal([]byte(resp.Content), &v); err != nil {
		return sdk.Result{}, fmt.Errorf("judge answer %q: %w", resp.Content, err)
	}
	r := sdk.Scored(v.Rating, "the judge rated it")
	r.Dimensions = map[string]float64{"relevance": v.Rating, "faithfulness": v.Rating}
	return r, nil
}

func testRegistry() (*host.Registry, error) {
	reg := host.NewRegistry()
	for _, f := range []host.Factory{
		func() sdk.Scorer { return &wordsScorer{} },
		func() sdk.Scorer { return judgeScorer{} },
	} {
		if err := reg.Register(host.Native(f), false); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

type cliResult struct {
	code           int
	stdout, stderr string
}

// runCLI runs the command line against the test registry.
func runCLI(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	return runCLIWith(t, testRegistry, stdin, args...)
}

// runCLIWith runs the command line against the scorers registry returns.
func runCLIWith(t *testing.T, registry func() (*host.Registry, error), stdin string, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, registry: registry}
	code := e.run(t.Context(), args)
	return cliResult{code: code, stdout: out.String(), stderr: errb.String()}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func decodeRecords(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("output line %d is not JSON: %v\n%s", i+1, err, line)
		}
		out = append(out, m)
	}
	return out
}

func readFileString(p string) (string, error) {
	b, err := os.ReadFile(p)
	return string(b), err
}
