package cli

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/judgetest"
)

// TestJudgeScorersEndToEnd scores the examples with the built-in judge scorers through
// `scorekit score --judge-url` against an OpenAI-compatible test server: relevancy scores
// every run, masis carries its dimensions, suggestions and the clamps the host applied,
// and contextprecision grades the runs with evidence and skips the others.
func TestJudgeScorersEndToEnd(t *testing.T) {
	srv := judgetest.New(
		judgetest.Rule{Match: "Return exactly 2 verdicts", Reply: `{"verdicts": [{"context_index": 0, "verdict": "yes", "reason": "r"}, {"context_index": 1, "verdict": "no", "reason": "r"}]}`},
		judgetest.Rule{Match: "Return exactly 1 verdicts", Reply: `{"verdicts": [{"context_index": 0, "verdict": "yes", "reason": "r"}]}`},
		judgetest.Rule{Match: "improvement_suggestions", Reply: "```json\n" + `{"faithfulness": 90, "relevance": 80, "completeness": 70, "reasoning_quality": 90, "overall_score": 83, "improvement_suggestions": ["cite the second passage"]}` + "\n```"},
		judgetest.Rule{Reply: `{"reasoning": "it does what was asked", "score": 0.9}`},
	)
	defer srv.Close()
	t.Setenv("SCOREKIT_TEST_KEY", "k")
	args := []string{"score", "--format", "jsonl", "--scorers", "relevancy,masis,contextprecision",
		"--judge-url", srv.URL(), "--judge-model", "m", "--judge-key-env", "SCOREKIT_TEST_KEY", examplesPath}
	r := runCLIWith(t, builtinRegistry, "", args...)
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	type rec struct {
		RunID             string             `json:"run_id"`
		Scorer            string             `json:"scorer"`
		Status            string             `json:"status"`
		Score             *float64           `json:"score"`
		Dimensions        map[string]float64 `json:"dimensions"`
		SkippedDimensions map[string]string  `json:"skipped_dimensions"`
		Suggestions       []string           `json:"suggestions"`
		Flags             []string           `json:"flags"`
		Reason            string             `json:"reason"`
		Adjustments       []struct {
			Rule, Target string
			To           float64
		} `json:"adjustments"`
	}
	got := map[string]rec{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var x rec
		if err := json.Unmarshal([]byte(line), &x); err != nil {
			t.Fatal(err)
		}
		got[x.Scorer+"/"+x.RunID] = x
	}
	if len(got) != 36 {
		t.Fatalf("%d records, want 12 runs x 3 scorers", len(got))
	}
	for k, x := range got {
		switch {
		case strings.HasPrefix(k, "relevancy/"), strings.HasPrefix(k, "masis/"):
			if x.Status != "scored" {
				t.Errorf("%s: %s (%s), want scored", k, x.Status, x.Reason)
			}
		case k == "contextprecision/rag-cited" || k == "contextprecision/rag-invalid-citation":
			if x.Status != "scored" || x.Score == nil || *x.Score != 1 {
				t.Errorf("%s: %s %v, want scored 1 (the useful passage ranked first)", k, x.Status, x.Score)
			}
		case strings.HasPrefix(k, "contextprecision/"):
			if x.Status != "skipped" || !strings.Contains(x.Reason, "no context") {
				t.Errorf("%s: %s (%s), want skipped for want of context", k, x.Status, x.Reason)
			}
		}
	}
	if x := got["relevancy/capital-paris"]; x.Score == nil || *x.Score != 0.9 {
		t.Errorf("relevancy of Paris: %v, want 0.9", x.Score)
	}

	bad := got["masis/rag-invalid-citation"]
	if bad.Dimensions["faithfulness"] > 0.4 || len(bad.Suggestions) == 0 {
		t.Errorf("masis on an invalid citation: faithfulness %v, suggestions %v: want <= 0.4 and the judge's suggestion", bad.Dimensions["faithfulness"], bad.Suggestions)
	}
	clamped := false
	for _, a := range bad.Adjustments {
		if strings.HasPrefix(a.Rule, "clamp_") && a.Target == "faithfulness" {
			clamped = true
		}
	}
	if !clamped {
		t.Errorf("masis on an invalid citation: adjustments %+v lack the faithfulness clamp", bad.Adjustments)
	}
	// 0.35*0.4 + 0.25*0.8 + 0.25*0.7 + 0.15*0.9, normalized from the judge's 0-100 answer.
	if bad.Score == nil || *bad.Score != 0.65 {
		t.Errorf("masis overall %v, want 0.65 recomputed from the clamped faithfulness", bad.Score)
	}
	if nc := got["masis/capital-paris"]; nc.SkippedDimensions["faithfulness"] == "" {
		t.Errorf("masis without evidence: skipped dimensions %v, want faithfulness skipped, not 0", nc.SkippedDimensions)
	}

	// The same judge answers reach WASM guests through host functions and process plugins
	// through gRPC callbacks: the results must be the native ones.
	build, err := filepath.Abs(filepath.Join("..", "..", "build"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SCOREKIT_BUILD", build)
	want := runtimeRows(t, r, "native")
	for _, rt := range []string{"wasm", "process"} {
		t.Run(rt, func(t *testing.T) {
			got := runtimeRows(t, runCLIWith(t, builtinRegistry, "", append([]string{"--runtime", rt}, args...)...), rt)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s results differ from native:\n got %v\nwant %v", rt, got, want)
			}
		})
	}
}

// TestRubricFromTheConfigFile: a rubric written in the config file grades the examples
// through `scorekit score` on a 1-5 scale, normalized by the host.
func TestRubricFromTheConfigFile(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"reasoning": "clear and polite", "score": 4}`})
	defer srv.Close()
	t.Setenv("SCOREKIT_TEST_KEY", "k")
	config := writeFile(t, "scorekit.json", `{"scorers": {"rubric": {"instructions": "Rate the reply's tone from 1 (rude) to 5 (warm).", "scale": {"min": 1, "max": 5}}}}`)
	r := runCLIWith(t, builtinRegistry, "", "score", "--format", "jsonl", "--scorers", "rubric", "--config", config,
		"--judge-url", srv.URL(), "--judge-model", "m", "--judge-key-env", "SCOREKIT_TEST_KEY", examplesPath)
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	for _, line := range lines {
		var x struct {
			Status string   `json:"status"`
			Score  *float64 `json:"score"`
			Reason string   `json:"reason"`
		}
		if err := json.Unmarshal([]byte(line), &x); err != nil {
			t.Fatal(err)
		}
		if x.Status != "scored" || x.Score == nil || *x.Score != 0.75 || !strings.Contains(x.Reason, "4 on 1-5. clear and polite") {
			t.Fatalf("record %s, want 4 on 1-5 scored 0.75", line)
		}
	}
	if len(lines) != 12 || srv.Calls() < 12 {
		t.Fatalf("%d records, %d judge calls; want 12 of each (one per run)", len(lines), srv.Calls())
	}
}
