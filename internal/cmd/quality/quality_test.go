package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/prescreen"
)

// TestPrescreenOnCorpus holds prescreen to floors on the corpus, so a change that starts
// failing correct answers or stops catching broken runs is noticed. The floors sit at the
// issue's goals or just under the measured rates in QUALITY.md.
func TestPrescreenOnCorpus(t *testing.T) {
	m, err := measure(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		set  string // source/label
		want float64
	}{
		{"halueval/correct", 0.995},
		{"truthfulqa/correct", 0.995},
		{"ares/correct", 0.995},
		{"coqa/correct", 1},
		{"email_triage/triage", 1},
		{"ragas_triage/triage", 1},
		{"nq_open/correct", 0.995},
		{"squad_es/correct", 1},
		{"jaquad/correct", 1},
		{"tydiqa/correct", 1},
		{"gsm8k/correct", 1},
		{"mbpp/correct", 1},
		{"alpaca_eval/correct", 1},
		{"germanquad/correct", 1},
		{"dolly/correct", 0.995},
		{"synthetic_empty/empty", 1},
		{"synthetic_error/error", 1},
		{"errors_public/error", 0.98},
		{"xstest_refusal/refusal", 0.85},
		{"refusals_multilingual/refusal", 0.95},
		{"refusals_multilingual/correct", 1},
		{"polyrefuse/appropriate_refusal", 0.9},
		{"polyrefuse_heldout/appropriate_refusal", 0.5},
		{"placeholders_derived/placeholder", 0.9},
		{"truncated_signal/truncated", 1},
		{"repetition_derived/repetition", 1},
		// Off-topic answers are flagged, not failed: a judge fails them (the floor is on
		// the flag; TestNoVerdictFromOverlap holds that no verdict rests on word overlap).
		{"ares_off_topic/off_topic", 0.6},
	}
	for _, tt := range tests {
		t.Run(tt.set, func(t *testing.T) {
			s := m.sets[tt.set]
			if s == nil || s.n == 0 {
				t.Fatalf("set %s is missing from the corpus", tt.set)
			}
			k := s.passed[0]
			switch {
			case s.wantFlag != "":
				k = s.flagged[0]
			case !s.wantPass:
				k = s.n - k
			}
			if got := float64(k) / float64(s.n); got < tt.want {
				t.Errorf("%s: %.3f, want >= %.2f (%s)", tt.set, got, tt.want, s.metric())
			}
		})
	}
}

func TestReportPrints(t *testing.T) {
	var b bytes.Buffer
	if err := run(context.Background(), &b, false, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| goal | issue's figure before |", "| correct answers pass |", "| set | label | N |", "| **all correct answers** |", "| **all failures** |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestLeaveOneSourceOut runs the leave-one-source-out tuning on a slice of the corpus (two
// sources of correct answers, cut-offs and the off-topic pairs of one) and checks that every
// source gets a row with a value from the grid, and that off_topic_min_words changes no
// verdict at any value.
func TestLeaveOneSourceOut(t *testing.T) {
	all, err := corpus.LoadFound()
	if err != nil {
		t.Fatal(err)
	}
	var cases []corpus.Case
	for _, c := range all {
		switch c.Source {
		case "coqa", "nq_open", "ares_off_topic", "truncated_nosignal":
			cases = append(cases, c)
		}
	}
	var b bytes.Buffer
	if err := writeLOSO(context.Background(), &b, cases); err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(b.String(), "\n") {
		if f := strings.Split(l, " | "); len(f) == 4 {
			rows[strings.TrimPrefix(f[0], "| ")] = f[3]
		}
	}
	for _, v := range offTopicGrid {
		if got, ok := rows[fmt.Sprint(v)]; !ok || got != "0 |" {
			t.Errorf("off_topic_min_words %d: verdicts that differ from the default's %q, want a row with 0:\n%s", v, got, b.String())
		}
	}
	for _, want := range []string{fmt.Sprintf("`off_topic_min_words` (default %d) decides the off_topic hint only", prescreen.OffTopicMinWords), "| coqa | pass rate |", "| nq_open | pass rate |",
		fmt.Sprintf("| %d | ", prescreen.OffTopicMinWords), fmt.Sprintf("`cutoff_min_words` (default %d)", prescreen.CutoffMinWords), "| truncated_nosignal | detection rate |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("LOSO report lacks %q:\n%s", want, b.String())
		}
	}
}
