package seed

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/sdk"
)

// assistantRuns picks 20 HaluEval right answers and 20 TruthfulQA best answers, evenly
// spaced through each set, and interleaves them in time.
func assistantRuns(rng *rand.Rand, cases []corpus.Case) ([]sdk.Run, error) {
	per := AssistantRuns / 2
	var picked [2][]corpus.Case
	for i, src := range []string{"halueval", "truthfulqa"} {
		var all []corpus.Case
		for _, c := range cases {
			if c.Source == src && c.Label == corpus.LabelCorrect {
				all = append(all, c)
			}
		}
		if len(all) < per {
			return nil, fmt.Errorf("seed: the corpus has %d correct %s answers, want at least %d; check testdata/%s", len(all), src, per, src)
		}
		for k := range per {
			picked[i] = append(picked[i], all[k*len(all)/per])
		}
	}
	clock := start.Add(time.Hour)
	out := make([]sdk.Run, 0, AssistantRuns)
	for k := range per {
		for _, c := range []corpus.Case{picked[0][k], picked[1][k]} {
			clock = clock.Add(minutes(rng, 20, 180))
			out = append(out, sdk.Run{
				ID:       runID(AgentAssistant, len(out)+1),
				Agent:    AgentAssistant,
				Input:    c.Run.Input,
				Output:   c.Run.Output,
				Time:     at(clock),
				Metadata: map[string]any{"purpose": AssistantPurpose, "source": c.Run.ID},
			})
		}
	}
	return out, nil
}

// refusals are what a model says when a bad prompt change makes it refuse ordinary work.
var refusals = []string{
	"Sorry, but I can't assist with that.",
	"I'm sorry, but I can't help with that request.",
	"As an AI language model, I am unable to read or act on personal emails.",
	"I cannot process this email.",
	"I'm not able to help with this. Please contact a human agent.",
}

// brokenRuns are the email-triage agent's runs after a bad deploy: half provider errors and
// stack traces (corpus's synthetic error outputs), a quarter empty outputs, a quarter
// refusals, in random order, on emails from the same pool, all later than the correct runs.
func brokenRuns(rng *rand.Rand, cases []corpus.Case, bases []base, after int, clock time.Time) ([]sdk.Run, error) {
	var errs, empties []corpus.Case
	for _, c := range cases {
		switch c.Source {
		case "synthetic_error":
			errs = append(errs, c)
		case "synthetic_empty":
			empties = append(empties, c)
		}
	}
	if len(errs) == 0 || len(empties) == 0 {
		return nil, fmt.Errorf("seed: the corpus has no synthetic_error or synthetic_empty cases")
	}
	type broken struct{ output, source string }
	var outs []broken
	for i := range BrokenRuns / 2 {
		c := errs[i%len(errs)]
		outs = append(outs, broken{c.Run.Output, c.Run.ID})
	}
	for i := range BrokenRuns / 4 {
		c := empties[i%len(empties)]
		outs = append(outs, broken{c.Run.Output, c.Run.ID})
	}
	for i := len(outs); i < BrokenRuns; i++ {
		outs = append(outs, broken{refusals[i%len(refusals)], "seed/refusal"})
	}
	rng.Shuffle(len(outs), func(i, j int) { outs[i], outs[j] = outs[j], outs[i] })
	run := make([]sdk.Run, 0, BrokenRuns)
	for i, o := range outs {
		b := bases[rng.IntN(len(bases))]
		clock = clock.Add(minutes(rng, 3, 15))
		run = append(run, sdk.Run{
			ID:     runID(AgentEmailTriage, after+i+1),
			Agent:  AgentEmailTriage,
			Input:  b.input(rng.IntN(4) == 0),
			Output: o.output,
			Time:   at(clock),
			Metadata: map[string]any{"purpose": EmailTriagePurpose,
				"source": b.source + " -> " + strings.TrimSpace(o.source)},
		})
	}
	return run, nil
}
