package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/internal/service/agreement"
)

// labelJudge scripts the test judge to answer every judged run of sets from its label, the
// answer turned the other way for a share errRate of (scorer, run), drawn from seed. It
// returns the rules and the flipped keys ("scorer/run ID").
//
// Each rule matches the part of the scorer's prompt that holds the run's own input and
// output (unique per run in these sets), so the judge answers the run it is asked about.
func labelJudge(t *testing.T, sets []string, errRate float64, seed uint64) ([]judgetest.Rule, map[string]bool) {
	t.Helper()
	dir, err := corpus.Dir()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 3))
	flipped := map[string]bool{}
	var rules []judgetest.Rule
	for _, s := range corpus.JudgedSets() {
		if !slices.Contains(sets, s.Set) {
			continue
		}
		js, err := s.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range js {
			flip := rng.Float64() < errRate
			if flip {
				flipped[s.Scorer+"/"+j.Run.ID] = true
			}
			pass, score := j.Pass != flip, j.Score
			if flip {
				score = 1 - score
			}
			in, out := j.Run.Input, j.Run.Output
			var r judgetest.Rule
			switch s.Scorer {
			case "relevancy":
				if s.Verdict == corpus.VerdictPassFail {
					score = map[bool]float64{true: 0.9, false: 0.1}[pass]
				}
				r = judgetest.Rule{Match: "<input>\n" + in + "\n</input>\n\nOUTPUT (what the agent said):\n<output>\n" + out + "\n</output>",
					Reply: fmt.Sprintf(`{"reasoning": "from the label", "score": %v}`, score)}
			case "masis":
				v := map[bool]int{true: 1, false: 0}[pass]
				r = judgetest.Rule{Match: "<question>\n" + strings.TrimSpace(in) + "\n</question>\n\nThe agent's answer:\n<answer>\n" + strings.TrimSpace(out) + "\n</answer>",
					Reply: fmt.Sprintf(`{"faithfulness": %d, "relevance": %d, "completeness": %d, "reasoning_quality": %d, "overall_score": %d, "improvement_suggestions": []}`, v, v, v, v, v)}
			case "contextprecision":
				r = judgetest.Rule{Match: "Question:\n" + in + "\n\nReference answer:\n" + out + "\n\nContext passages",
					Reply: fmt.Sprintf(`{"verdicts": [{"context_index": 0, "verdict": %q, "reason": "from the label"}]}`, map[bool]string{true: "yes", false: "no"}[pass])}
			default:
				t.Fatalf("no script for scorer %s", s.Scorer)
			}
			rules = append(rules, r)
		}
	}
	return rules, flipped
}

// TestAgreementEndToEnd runs `scorekit agreement` against the OpenAI-compatible test judge
// answering from the sets' own labels with a fifth of its verdicts turned the other way:
// the disagreements are exactly the turned runs, the accuracy's interval holds the rate
// the test chose, kappa's holds the kappa that rate implies, and the score figures are the
// ones the turned scores give.
func TestAgreementEndToEnd(t *testing.T) {
	const errRate = 0.2
	rules, flipped := labelJudge(t, []string{"ares", "xstest", "trulens"}, errRate, 11)
	srv := judgetest.New(rules...)
	defer srv.Close()
	srv.ListModels("m")
	t.Setenv("SCOREKIT_TEST_KEY", "k")
	judge := []string{"--judge-url", srv.URL(), "--judge-model", "m", "--judge-key-env", "SCOREKIT_TEST_KEY"}

	r := runCLIWith(t, builtinRegistry, "", append([]string{"agreement", "--dataset", "ares,xstest,trulens", "--sample", "150", "--json"}, judge...)...)
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "scoring 617 runs") || !strings.Contains(r.stderr, "about 617 calls to the judge m") {
		t.Errorf("stderr does not say the cost before scoring: %s", r.stderr)
	}
	var rep agreementReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	var got []string
	for _, tb := range rep.Tables {
		got = append(got, tb.Set+"/"+tb.Scorer)
	}
	if want := []string{"ares/relevancy", "ares/masis", "ares/contextprecision", "xstest/relevancy", "trulens/relevancy"}; !slices.Equal(got, want) {
		t.Fatalf("tables %v, want %v", got, want)
	}
	dir, err := corpus.Dir()
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range rep.Tables {
		t.Run(tb.Set+"/"+tb.Scorer, func(t *testing.T) {
			if len(tb.NotScored) != 0 {
				t.Fatalf("not scored %v: %v", tb.NotScored, tb.NotScoredReasons)
			}
			wantSampled := min(150, tb.Available)
			if tb.Sampled != wantSampled {
				t.Errorf("sampled %d of %d, want %d", tb.Sampled, tb.Available, wantSampled)
			}
			// The runs the command drew, by the same draw, and which of them were turned.
			var set corpus.JudgedSet
			for _, s := range corpus.JudgedSets() {
				if s.Set == tb.Set && s.Scorer == tb.Scorer {
					set = s
				}
			}
			all, err := set.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			drawn := sampleRuns(all, tb.Set, 150, 1)
			var wantDis []string
			var conf agreement.Confusion
			pass := 0
			for _, j := range drawn {
				if j.Pass {
					pass++
				}
				conf = conf.Add(j.Pass, j.Pass != flipped[tb.Scorer+"/"+j.Run.ID])
				if flipped[tb.Scorer+"/"+j.Run.ID] && (tb.Scores == nil || math.Abs(1-2*j.Score) > 0.3) {
					wantDis = append(wantDis, j.Run.ID)
				}
			}
			var gotDis []string
			for _, d := range tb.Disagreements {
				gotDis = append(gotDis, d.RunID)
				if d.Label == "" || d.Person == d.Scorer {
					t.Errorf("disagreement %+v lacks a side", d)
				}
			}
			slices.Sort(gotDis)
			slices.Sort(wantDis)
			if !slices.Equal(gotDis, wantDis) {
				t.Errorf("disagreements %v, want the turned runs %v", gotDis, wantDis)
			}
			if tb.Scores != nil {
				// Turned scores s -> 1 - s: the MAE is the mean of |1 - 2s| over them.
				sum := 0.0
				for _, j := range drawn {
					if flipped[tb.Scorer+"/"+j.Run.ID] {
						sum += math.Abs(1 - 2*j.Score)
					}
				}
				if want := sum / float64(len(drawn)); math.Abs(tb.Scores.MAE.Value-want) > 1e-9 {
					t.Errorf("mae %v, want %v", tb.Scores.MAE.Value, want)
				}
				return
			}
			pf := tb.PassFail
			if pf.Runs != tb.Sampled || pf.Confusion != conf {
				t.Errorf("runs %d confusion %+v, want %d and %+v", pf.Runs, pf.Confusion, tb.Sampled, conf)
			}
			if a := pf.Accuracy; a.Low > 1-errRate || a.High < 1-errRate {
				t.Errorf("accuracy %v: its interval does not hold 1 - %v", a, errRate)
			}
			// The kappa a symmetric error rate e implies when a share p of the labels pass:
			// the scorer passes q = p(1-e) + (1-p)e, agreement is 1-e by construction.
			p := float64(pass) / float64(len(drawn))
			q := p*(1-errRate) + (1-p)*errRate
			pe := p*q + (1-p)*(1-q)
			kappa := (1 - errRate - pe) / (1 - pe)
			if k := pf.Kappa; k.Low > kappa || k.High < kappa {
				t.Errorf("kappa %v: its interval does not hold %.3f, the kappa of error rate %v", k, kappa, errRate)
			}
			if tb.Set == "xstest" && (tb.People == nil || tb.People.Runs == 0 || tb.People.Kappa.Value < 0.8) {
				t.Errorf("xstest: the annotators' agreement %+v, want it measured (they agree on 1,897 of 1,906 runs)", tb.People)
			}
		})
	}

	// The table prints the same figures.
	r = runCLIWith(t, builtinRegistry, "", append([]string{"agreement", "--dataset", "ares", "--scorers", "relevancy", "--sample", "150", "--disagreements", "3"}, judge...)...)
	if r.code != ExitOK {
		t.Fatalf("table: exit %d: %s", r.code, r.stderr)
	}
	ares := rep.Tables[0].PassFail
	for _, want := range []string{"ares", "relevancy", "150", ares.Accuracy.String(), ares.Kappa.String(), ares.FailRecall.String(),
		"Disagreements ares/relevancy", "person pass (Answer_Relevance_Label=1), scorer fail: from the label", "Wilson"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestAgreementBadFlags: every bad choice is refused before a judge call, naming the fix.
func TestAgreementBadFlags(t *testing.T) {
	srv := judgetest.New()
	defer srv.Close()
	srv.ListModels("m")
	t.Setenv("SCOREKIT_TEST_KEY", "k")
	judge := []string{"--judge-url", srv.URL(), "--judge-model", "m", "--judge-key-env", "SCOREKIT_TEST_KEY"}
	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"unknown set", append([]string{"--dataset", "squad"}, judge...), `--dataset "squad": no such labelled set; choose from halueval`},
		{"scorer without labels", append([]string{"--scorers", "prescreen"}, judge...), "--scorers prescreen: no labelled set has a reading for it"},
		{"scorer not on the set", append([]string{"--dataset", "coqa", "--scorers", "masis"}, judge...), "masis: none of the chosen sets has labels for it; it is measured on halueval, ares"},
		{"negative sample", append([]string{"--sample", "-1"}, judge...), "--sample -1: want 0 (every run) or more"},
		{"no judge", []string{"--dataset", "coqa"}, "need a judge: pass --judge-url and --judge-model"},
		{"data folder without the sets", append([]string{"--dataset", "coqa", "--data", t.TempDir()}, judge...), "corpus data file missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLIWith(t, builtinRegistry, "", append([]string{"agreement"}, tc.args...)...)
			if r.code != ExitSetup || !strings.Contains(r.stderr, tc.says) {
				t.Errorf("exit %d, stderr %q; want %d saying %q", r.code, r.stderr, ExitSetup, tc.says)
			}
		})
	}
	if n := srv.Calls(); n > 0 {
		t.Errorf("the judge received %d requests; bad flags must cost nothing", n)
	}
}
