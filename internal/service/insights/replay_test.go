package insights_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/baseline"
	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/internal/seed"
	"github.com/scorekit/scorekit/internal/service/insights"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/plugins/relevancy"
	"github.com/scorekit/scorekit/sdk"
)

// platform is the seed platform's scorers, opened through the host: prescreen, relevancy
// against a judge server, and the replaced word-overlap pre-screen.
type platform struct {
	scorers map[string]*host.Scorer
	judge   *judgetest.Server
}

// soundJudge answers relevancy's prompts as a sound judge would: the broken outputs of the
// seed (error text, refusals) do nothing that was asked; a triage does what the email-triage
// agent is for; a short answer answers the question.
func soundJudge(broken []sdk.Run) *judgetest.Server {
	var rules []judgetest.Rule
	seen := map[string]bool{}
	for _, r := range broken {
		if strings.TrimSpace(r.Output) == "" || seen[r.Output] {
			continue // relevancy scores an empty output 0 without asking
		}
		seen[r.Output] = true
		rules = append(rules, judgetest.Rule{Match: "<output>\n" + r.Output + "\n</output>",
			Reply: `{"reasoning": "The output is an error message or a refusal, not a triage of the email.", "score": 0}`})
	}
	rules = append(rules,
		judgetest.Rule{Match: "post a Slack triage summary", Reply: `{"reasoning": "A Slack triage of the email with a decision and action items: what the agent is for.", "score": 0.9}`},
		judgetest.Rule{Match: "Answer the user's question directly", Reply: `{"reasoning": "It answers the question directly.", "score": 1}`},
	)
	return judgetest.New(rules...)
}

func newPlatform(t *testing.T, judge *judgetest.Server, brokerCfg broker.Config) *platform {
	t.Helper()
	brokerCfg.BaseURL, brokerCfg.Model = judge.URL(), "judge"
	b, err := broker.New(brokerCfg)
	if err != nil {
		t.Fatal(err)
	}
	reg := host.NewRegistry()
	for _, f := range []host.Factory{heuristic.NewPrescreen, relevancy.New, baseline.New} {
		if err := reg.Register(host.Native(f), false); err != nil {
			t.Fatal(err)
		}
	}
	h := host.New(reg, host.WithJudge(b))
	p := &platform{scorers: map[string]*host.Scorer{}, judge: judge}
	ctx := context.Background()
	for _, name := range []string{"prescreen", "relevancy", baseline.Name} {
		s, err := h.Open(ctx, name, host.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close(ctx) })
		p.scorers[name] = s
	}
	t.Cleanup(judge.Close)
	return p
}

// score scores runs with one scorer through the host and returns the rows the service
// would store, each made a second after its run.
func (p *platform) score(t *testing.T, scorer string, runs []sdk.Run) []insights.Result {
	t.Helper()
	s := p.scorers[scorer]
	out := make([]insights.Result, len(runs))
	for i, r := range runs {
		res := s.Score(context.Background(), r)
		out[i] = insights.FromSDK(r.ID, *r.Time, scorer, s.Info().Version, res, r.Time.Add(time.Second))
	}
	return out
}

// timeline is what the engine said as the results arrived one by one.
type timeline struct {
	// steps[i] maps each open insight's kind to its severity after row i arrived.
	steps []map[insights.Kind]insights.Severity
	// open are the insights open at the end.
	open []insights.Insight
}

// firstAt returns the first step at or after from where an insight of one of kinds (any
// kind when none given) had severity sev, or -1.
func (tl timeline) firstAt(from int, sev insights.Severity, kinds ...insights.Kind) int {
	for i := from; i < len(tl.steps); i++ {
		for k, s := range tl.steps[i] {
			if s == sev && (len(kinds) == 0 || contains(kinds, k)) {
				return i
			}
		}
	}
	return -1
}

func contains(ks []insights.Kind, k insights.Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// feed gives the engine the rows one at a time, as the service does when results arrive,
// and keeps the open insights as a store would.
func feed(t *testing.T, cfg insights.Config, agent, scorer string, rows []insights.Result) timeline {
	t.Helper()
	var tl timeline
	for i := range rows {
		ch, err := insights.Update(cfg, agent, scorer, rows[max(0, i+1-200):i+1], tl.open, rows[i].CreatedAt)
		if err != nil {
			t.Fatal(err)
		}
		tl.open = ch.Apply(tl.open)
		st := map[insights.Kind]insights.Severity{}
		for _, in := range tl.open {
			st[in.Kind] = in.Severity
		}
		tl.steps = append(tl.steps, st)
	}
	return tl
}

// load reads the shared data once: the corpus cases and the seed set built from them.
func load(t *testing.T) ([]corpus.Case, seed.Set) {
	t.Helper()
	dir, err := corpus.Dir()
	if err != nil {
		t.Fatal(err)
	}
	cases, err := corpus.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := seed.Generate(cases)
	if err != nil {
		t.Fatal(err)
	}
	return cases, s
}

func loadSeed(t *testing.T) seed.Set {
	t.Helper()
	_, s := load(t)
	return s
}

// TestIncidentReplayed replays the incident: the seed platform's correct runs, scored by
// prescreen and by relevancy with a sound judge, raise no insight at all, at any point as
// their results arrive; the same runs scored by the replaced word-overlap pre-screen raise
// a critical quality insight in the same engine.
func TestIncidentReplayed(t *testing.T) {
	set := loadSeed(t)
	p := newPlatform(t, soundJudge(set.Broken), broker.Config{})
	agents := []struct {
		name string
		runs []sdk.Run
	}{
		{seed.AgentEmailTriage, set.EmailTriage},
		{seed.AgentAssistant, set.Assistant},
	}
	for _, a := range agents {
		for _, scorer := range []string{"prescreen", "relevancy"} {
			t.Run(a.name+"/"+scorer, func(t *testing.T) {
				rows := p.score(t, scorer, a.runs)
				tl := feed(t, insights.Config{}, a.name, scorer, rows)
				if i := tl.firstAt(0, insights.SeverityWarning); i >= 0 {
					t.Errorf("a warning after run %d: %v", i+1, tl.steps[i])
				}
				if i := tl.firstAt(0, insights.SeverityCritical); i >= 0 {
					t.Errorf("a critical insight after run %d: %v", i+1, tl.steps[i])
				}
				for _, in := range tl.open {
					t.Errorf("open at the end: %s %s: %s", in.Severity, in.Kind, in.Title)
				}
				scored := 0
				for _, r := range rows {
					if r.Status == sdk.StatusScored {
						scored++
					}
				}
				if scored != len(rows) {
					t.Errorf("%d of %d runs scored; the replay must score every run", scored, len(rows))
				}
			})
		}
		t.Run(a.name+"/word_overlap", func(t *testing.T) {
			tl := feed(t, insights.Config{}, a.name, baseline.Name, p.score(t, baseline.Name, a.runs))
			var q *insights.Insight
			for i := range tl.open {
				if tl.open[i].Kind == insights.KindQuality {
					q = &tl.open[i]
				}
			}
			if q == nil || q.Severity != insights.SeverityCritical {
				t.Fatalf("the word-overlap pre-screen raised %+v, want a critical quality insight: the engine must not be simply silent", tl.open)
			}
			t.Logf("word overlap: %s", q.Title)
		})
	}
}

// TestBrokenBatch is the README's walkthrough: after the 270 correct runs, the broken batch
// arrives and the email-triage agent gets critical insights with their evidence: one card
// for the gross failures (error texts, empty outputs) and one for the failure rate, whose
// worst runs are the other failures (the refusals), never three cards with one list.
func TestBrokenBatch(t *testing.T) {
	set := loadSeed(t)
	p := newPlatform(t, soundJudge(set.Broken), broker.Config{})
	runs := append(append([]sdk.Run{}, set.EmailTriage...), set.Broken...)
	for _, scorer := range []string{"prescreen", "relevancy"} {
		t.Run(scorer, func(t *testing.T) {
			tl := feed(t, insights.Config{}, seed.AgentEmailTriage, scorer, p.score(t, scorer, runs))
			if i := tl.firstAt(0, insights.SeverityCritical); i < len(set.EmailTriage) {
				t.Fatalf("first critical after run %d, want one only after the broken batch starts (run %d)", i+1, len(set.EmailTriage)+1)
			}
			got := map[insights.Kind]insights.Insight{}
			for _, in := range tl.open {
				got[in.Kind] = in
				t.Logf("%s %s: %s", in.Severity, in.Kind, in.Title)
			}
			rate, ok := got[insights.KindQuality]
			if _, both := got[insights.KindRegression]; both == ok {
				t.Fatalf("quality %v, regression %v: want one card for the failure rate", ok, both)
			} else if both {
				rate = got[insights.KindRegression]
			}
			gross := got[insights.KindGrossFailures]
			for _, in := range []insights.Insight{gross, rate} {
				ev := in.Evidence
				if in.Severity != insights.SeverityCritical || ev.ScorerVersion == "" || len(ev.Worst) == 0 || ev.Measured.Low <= ev.Measured.Level {
					t.Errorf("%s %s: evidence %+v lacks the version, the worst runs or an interval above the level", in.Severity, in.Kind, ev)
				}
			}
			if gross.Evidence.Flags["error_text"] == 0 || gross.Evidence.Flags["empty_output"] == 0 {
				t.Errorf("gross failures flags %v, want error_text and empty_output", gross.Evidence.Flags)
			}
			for _, w := range rate.Evidence.Worst {
				if slices.Contains(w.Flags, "error_text") || slices.Contains(w.Flags, "empty_output") {
					t.Errorf("%s lists the gross failure %s %v, which their own card lists", rate.Kind, w.RunID, w.Flags)
				}
			}
			if _, ok := got[insights.KindEvaluationHealth]; ok {
				t.Errorf("evaluation health %s: the scorer worked", got[insights.KindEvaluationHealth].Title)
			}
		})
	}
}

// breakRuns returns the runs with, from index at on, exactly rate x 10 runs in every block
// of 10 (at random places) turned into outputs from outs.
func breakRuns(runs []sdk.Run, at int, rate float64, outs []string, seedN uint64) []sdk.Run {
	rng := rand.New(rand.NewPCG(seedN, 7))
	out := append([]sdk.Run{}, runs...)
	n := 0
	for b := at; b < len(out); b += 10 {
		for _, j := range rng.Perm(10)[:int(rate*10+0.5)] {
			if b+j < len(out) {
				out[b+j].Output = outs[n%len(outs)]
				n++
			}
		}
	}
	return out
}

// errorTexts are the corpus's synthetic provider errors and stack traces.
func errorTexts(cases []corpus.Case) []string {
	var out []string
	for _, c := range cases {
		if c.Label == corpus.LabelError {
			out = append(out, c.Run.Output)
		}
	}
	return out
}

// TestBreakageCaught: a real breakage of the email-triage agent, after two windows of
// correct runs, scored by prescreen and by relevancy with a sound judge.
func TestBreakageCaught(t *testing.T) {
	cases, set := load(t)
	errs := errorTexts(cases)
	var brokenRuns []sdk.Run
	for _, e := range errs {
		brokenRuns = append(brokenRuns, sdk.Run{Output: e})
	}
	const at = 170 // the 100 runs before and the 100 before those are correct
	tests := []struct {
		name string
		rate float64
		// within: a critical insight at most this many runs after the break; 0: never.
		within int
		// warnWithin: at least a warning this many runs after the break; 0: no insight at all.
		warnWithin int
	}{
		{"30% error text", 0.3, 25, 25},
		{"10% error text", 0.1, 0, 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPlatform(t, soundJudge(append(set.Broken, brokenRuns...)), broker.Config{})
			runs := breakRuns(set.EmailTriage, at, tt.rate, errs, 1)
			crit, warn := -1, -1
			for _, scorer := range []string{"prescreen", "relevancy"} {
				tl := feed(t, insights.Config{}, seed.AgentEmailTriage, scorer, p.score(t, scorer, runs))
				if i := tl.firstAt(0, insights.SeverityWarning); i >= 0 && i < at {
					t.Fatalf("%s: a warning after run %d, before the break", scorer, i+1)
				}
				if i := tl.firstAt(at, insights.SeverityCritical); i >= 0 && (crit < 0 || i < crit) {
					crit = i
				}
				for _, sev := range []insights.Severity{insights.SeverityWarning, insights.SeverityCritical} {
					if i := tl.firstAt(at, sev); i >= 0 && (warn < 0 || i < warn) {
						warn = i
					}
				}
				for _, in := range tl.open {
					t.Logf("%s at the end: %s %s: %s", scorer, in.Severity, in.Kind, in.Title)
				}
			}
			t.Logf("first warning %s, first critical %s", after(warn, at), after(crit, at))
			switch {
			case tt.within > 0 && (crit < 0 || crit-at+1 > tt.within):
				t.Errorf("first critical %s, want within %d runs", after(crit, at), tt.within)
			case tt.within == 0 && crit >= 0:
				t.Errorf("a critical insight %d runs after the break, want warnings only", crit-at+1)
			}
			if warn < 0 || warn-at+1 > tt.warnWithin {
				t.Errorf("first warning %s, want within %d runs", after(warn, at), tt.warnWithin)
			}
		})
	}
}

func after(i, at int) string {
	if i < 0 {
		return "never"
	}
	return fmt.Sprintf("%d runs after the break", i-at+1)
}

// TestRandomLowScores: 5% of runs scored low at random (one in every 20, no flags) is
// noise, not an incident: no insight of any kind.
func TestRandomLowScores(t *testing.T) {
	set := loadSeed(t)
	p := newPlatform(t, soundJudge(nil), broker.Config{})
	rows := p.score(t, "prescreen", set.EmailTriage)
	rng := rand.New(rand.NewPCG(5, 5))
	low, no := 0.1, false
	for b := 0; b < len(rows); b += 20 {
		i := min(b+rng.IntN(20), len(rows)-1)
		rows[i].Score, rows[i].Passed, rows[i].Reason, rows[i].Flags = &low, &no, "scored low", nil
	}
	tl := feed(t, insights.Config{}, seed.AgentEmailTriage, "prescreen", rows)
	for i, st := range tl.steps {
		if len(st) > 0 {
			t.Fatalf("after run %d: %v, want no insight", i+1, st)
		}
	}
}

// TestJudgeOutage: every relevancy call fails (the judge answers 503): every result is
// failed with the error, an evaluation_health insight names it, and no quality insight is
// raised; prescreen, which needs no judge, raises nothing.
func TestJudgeOutage(t *testing.T) {
	set := loadSeed(t)
	down := judgetest.New(judgetest.Rule{Status: 503})
	p := newPlatform(t, down, broker.Config{MaxRetries: 1, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond})
	runs := set.EmailTriage[len(set.EmailTriage)-100:]
	rows := p.score(t, "relevancy", runs)
	for _, r := range rows {
		if r.Status != sdk.StatusFailed || r.ErrorCode != sdk.CodeJudgeError {
			t.Fatalf("run %s: %s %s, want failed with judge_error", r.RunID, r.Status, r.ErrorCode)
		}
	}
	tl := feed(t, insights.Config{}, seed.AgentEmailTriage, "relevancy", rows)
	if len(tl.open) != 1 || tl.open[0].Kind != insights.KindEvaluationHealth || tl.open[0].Severity != insights.SeverityCritical {
		t.Fatalf("open %+v, want one critical evaluation_health insight", tl.open)
	}
	h := tl.open[0]
	if !strings.Contains(h.Title, "judge_error") || !strings.Contains(h.Title, "503") || h.Evidence.Causes[0].Count != 100 {
		t.Errorf("title %q, causes %+v: want the judge error and its count", h.Title, h.Evidence.Causes)
	}
	if i := tl.firstAt(0, insights.SeverityWarning, insights.KindQuality, insights.KindRegression, insights.KindGrossFailures); i >= 0 {
		t.Errorf("a quality insight after run %d from failed results", i+1)
	}
	if i := tl.firstAt(0, insights.SeverityCritical, insights.KindQuality, insights.KindRegression, insights.KindGrossFailures); i >= 0 {
		t.Errorf("a critical quality insight after run %d from failed results", i+1)
	}
	t.Logf("%s %s: %s", h.Severity, h.Kind, h.Title)
	if tl := feed(t, insights.Config{}, seed.AgentEmailTriage, "prescreen", p.score(t, "prescreen", runs)); len(tl.open) != 0 {
		t.Errorf("prescreen during the judge outage: %v", tl.open)
	}
}
