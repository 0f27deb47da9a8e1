package heuristic_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/corpus.golden from the current scorers")

// goldenPath holds, per corpus case, a hash of every raw result the non-LLM scorers give
// for it under goldenConfigs, and per configuration a digest over all cases.
const goldenPath = "testdata/corpus.golden"

// goldenConfigs are the scorer configurations TestCorpusGolden holds byte-identical. The
// reference scorers compare with the input, with another case's output (paired) and with
// metadata, so they see real texts rather than skipping for want of run.expected.
var goldenConfigs = []struct {
	name   string
	f      func() sdk.Scorer
	config string
}{
	{"completeness", heuristic.NewCompleteness, ""},
	{"content_similarity", heuristic.NewContentSimilarity, ""},
	{"content_similarity/case", heuristic.NewContentSimilarity, `{"ignore_case": false}`},
	{"content_similarity/space", heuristic.NewContentSimilarity, `{"ignore_whitespace": false}`},
	{"content_similarity/case+space", heuristic.NewContentSimilarity, `{"ignore_case": false, "ignore_whitespace": false}`},
	{"keyword_coverage", heuristic.NewKeywordCoverage, ""},
	{"textual_difference", heuristic.NewTextualDifference, ""},
	{"tone", heuristic.NewTone, ""},
	{"tone/compare_input", heuristic.NewTone, `{"compare_input": true}`},
	{"tone/reference", heuristic.NewTone, `{"reference_tone": "I am very happy with this, thank you so much!"}`},
	{"exact_match/input", heuristic.NewExactMatch, `{"expected_from": "input"}`},
	{"exact_match/input/fold", heuristic.NewExactMatch, `{"expected_from": "input", "ignore_case": true, "trim": true}`},
	{"exact_match/paired", heuristic.NewExactMatch, ""},
	{"levenshtein/input", heuristic.NewLevenshtein, `{"expected_from": "input"}`},
	{"levenshtein/input/fold", heuristic.NewLevenshtein, `{"expected_from": "input", "ignore_case": true}`},
	{"levenshtein/paired", heuristic.NewLevenshtein, ""},
	{"levenshtein/metadata", heuristic.NewLevenshtein, `{"expected_from": "metadata.purpose"}`},
	{"numeric_diff/input", heuristic.NewNumericDiff, `{"expected_from": "input"}`},
	{"numeric_diff/paired", heuristic.NewNumericDiff, ""},
	{"json_valid", heuristic.NewJSONValid, ""},
	{"json_valid/schema", heuristic.NewJSONValid, `{"schema": {"type": ["object", "array", "string"], "minLength": 3, "maxLength": 400, "pattern": "^[A-Z]", "items": {"type": "string"}, "uniqueItems": true}}`},
	{"list_contains/input", heuristic.NewListContains, `{"expected_from": "input"}`},
	{"list_contains/input/lines", heuristic.NewListContains, `{"expected_from": "input", "format": "lines"}`},
	{"list_contains/input/json", heuristic.NewListContains, `{"expected_from": "input", "format": "json"}`},
	{"list_contains/input/extra", heuristic.NewListContains, `{"expected_from": "input", "allow_extra_entities": true}`},
	{"list_contains/paired", heuristic.NewListContains, ""},
	{"list_contains/paired/lines+extra", heuristic.NewListContains, `{"format": "lines", "allow_extra_entities": true}`},
	{"list_contains/metadata", heuristic.NewListContains, `{"expected_from": "metadata.purpose"}`},
}

// goldenRuns are the runs scored for case i: the case with the next case's output as its
// expected answer, and the same run with input and output swapped (long inputs, short
// outputs).
func goldenRuns(cases []corpus.Case, i int) [2]sdk.Run {
	r := cases[i].Run
	r.Expected = cases[(i+1)%len(cases)].Run.Output
	s := r
	s.Input, s.Output = r.Output, r.Input
	return [2]sdk.Run{r, s}
}

// TestCorpusGolden holds every non-LLM scorer's raw results (status, score to the last bit,
// reason, steps, flags, error) byte-identical to the committed golden file on the public
// corpus, so that a scorer made cheaper provably scores the same. Regenerate, after checking
// that a change of results is intended, with:
//
//	go test ./plugins/heuristic -run TestCorpusGolden -update-golden
func TestCorpusGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("scores the whole corpus; run without -short")
	}
	dir, err := corpus.Dir()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := corpus.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	perCase := make([]uint64, len(cases))
	hashers := make([]fnvState, len(cases))
	configDigest := make([]string, len(goldenConfigs))
	results := 0
	for k, gc := range goldenConfigs {
		s := gc.f()
		if c, ok := s.(sdk.Configurer); ok {
			if err := c.Configure(json.RawMessage(gc.config)); err != nil {
				t.Fatalf("%s: configure: %v", gc.name, err)
			}
		}
		all := fnv.New64a()
		for i := range cases {
			for _, run := range goldenRuns(cases, i) {
				res, err := s.Score(ctx, sdk.Call{Run: run})
				b, merr := json.Marshal(res)
				if merr != nil {
					t.Fatalf("%s: %s: encode result: %v", gc.name, run.ID, merr)
				}
				line := fmt.Sprintf("%s\x00%s\x00%v\n", gc.name, b, err)
				hashers[i].write(line)
				all.Write([]byte(line))
				results++
			}
		}
		configDigest[k] = fmt.Sprintf("%016x", all.Sum64())
	}
	for i := range cases {
		perCase[i] = hashers[i].sum
	}
	if *updateGolden {
		writeGolden(t, cases, perCase, configDigest, results)
		return
	}
	want, wantConfigs, err := readGolden()
	if err != nil {
		t.Fatalf("%v; write it with: go test ./plugins/heuristic -run TestCorpusGolden -update-golden", err)
	}
	compared, differ := 0, []string{}
	for i, c := range cases {
		w, ok := want[c.Run.ID]
		if !ok {
			continue // a case added to the corpus after the golden file was written
		}
		compared++
		if w != perCase[i] {
			differ = append(differ, c.Run.ID)
		}
	}
	if compared < len(want)*9/10 {
		t.Fatalf("only %d of the golden file's %d cases are in the corpus; the corpus changed: check the scorers against the old corpus, then regenerate", compared, len(want))
	}
	if len(differ) > 0 {
		var configs []string
		for k, gc := range goldenConfigs {
			if wantConfigs[gc.name] != configDigest[k] {
				configs = append(configs, gc.name)
			}
		}
		t.Fatalf("%d of %d cases score differently from %s, first %s; configurations whose digest changed: %v",
			len(differ), compared, goldenPath, strings.Join(differ[:min(5, len(differ))], ", "), configs)
	}
	t.Logf("%d cases, %d results (%d configurations x 2 runs a case) identical to %s", compared, compared*2*len(goldenConfigs), len(goldenConfigs), goldenPath)
}

// fnvState is an incremental FNV-1a 64 hash kept by value, one per case.
type fnvState struct {
	sum     uint64
	started bool
}

func (h *fnvState) write(s string) {
	if !h.started {
		h.sum, h.started = 14695981039346656037, true
	}
	for i := 0; i < len(s); i++ {
		h.sum ^= uint64(s[i])
		h.sum *= 1099511628211
	}
}

func writeGolden(t *testing.T, cases []corpus.Case, perCase []uint64, configDigest []string, results int) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# TestCorpusGolden: %d cases, %d results. Regenerate only when a change of results is intended:\n", len(cases), results)
	b.WriteString("#   go test ./plugins/heuristic -run TestCorpusGolden -update-golden\n")
	for k, gc := range goldenConfigs {
		fmt.Fprintf(&b, "config %s %s\n", gc.name, configDigest[k])
	}
	for i, c := range cases {
		fmt.Fprintf(&b, "%s %016x\n", c.Run.ID, perCase[i])
	}
	if err := os.MkdirAll(filepath.Dir(goldenPath), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goldenPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d cases, %d results", goldenPath, len(cases), results)
}

func readGolden() (cases map[string]uint64, configs map[string]string, err error) {
	f, err := os.Open(goldenPath)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	cases, configs = map[string]uint64{}, map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "config "); ok {
			name, digest, _ := strings.Cut(rest, " ")
			configs[name] = digest
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		var h uint64
		if _, err := fmt.Sscanf(line[i+1:], "%x", &h); i < 0 || err != nil {
			return nil, nil, fmt.Errorf("%s:%d: want \"ID HASH\", got %q", goldenPath, n, line)
		}
		cases[line[:i]] = h
	}
	return cases, configs, sc.Err()
}
