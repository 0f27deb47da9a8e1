package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/scorekit/scorekit/sdk"
)

// jsonRecord is the jsonl record as encoding/json writes it: appendRecord must write the
// same bytes.
type jsonRecord struct {
	Line              int                `json:"line"`
	RunID             string             `json:"run_id"`
	Scorer            string             `json:"scorer"`
	Status            sdk.Status         `json:"status"`
	Score             *float64           `json:"score"`
	Passed            *bool              `json:"passed"`
	Dimensions        map[string]float64 `json:"dimensions"`
	Flags             []string           `json:"flags"`
	Reason            string             `json:"reason"`
	Error             *sdk.Error         `json:"error"`
	Telemetry         sdk.Telemetry      `json:"telemetry"`
	SkippedDimensions map[string]string  `json:"skipped_dimensions,omitempty"`
	Adjustments       []sdk.Adjustment   `json:"adjustments,omitempty"`
	Suggestions       []string           `json:"suggestions,omitempty"`
	CitationAudit     *sdk.CitationAudit `json:"citation_audit,omitempty"`
	Steps             []sdk.Step         `json:"steps,omitempty"`
}

func TestAppendRecordMatchesEncodingJSON(t *testing.T) {
	// appendTelemetry names each field of sdk.Telemetry; the full result below sets each.
	if n := reflect.TypeOf(sdk.Telemetry{}).NumField(); n != 10 {
		t.Fatalf("sdk.Telemetry has %d fields, this test knows 10: write the new one in appendTelemetry and set it below", n)
	}
	score, tiny, huge, no := 0.75, 1e-7, 3e21, false
	results := []sdk.Result{
		sdk.Skipped("no judge"),
		sdk.Failed(sdk.CodeInvalidRun, "run: output: want \"string\"\n\tgot <number> & more"),
		{Status: sdk.StatusScored, Score: &score, Passed: &no, Dimensions: map[string]float64{"z": 1, "a": 0.5, "m": -0},
			Flags: []string{"refusal", "échec"}, Reason: "ctrl \x01\x1f bad utf8 \xff\xfe sep \u2028\u2029 emoji 😀 html <b>&amp;</b>",
			SkippedDimensions: map[string]string{"faithfulness": "no evidence", "b": "x"},
			Adjustments:       []sdk.Adjustment{{Rule: "percentage", Target: "score", From: 75, To: 0.75}},
			Suggestions:       []string{"cite sources"}, CitationAudit: &sdk.CitationAudit{Citations: 2, InvalidCitations: []string{"3"}},
			Steps: []sdk.Step{{Name: "analyze", Prompt: "p", Output: json.RawMessage(`{"v": 1}`)}},
			Telemetry: sdk.Telemetry{DurationMS: 0.012345, Runtime: "wasm", Replaced: "mine", JudgeLimits: []string{"max_batch: raise it"}, JudgeCalls: 3, CacheHits: 1, Retries: 2, PromptTokens: 100,
				CompletionTokens: 7, Nodes: []map[string]any{{"node": "evaluator", "n": 1.5}}}},
		{Status: sdk.StatusScored, Score: &tiny, Telemetry: sdk.Telemetry{DurationMS: huge}},
		{Status: sdk.StatusScored, Score: ptrTo(math.Copysign(0, -1)), Dimensions: map[string]float64{}},
	}
	for i, r := range results {
		for _, steps := range []bool{false, true} {
			l := scoredLine{line: i + 1, runID: "run \"" + string(rune('a'+i)) + "\""}
			got, err := appendRecord(nil, &l, "prescreen", &r, steps)
			if err != nil {
				t.Fatal(err)
			}
			rec := jsonRecord{Line: l.line, RunID: l.runID, Scorer: "prescreen", Status: r.Status, Score: r.Score, Passed: r.Passed,
				Dimensions: r.Dimensions, Flags: r.Flags, Reason: r.Reason, Error: r.Error, Telemetry: r.Telemetry,
				SkippedDimensions: r.SkippedDimensions, Adjustments: r.Adjustments, Suggestions: r.Suggestions, CitationAudit: r.CitationAudit}
			if rec.Dimensions == nil {
				rec.Dimensions = map[string]float64{}
			}
			if rec.Flags == nil {
				rec.Flags = []string{}
			}
			if steps {
				rec.Steps = r.Steps
			}
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(rec); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("result %d (steps %v):\n got %s\nwant %s", i, steps, got, want.Bytes())
			}
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
