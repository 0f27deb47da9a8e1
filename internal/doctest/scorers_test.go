package doctest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/cli"
	"github.com/scorekit/scorekit/internal/judgetest"
)

// judgeAnswers script the judge for the examples of docs/SCORERS.md that say in words what
// the judge answers, keyed by the example's --scorers: each is the answer those words
// describe. An example that quotes the judge's answer ("when the judge answers `{...}`")
// is answered with the quote instead.
var judgeAnswers = map[string]string{
	// "when the judge finds passages 1 and 3 useful and 2 not"
	"contextprecision": `{"verdicts": [{"context_index": 0, "verdict": "yes", "reason": "It gives the founding year."}, {"context_index": 1, "verdict": "no", "reason": "The climate is off-topic."}, {"context_index": 2, "verdict": "yes", "reason": "It gives the headcount."}]}`,
	// "when the judge answers faithfulness 1, relevance 1, completeness 0.5 and reasoning
	// quality 1"
	"masis": `{"faithfulness": 1, "relevance": 1, "completeness": 0.5, "reasoning_quality": 1, "overall_score": 0.875, "improvement_suggestions": ["Say where the company is based: passage 2 gives London."]}`,
	// "the judge's verdicts: supported, contradicted by passage 2, unverifiable"
	"faithfulness": `{"claims": [{"claim": "The company was founded in 1995", "verdict": "supported", "passages": ["1"], "reason": "Passage 1 gives the year."}, {"claim": "The company has 1000 employees", "verdict": "contradicted", "passages": ["2"], "reason": "Passage 2 says 500."}, {"claim": "The company may open an office in Oslo", "verdict": "unverifiable", "passages": [], "reason": "No passage mentions Oslo."}]}`,
	// "when the judge rates the passages high and used, high and not used, none, and names
	// what the company does as missing"
	"context_relevance": `{"passages": [{"id": "1", "relevance": "high", "used": true, "reason": "It gives the founding year and the founder."}, {"id": "2", "relevance": "high", "used": false, "reason": "It gives the headcount and the headquarters."}, {"id": "3", "relevance": "none", "used": false, "reason": "It is about the weather."}], "missing": ["what the company does"]}`,
	// "when the judge sees a minimal loss of completeness and relevance and rates robustness
	// 0.9"
	"noise_robustness": `{"content_accuracy": {"impact": "none", "change": "The facts are the same."}, "completeness": {"impact": "minimal", "change": "The mood benefit is left out."}, "relevance": {"impact": "minimal", "change": "A sentence answers the false claim."}, "consistency": {"impact": "none", "change": "Nothing contradicts the baseline."}, "hallucination_resistance": {"impact": "none", "change": "The false claim is rejected."}, "major_issues": [], "robustness": 0.9}`,
	// "when the judge matches red and blue exactly and finds yellow missing"
	"answer_similarity": `{"expected_units": [{"unit": "red is a primary colour", "match": "exact", "output_unit": "Red", "note": "Named."}, {"unit": "yellow is a primary colour", "match": "missing", "output_unit": null, "note": "Not named."}, {"unit": "blue is a primary colour", "match": "exact", "output_unit": "blue", "note": "Named."}], "contradictions": [], "extra_output_units": []}`,
}

// TestScorersExamples runs every command of docs/SCORERS.md in-process as written: each
// `scorekit schema NAME` must print a JSON object, and each `echo '<run>' | scorekit score
// ... -` must exit 0 and give what the sentence after it states (status, score, reason,
// passed, flags, dimensions). Examples that name --judge-url get a scripted judge at that
// flag, answering what the page says the judge answers.
func TestScorersExamples(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "test-key")
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "SCORERS.md"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := readScorersPage(string(b))
	if err != nil {
		t.Fatalf("docs/SCORERS.md:\n%v", err)
	}
	var schemas, examples int
	used := map[string]bool{}
	for _, c := range page.Commands {
		switch c.Args[0] {
		case "schema":
			schemas++
		case "score":
			examples++
		}
		if c.Result != nil && c.Result.JudgeAnswer == "" {
			used[flagValue(c.Args, "--scorers")] = true
		}
		t.Run(fmt.Sprintf("line %d %s", c.Line, strings.Join(c.Args[:min(len(c.Args), 4)], " ")), func(t *testing.T) {
			for _, p := range runPageCommand(t.Context(), t.TempDir(), page, c, judgeAnswers) {
				t.Errorf("docs/SCORERS.md:%d: %s: %s", c.Line, c, p)
			}
		})
	}
	// The page had 14 schema commands and 12 examples when this test was written.
	if schemas < 14 || examples < 12 {
		t.Errorf("docs/SCORERS.md has %d scorekit schema commands and %d echo | scorekit score examples; it lost some", schemas, examples)
	}
	for name := range judgeAnswers {
		if !used[name] {
			t.Errorf("judgeAnswers[%q] scripts no example of docs/SCORERS.md that describes its judge's answer in words; remove it", name)
		}
	}
}

// runPageCommand runs one command of the page in a fresh folder dir and returns how it
// differs from what the page says.
func runPageCommand(ctx context.Context, dir string, page scorersPage, c pageCommand, answers map[string]string) []string {
	var problems []string
	args := slices.Clone(c.Args)
	for i := 1; i < len(args); i++ {
		switch args[i-1] {
		case "--config":
			body, ok := page.Files[args[i]]
			if !ok {
				return []string{fmt.Sprintf("--config %s: the page shows no file of that name (\"with this config in `%s`\" and the file in a block)", args[i], args[i])}
			}
			args[i] = filepath.Join(dir, filepath.Base(args[i]))
			if err := os.WriteFile(args[i], []byte(body), 0o644); err != nil {
				return []string{err.Error()}
			}
		case "--judge-url":
			answer := c.Result.answer(answers, flagValue(c.Args, "--scorers"))
			if answer == "" {
				return []string{fmt.Sprintf("no judge answer: quote it on the page (\"when the judge answers `{...}`\") or script it in judgeAnswers[%q]", flagValue(c.Args, "--scorers"))}
			}
			srv := judgetest.New(judgetest.Rule{Reply: answer})
			defer srv.Close()
			if model := flagValue(c.Args, "--judge-model"); model != "" {
				srv.ListModels(model)
			}
			args[i] = srv.URL()
		}
	}
	code, stdout, stderr := runCommand(ctx, args, c.Stdin)
	if code != cli.ExitOK {
		return []string{fmt.Sprintf("exit %d; stderr:\n%s", code, stderr)}
	}
	if args[0] == "schema" {
		var schema map[string]any
		if err := json.Unmarshal([]byte(stdout), &schema); err != nil {
			problems = append(problems, fmt.Sprintf("prints no JSON Schema object (%v):\n%s", err, stdout))
		}
	}
	if c.Result == nil {
		return problems
	}
	if flagValue(args, "--format") != "jsonl" {
		// As written it prints a table; the result is read from its JSON Lines.
		if code, stdout, stderr = runCommand(ctx, append(args, "--format", "jsonl"), c.Stdin); code != cli.ExitOK {
			return []string{fmt.Sprintf("with --format jsonl: exit %d; stderr:\n%s", code, stderr)}
		}
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 1 {
		return append(problems, fmt.Sprintf("gives %d results; the page states one:\n%s", len(lines), stdout))
	}
	var got struct {
		Status     string             `json:"status"`
		Score      *float64           `json:"score"`
		Reason     string             `json:"reason"`
		Passed     *bool              `json:"passed"`
		Flags      []string           `json:"flags"`
		Dimensions map[string]float64 `json:"dimensions"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		return append(problems, fmt.Sprintf("the result is not JSON: %v: %s", err, lines[0]))
	}
	want := c.Result
	if want.Status != "" && got.Status != want.Status {
		problems = append(problems, fmt.Sprintf("status %s (reason %q); the page says %s", got.Status, got.Reason, want.Status))
	}
	if want.Score != nil && (got.Score == nil || !want.Score.Matches(*got.Score)) {
		problems = append(problems, fmt.Sprintf("score %s; the page says %s", fmtScore(got.Score), want.Score))
	}
	if want.Reason != "" && collapse(got.Reason) != want.Reason {
		problems = append(problems, fmt.Sprintf("reason\n\t%s\nthe page says\n\t%s", got.Reason, want.Reason))
	}
	if want.Passed != nil && (got.Passed == nil || *got.Passed != *want.Passed) {
		problems = append(problems, fmt.Sprintf("passed %v; the page says %v", fmtBool(got.Passed), *want.Passed))
	}
	for _, f := range want.Flags {
		if !slices.Contains(got.Flags, f) {
			problems = append(problems, fmt.Sprintf("flags %v lack %s, which the page names", got.Flags, f))
		}
	}
	for name, n := range want.Dimensions {
		if v, ok := got.Dimensions[name]; !ok || !n.Matches(v) {
			problems = append(problems, fmt.Sprintf("dimension %s is %v (of %v); the page says %s", name, v, got.Dimensions, n))
		}
	}
	return problems
}

// answer is the judge's answer for the example: the one the page quotes, else the
// scripted one for its scorers.
func (r *statedResult) answer(scripted map[string]string, scorers string) string {
	if r != nil && r.JudgeAnswer != "" {
		return r.JudgeAnswer
	}
	return scripted[scorers]
}

func runCommand(ctx context.Context, args []string, stdin string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := cli.Run(ctx, args, strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// flagValue returns the value of the last --name VALUE or --name=VALUE in args.
func flagValue(args []string, name string) string {
	v := ""
	for i, a := range args {
		if a == name && i+1 < len(args) {
			v = args[i+1]
		} else if s, ok := strings.CutPrefix(a, name+"="); ok {
			v = s
		}
	}
	return v
}

func fmtScore(s *float64) string {
	if s == nil {
		return "none"
	}
	return fmt.Sprint(*s)
}

func fmtBool(b *bool) string {
	if b == nil {
		return "none"
	}
	return fmt.Sprint(*b)
}

// TestScorersExamplesCatchBreakage breaks one example at a time in a copy of
// docs/SCORERS.md (or the judge script beside it) and checks that reading and running the
// copy reports it, so TestScorersExamples cannot pass on a page whose examples went wrong.
func TestScorersExamplesCatchBreakage(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "test-key")
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "SCORERS.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	cases := []struct {
		name     string
		old, new string // the page's text and what it becomes
		drop     string // a scorer whose scripted judge answer is left out
		want     string // in the report
	}{
		{name: "an example's scorer misspelt", old: "--scorers levenshtein --format", new: "--scorers levenshtien --format", want: `unknown scorer "levenshtien"`},
		{name: "a schema command's scorer misspelt", old: "scorekit schema tool_calls\n", new: "scorekit schema tool_call\n", want: "exit 1"},
		{name: "a run that is not JSON", old: `echo '{"input": "Spell the colour.", "output": "color",`, new: `echo '{"input": "Spell the colour.", "output": color,`, want: "exit 2"},
		{name: "a wrong score", old: "gives `score 0.83`, reason `edit distance", new: "gives `score 0.84`, reason `edit distance", want: "score 0.83; the page says 0.84"},
		{name: "a score stated to fewer decimals is still held to two", old: "gives `score 0.71`, reason", new: "gives `score 0.7`, reason", want: "score 0.71; the page says 0.7"},
		{name: "a wrong reason", old: "`edit distance 1 over 6 characters`", new: "`edit distance 2 over 6 characters`", want: "the page says\n\tedit distance 2 over 6 characters"},
		{name: "a wrong reason across a line break", old: "reason `2 of 3\npassages useful", new: "reason `3 of 3\npassages useful", want: "the page says\n\t3 of 3 passages useful"},
		{name: "a flag the scorer does not set", old: ", flag `error_text`, reason", new: ", flag `empty_output`, reason", want: "lack empty_output"},
		{name: "passed where the page says not", old: "), not passed, flag", new: "), passed, flag", want: "passed false; the page says true"},
		{name: "a wrong dimension in the sentence", old: "(`integrity` 0,", new: "(`integrity` 1,", want: "dimension integrity is 0"},
		{name: "a wrong score in a result block", old: "    score 0.42\n", new: "    score 0.4\n", want: "score 0.42; the page says 0.4"},
		{name: "a wrong dimension in a result block", old: `"completeness": 0.85, "relevance": 0.85,`, new: `"completeness": 0.8, "relevance": 0.85,`, want: "dimension completeness is 0.85"},
		{name: "a wrong reason in a result block", old: `(missing "yellow is a primary colour"); score 0.63`, new: `(missing "yellow"); score 0.63`, want: `the page says` + "\n\t" + `3 reference units: 2 exact, 1 missing (missing "yellow")`},
		{name: "a result block line that cannot be read", old: "    reason: 3 reference units", new: "    why: 3 reference units", want: `line 536: result block line "why: 3 reference units`},
		{name: "a quoted judge answer the stated result does not follow", old: `"choice": "yes"}` + "`, `score 1`", new: `"choice": "no"}` + "`, `score 1`", want: "score 0; the page says 1"},
		{name: "the reason is the judge's reasoning, which the quote lacks", old: `{"reasoning": "It names the capital, which is what was
asked.", "score": 1}`, new: `{"score": 1}`, want: "has none"},
		{name: "a judge example without its judge", old: "--scorers masis --judge-url URL --judge-model MODEL", new: "--scorers masis", want: "status skipped"},
		{name: "a judge answer neither quoted nor scripted", drop: "faithfulness", want: `judgeAnswers["faithfulness"]`},
		{name: "a config the scorer refuses", old: `"choices": {"yes": 1, "no": 0}}}}`, new: `"choices": {"yes": 2, "no": 0}}}}`, want: "choices.yes: maximum"},
		{name: "a config file the page does not show", old: "with this config in `rubric.json`", new: "with this config in `rubrics.json`", want: "--config rubric.json: the page shows no file of that name"},
		{name: "an example that states no result", old: "gives `score 0.83`, reason `edit distance 1 over 6 characters`. ", new: "", want: "line 128: echo '...' | scorekit score --scorers levenshtein --format jsonl -: the page does not say what it gives"},
		{name: "a shell expansion", old: "--scorers tool_calls --format jsonl -", new: "--scorers $SCORER --format jsonl -", want: "line 159: only scorekit commands and echo 'TEXT' | scorekit ... are run from this page; this has an expansion"},
		{name: "a command the page does not run", old: "    scorekit schema masis\n", new: "    scorekit schema masis > masis.json\n", want: "line 246: only scorekit commands and echo 'TEXT' | scorekit ... are run from this page; this has a redirection"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mutated := doc
			if c.old != "" {
				if n := strings.Count(doc, c.old); n != 1 {
					t.Fatalf("docs/SCORERS.md holds %q %d times, want once: update this case to the page", c.old, n)
				}
				mutated = strings.Replace(doc, c.old, c.new, 1)
			}
			answers := judgeAnswers
			if c.drop != "" {
				answers = maps.Clone(judgeAnswers)
				delete(answers, c.drop)
			}
			var report []string
			page, err := readScorersPage(mutated)
			if err != nil {
				report = append(report, err.Error())
			}
			for _, cmd := range page.Commands {
				for _, p := range runPageCommand(t.Context(), t.TempDir(), page, cmd, answers) {
					report = append(report, fmt.Sprintf("line %d: %s: %s", cmd.Line, cmd, p))
				}
			}
			got := strings.Join(report, "\n")
			t.Logf("the broken page's report:\n%s", got)
			if !strings.Contains(got, c.want) {
				t.Errorf("the broken page's report lacks %q; it is:\n%s", c.want, got)
			}
		})
	}
}
