// Package sim simulates streams of scored runs for the insight engine: healthy runs drawn
// from the real results of prescreen on the public correct answers and the seed runs, and
// breakages (a share of the newest runs become error text, empty, refusals or low scores)
// drawn from prescreen's real results on broken outputs. The tests and the simulate command
// use it to measure false alarms and detection delays.
package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/seed"
	"github.com/scorekit/scorekit/internal/service/insights"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// Scorer and Agent name the simulated series.
const (
	Scorer = "prescreen"
	Agent  = "agent"
)

// Pools are result rows to draw from; RunID, RunTime and CreatedAt are set when a stream
// is drawn.
type Pools struct {
	// Healthy holds prescreen's results on correct runs, by source (corpus sets, and
	// "seed_email_triage" and "seed_assistant" for the seed runs), in Sources order.
	Healthy map[string][]insights.Result
	Sources []string
	// Gross holds prescreen's results on error texts and empty outputs given as answers
	// to the seed emails (what a broken email-triage agent posts).
	Gross []insights.Result
	// Refusals holds prescreen's results on the XSTest refusals of harmless prompts.
	Refusals []insights.Result
	// Version is prescreen's version.
	Version string
}

// LoadPools scores the shared data and the seed runs with prescreen through the host.
func LoadPools(ctx context.Context) (*Pools, error) {
	dir, err := corpus.Dir()
	if err != nil {
		return nil, err
	}
	cases, err := corpus.Load(dir)
	if err != nil {
		return nil, err
	}
	set, err := seed.Generate(cases)
	if err != nil {
		return nil, err
	}
	reg := host.NewRegistry()
	if err := reg.Register(host.Native(heuristic.NewPrescreen), false); err != nil {
		return nil, err
	}
	s, err := host.New(reg).Open(ctx, Scorer, host.OpenOptions{})
	if err != nil {
		return nil, fmt.Errorf("sim: open prescreen: %w", err)
	}
	defer s.Close(ctx)
	p := &Pools{Healthy: map[string][]insights.Result{}, Version: s.Info().Version}
	row := func(r sdk.Run) insights.Result {
		return insights.FromSDK("", time.Time{}, Scorer, p.Version, s.Score(ctx, r), time.Time{})
	}
	add := func(source string, r sdk.Run) {
		if _, ok := p.Healthy[source]; !ok {
			p.Sources = append(p.Sources, source)
		}
		p.Healthy[source] = append(p.Healthy[source], row(r))
	}
	for _, c := range cases {
		switch {
		case c.WantPass:
			add(c.Source, c.Run)
		case c.Label == corpus.LabelRefusal:
			p.Refusals = append(p.Refusals, row(c.Run))
		}
	}
	for _, r := range set.EmailTriage {
		add("seed_email_triage", r)
	}
	for _, r := range set.Assistant {
		add("seed_assistant", r)
	}
	// Every error text and empty output of the corpus as the answer to 15 seed emails.
	for _, c := range cases {
		if c.Label != corpus.LabelError && c.Label != corpus.LabelEmpty {
			continue
		}
		for i := range 15 {
			r := set.EmailTriage[(i*37+len(p.Gross))%len(set.EmailTriage)]
			r.Output = c.Run.Output
			p.Gross = append(p.Gross, row(r))
		}
	}
	return p, nil
}

// Breakage says how a stream breaks: from run At on, a Rate share of runs come from Pool.
type Breakage struct {
	At   int
	Rate float64
	Pool []insights.Result
	// Exact places exactly Rate x 10 broken runs in every block of 10 (at random places
	// in the block) instead of drawing each run broken with probability Rate.
	Exact bool
}

// LowScore is a run scored low for no visible reason by the pools' prescreen version:
// score 0.1, not passed, no flags.
func (p *Pools) LowScore() insights.Result {
	score, passed := 0.1, false
	return insights.Result{Scorer: Scorer, ScorerVersion: p.Version, Status: sdk.StatusScored, Score: &score, Passed: &passed, Reason: "low score"}
}

// Stream draws n rows: healthy ones from healthy (with replacement), and from b.At on the
// broken share from b.Pool. Runs are a minute apart; each result is made a second after
// its run.
func Stream(rng *rand.Rand, healthy []insights.Result, n int, b Breakage) []insights.Result {
	start := time.Date(2025, 6, 2, 8, 0, 0, 0, time.UTC)
	out := make([]insights.Result, n)
	var block []bool
	for i := range n {
		broken := false
		if i >= b.At && len(b.Pool) > 0 {
			if b.Exact {
				j := (i - b.At) % 10
				if j == 0 {
					block = make([]bool, 10)
					for _, k := range rng.Perm(10)[:int(b.Rate*10+0.5)] {
						block[k] = true
					}
				}
				broken = block[j]
			} else {
				broken = rng.Float64() < b.Rate
			}
		}
		var r insights.Result
		if broken {
			r = b.Pool[rng.IntN(len(b.Pool))]
		} else {
			r = healthy[rng.IntN(len(healthy))]
		}
		r.RunID = fmt.Sprintf("run-%05d", i+1)
		r.RunTime = start.Add(time.Duration(i) * time.Minute)
		r.CreatedAt = r.RunTime.Add(time.Second)
		out[i] = r
	}
	return out
}

// Step is the state of the open insights after one run arrived.
type Step struct {
	// Index is the run's index in the stream.
	Index int
	// Open maps each open insight's kind to its severity.
	Open map[insights.Kind]insights.Severity
}

// Worst returns the highest severity open.
func (s Step) Worst() insights.Severity {
	var w insights.Severity
	for _, sev := range s.Open {
		if sev == insights.SeverityCritical || w == "" {
			w = sev
		}
	}
	return w
}

// Track feeds the stream to the engine one run at a time, as the service does when results
// arrive, keeping the open insights as the service would store them, and returns the state
// after each run from index from on.
func Track(cfg insights.Config, rows []insights.Result, from int) ([]Step, error) {
	w := cfg.WithDefaults().Window
	var open []insights.Insight
	steps := make([]Step, 0, len(rows)-from)
	for i := from; i < len(rows); i++ {
		ch, err := insights.Update(cfg, Agent, Scorer, rows[max(0, i+1-2*w):i+1], open, rows[i].CreatedAt)
		if err != nil {
			return nil, err
		}
		open = ch.Apply(open)
		st := Step{Index: i, Open: map[insights.Kind]insights.Severity{}}
		for _, in := range open {
			st.Open[in.Kind] = in.Severity
		}
		steps = append(steps, st)
	}
	return steps, nil
}
