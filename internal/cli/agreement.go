package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/corpus"
	"github.com/scorekit/scorekit/internal/service/agreement"
	"github.com/scorekit/scorekit/sdk"
)

// agreementOptions are the flags of `scorekit agreement`.
type agreementOptions struct {
	datasets    []string
	scorers     []string
	data        string
	sample      int
	seed        uint64
	json        bool
	show        int
	config      string
	timeout     time.Duration
	concurrency int
	judge       judgeConfig
}

// defaultAgreementSample bounds the runs per set, so the first measurement costs a few
// thousand judge calls rather than ten thousand; --sample 0 scores every run.
const defaultAgreementSample = 200

func (e *env) agreementCommand() *cobra.Command {
	var o agreementOptions
	cmd := &cobra.Command{
		Use:   "agreement --judge-url URL --judge-model MODEL [flags]",
		Short: "Measure the judge scorers' agreement with the labels of the public sets the repository carries",
		Long: `Score the labelled public sets in the repository's testdata/ (HaluEval QA, TruthfulQA,
ARES, XSTest, CoQA, the email triage set, TruLens' golden set, Mastra's own grounding
cases) with the judge scorers, each set's labels read as what they mean for each scorer
(docs/AGREEMENT.md), and print how well the scorers agree with the people who labelled
them.

Pass/fail sets: accuracy, Cohen's kappa, precision and recall of the failure class, and the
confusion matrix. Scored sets: Spearman's rho, Kendall's tau-b and the mean absolute error.
Every figure has a 95% interval and the number of runs; the disagreements are listed with
both sides. Where two people labelled the same runs (XSTest), their agreement with each
other is shown beside the scorer's: the ceiling a scorer can reach.

Runs a scorer did not score (skipped, or failed: a judge error) are counted apart and left
out of the figures. The number of judge calls is said before the first one.`,
		Example: `  scorekit agreement --judge-url https://api.openai.com/v1 --judge-model gpt-4o-mini
  scorekit agreement --dataset ares,xstest --scorers relevancy --sample 0 --json \
    --judge-url http://localhost:11434/v1 --judge-model llama3.1 --judge-key-env none`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.agreement(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.datasets, "dataset", []string{"all"}, "labelled sets to score, comma separated, or all: "+strings.Join(corpus.JudgedSetNames(), ", "))
	f.StringSliceVar(&o.scorers, "scorers", judgedScorers(), "scorers to measure, comma separated; each set is scored by the scorers its labels have a reading for")
	f.StringVar(&o.data, "data", "", "the folder holding the labelled sets (default: testdata/ at the root of the scorekit checkout around the working directory)")
	f.IntVar(&o.sample, "sample", defaultAgreementSample, "score at most N runs per set, drawn at random with --seed (0 scores every run)")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the sample: the same seed draws the same runs")
	f.BoolVar(&o.json, "json", false, "print the report as JSON: every figure, interval and disagreement")
	f.IntVar(&o.show, "disagreements", 10, "table: list at most N disagreements per set and scorer (0 for none; --json lists all)")
	f.StringVar(&o.config, "config", "", "JSON file with per-scorer configs and the judge, as for score")
	f.DurationVar(&o.timeout, "timeout", 2*time.Minute, "deadline of one scorer call, above 0")
	f.IntVar(&o.concurrency, "concurrency", 4*runtime.GOMAXPROCS(0), "runs scored at the same time, 1 or more (judge calls are also capped by the judge's own limits)")
	judgeFlags(f, &o.judge)
	return cmd
}

// agreementTable is one set's agreement with one scorer.
type agreementTable struct {
	Set     string `json:"set"`
	Scorer  string `json:"scorer"`
	Verdict string `json:"verdict"`
	Meaning string `json:"meaning"`
	// Available is the runs the set has; Sampled the runs sent to the scorer.
	Available int `json:"available"`
	Sampled   int `json:"sampled"`
	// NotScored counts the sampled runs the scorer skipped or failed, by status, with
	// their distinct reasons (at most five).
	NotScored        map[sdk.Status]int `json:"not_scored"`
	NotScoredReasons []string           `json:"not_scored_reasons,omitempty"`
	// PassFail or Scores is the scorer's agreement with the labels.
	PassFail *agreement.PassFailReport `json:"pass_fail,omitempty"`
	Scores   *agreement.ScoreReport    `json:"scores,omitempty"`
	// People is the two annotators' agreement with each other, where the set has them.
	People *agreement.PassFailReport `json:"people,omitempty"`
	// Disagreements are the runs where the scorer and the label differ, with both sides.
	Disagreements []agreementRun `json:"disagreements"`
	// Error says why no figure could be computed (no run was scored).
	Error string `json:"error,omitempty"`
}

// agreementRun is one disagreement, both sides.
type agreementRun struct {
	RunID string `json:"run_id"`
	// Label is the set's label as it writes it; Person the verdict read from it.
	Label  string `json:"label"`
	Person string `json:"person"`
	// Scorer is the scorer's verdict, Score its score and Reason its reason.
	Scorer string   `json:"scorer"`
	Score  *float64 `json:"score,omitempty"`
	Reason string   `json:"reason,omitempty"`
}

// agreementReport is what `scorekit agreement --json` prints.
type agreementReport struct {
	JudgeModel string           `json:"judge_model"`
	JudgeURL   string           `json:"judge_url"`
	Sample     int              `json:"sample"`
	Seed       uint64           `json:"seed"`
	Intervals  string           `json:"intervals"`
	Tables     []agreementTable `json:"tables"`
}

// intervalsNote says how every interval is computed.
const intervalsNote = "95% intervals: Wilson for accuracy, precision and recall; Fleiss-Cohen-Everitt for kappa; " +
	"Fisher z with the Bonett-Wright error for Spearman; the asymptotic error for Kendall's tau-b; Student's t for the MAE"

// passFailTitle heads the pass/fail table of either agreement report.
const passFailTitle = "Pass/fail (the failure class is what precision and recall count)"

// agreementJob is one set's labels for one scorer, sampled.
type agreementJob struct {
	set     corpus.JudgedSet
	all     int
	runs    []corpus.Judged
	results []sdk.Result
}

func (o *agreementOptions) check() error {
	switch {
	case o.sample < 0:
		return fmt.Errorf("agreement: --sample %d: want 0 (every run) or more", o.sample)
	case o.concurrency < 1:
		return fmt.Errorf("agreement: --concurrency %d: want 1 or more", o.concurrency)
	case o.show < 0:
		return fmt.Errorf("agreement: --disagreements %d: want 0 or more", o.show)
	}
	return checkTimeout("--timeout", o.timeout)
}

// selectJudged returns the judged sets of the named datasets that have a reading for one
// of the scorers, and a note for each scorer none of them reads. A name that is not a set,
// a scorer no set reads, or a choice that leaves nothing to measure is an error.
func selectJudged(datasets, scorers []string) ([]corpus.JudgedSet, []string, error) {
	names := corpus.JudgedSetNames()
	want := map[string]bool{}
	for _, d := range dedupe(datasets) {
		switch {
		case d == "all":
			for _, n := range names {
				want[n] = true
			}
		case slices.Contains(names, d):
			want[d] = true
		default:
			return nil, nil, fmt.Errorf("agreement: --dataset %q: no such labelled set; choose from %s, or all", d, strings.Join(names, ", "))
		}
	}
	if len(want) == 0 {
		return nil, nil, fmt.Errorf("agreement: --dataset is empty; name a set (%s) or all", strings.Join(names, ", "))
	}
	scorers = dedupe(scorers)
	if len(scorers) == 0 {
		return nil, nil, fmt.Errorf("agreement: --scorers is empty; name at least one of %s", strings.Join(judgedScorers(), ", "))
	}
	var out []corpus.JudgedSet
	var notes []string
	for _, sc := range scorers {
		var mapped []string
		chosen := false
		for _, s := range corpus.JudgedSets() {
			if s.Scorer == sc {
				mapped = append(mapped, s.Set)
				chosen = chosen || want[s.Set]
			}
		}
		switch {
		case len(mapped) == 0:
			return nil, nil, fmt.Errorf("agreement: --scorers %s: no labelled set has a reading for it; the sets read labels for %s (docs/AGREEMENT.md)", sc, strings.Join(judgedScorers(), ", "))
		case !chosen:
			notes = append(notes, fmt.Sprintf("%s: none of the chosen sets has labels for it; it is measured on %s", sc, strings.Join(mapped, ", ")))
		}
	}
	for _, s := range corpus.JudgedSets() {
		if want[s.Set] && slices.Contains(scorers, s.Scorer) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("agreement: nothing to measure: %s", strings.Join(notes, "; "))
	}
	return out, notes, nil
}

// judgedScorers are the scorers some labelled set has a reading for, each once, in
// corpus.JudgedSets order: the default of --scorers.
func judgedScorers() []string {
	var out []string
	for _, s := range corpus.JudgedSets() {
		if !slices.Contains(out, s.Scorer) {
			out = append(out, s.Scorer)
		}
	}
	return out
}

// sampleRuns draws at most n runs, in set order. The draw depends on the seed and the set
// only, so every scorer of a set sees the same runs when their readings have the same rows.
func sampleRuns(js []corpus.Judged, set string, n int, seed uint64) []corpus.Judged {
	if n == 0 || n >= len(js) {
		return js
	}
	h := fnv.New64a()
	h.Write([]byte(set))
	idx := rand.New(rand.NewPCG(seed, h.Sum64())).Perm(len(js))[:n]
	slices.Sort(idx)
	out := make([]corpus.Judged, n)
	for i, k := range idx {
		out[i] = js[k]
	}
	return out
}

// agreement runs `scorekit agreement`.
func (e *env) agreement(ctx context.Context, o agreementOptions) (err error) {
	if err := o.check(); err != nil {
		return err
	}
	sets, notes, err := selectJudged(o.datasets, o.scorers)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(e.stderr, "agreement: %s\n", n)
	}
	dir := o.data
	if dir == "" {
		if dir, err = corpus.Dir(); err != nil {
			return fmt.Errorf("agreement: %w; or pass --data DIR, the folder holding the labelled sets", err)
		}
	}
	var jobs []*agreementJob
	var names []string
	for _, s := range sets {
		js, err := s.Load(dir)
		if err != nil {
			return fmt.Errorf("agreement: %w", err)
		}
		jobs = append(jobs, &agreementJob{set: s, all: len(js), runs: sampleRuns(js, s.Set, o.sample, o.seed)})
		if !slices.Contains(names, s.Scorer) {
			names = append(names, s.Scorer)
		}
	}

	ho := hostOptions{config: o.config, timeout: o.timeout, judge: o.judge, scorers: names}
	parts, err := e.assembleHost(ctx, ho)
	if err != nil {
		return err
	}
	h, cfg := parts.host, parts.cfg
	defer func() {
		if cerr := parts.close(context.WithoutCancel(ctx)); cerr != nil && err == nil {
			err = fmt.Errorf("agreement: unload plugins: %w", cerr)
		}
	}()
	jc := cfg.Judge.merge(o.judge)
	if parts.judge == nil {
		return fmt.Errorf("agreement: the judge scorers need a judge: pass --judge-url and --judge-model (or judge.url and judge.model in --config)")
	}
	scorers := map[string]*host.Scorer{}
	defer func() {
		for _, s := range scorers {
			_ = s.Close(context.WithoutCancel(ctx))
		}
	}()
	for _, n := range names {
		s, err := h.Open(ctx, n, host.OpenOptions{Config: cfg.Scorers[n]})
		if err != nil {
			return fmt.Errorf("agreement: open %s: %w", n, err)
		}
		scorers[n] = s
	}

	total := 0
	var plan []string
	for _, j := range jobs {
		total += len(j.runs)
		plan = append(plan, fmt.Sprintf("%s/%s %d", j.set.Set, j.set.Scorer, len(j.runs)))
	}
	fmt.Fprintf(e.stderr, "agreement: scoring %d runs (%s): about %d calls to the judge %s, more where a scorer repairs an answer; --sample %d, --seed %d\n",
		total, strings.Join(plan, ", "), total, jc.Model, o.sample, o.seed)
	if err := e.scoreJudged(ctx, jobs, scorers, o.concurrency, total); err != nil {
		return err
	}

	rep := agreementReport{JudgeModel: jc.Model, JudgeURL: jc.URL, Sample: o.sample, Seed: o.seed, Intervals: intervalsNote}
	scored := 0
	for _, j := range jobs {
		t := j.table()
		if t.Error == "" {
			scored++
		}
		rep.Tables = append(rep.Tables, t)
	}
	if o.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("agreement: write: %w", err)
		}
	} else if err := writeAgreement(e.stdout, rep, o.show); err != nil {
		return fmt.Errorf("agreement: write: %w", err)
	}
	if scored == 0 {
		return fmt.Errorf("agreement: no run was scored by any scorer; the reasons are in the report")
	}
	return nil
}

// scoreJudged scores every job's runs with its scorer, concurrency runs at a time.
func (e *env) scoreJudged(ctx context.Context, jobs []*agreementJob, scorers map[string]*host.Scorer, concurrency, total int) error {
	type task struct {
		job *agreementJob
		i   int
	}
	tasks := make(chan task)
	bar := e.progress(int64(total))
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for t := range tasks {
				t.job.results[t.i] = scorers[t.job.set.Scorer].Score(ctx, t.job.runs[t.i].Run)
				if bar != nil {
					_ = bar.Add(1)
				}
			}
		})
	}
feed:
	for _, j := range jobs {
		j.results = make([]sdk.Result, len(j.runs))
		for i := range j.runs {
			select {
			case tasks <- task{job: j, i: i}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(tasks)
	wg.Wait()
	if bar != nil {
		_ = bar.Finish()
	}
	if ctx.Err() != nil {
		return fmt.Errorf("agreement: %w before every run was scored", errInterrupted)
	}
	return nil
}

// table computes the job's agreement from its results.
func (j *agreementJob) table() agreementTable {
	t := agreementTable{Set: j.set.Set, Scorer: j.set.Scorer, Verdict: j.set.Verdict, Meaning: j.set.Meaning,
		Available: j.all, Sampled: len(j.runs), NotScored: map[sdk.Status]int{}, Disagreements: []agreementRun{}}
	byID := map[string]int{}
	var pf []agreement.Pair[bool]
	var sc []agreement.Pair[float64]
	var people []agreement.Pair[bool]
	for i, r := range j.results {
		run := j.runs[i]
		byID[run.Run.ID] = i
		if len(run.People) == 2 {
			people = append(people, agreement.Pair[bool]{RunID: run.Run.ID, Want: run.People[0], Got: run.People[1]})
		}
		if r.Status != sdk.StatusScored || r.Score == nil || r.Passed == nil {
			t.NotScored[r.Status]++
			if why := resultReason(r); len(t.NotScoredReasons) < 5 && !slices.Contains(t.NotScoredReasons, why) {
				t.NotScoredReasons = append(t.NotScoredReasons, why)
			}
			continue
		}
		pf = append(pf, agreement.Pair[bool]{RunID: run.Run.ID, Want: run.Pass, Got: *r.Passed})
		sc = append(sc, agreement.Pair[float64]{RunID: run.Run.ID, Want: run.Score, Got: *r.Score})
	}
	if len(people) > 0 {
		if p, err := agreement.PassFail(people); err == nil {
			t.People = &p
		}
	}
	detail := func(id string) agreementRun {
		i := byID[id]
		run, r := j.runs[i], j.results[i]
		d := agreementRun{RunID: id, Label: run.Label, Score: r.Score, Reason: r.Reason}
		if j.set.Verdict == corpus.VerdictScore {
			d.Person, d.Scorer = fmt.Sprintf("%.2f", run.Score), fmt.Sprintf("%.2f", *r.Score)
		} else {
			d.Person, d.Scorer = passWord(run.Pass), passWord(*r.Passed)
		}
		return d
	}
	switch j.set.Verdict {
	case corpus.VerdictScore:
		rep, err := agreement.Scores(sc, 0)
		if err != nil {
			t.Error = err.Error()
			return t
		}
		t.Scores = &rep
		for _, d := range rep.Disagreements {
			t.Disagreements = append(t.Disagreements, detail(d.RunID))
		}
	default:
		rep, err := agreement.PassFail(pf)
		if err != nil {
			t.Error = err.Error()
			return t
		}
		t.PassFail = &rep
		for _, d := range rep.Disagreements {
			t.Disagreements = append(t.Disagreements, detail(d.RunID))
		}
	}
	return t
}

func passWord(pass bool) string {
	if pass {
		return "pass"
	}
	return "fail"
}

// resultReason is why a result carries no score.
func resultReason(r sdk.Result) string {
	if r.Error != nil {
		return string(r.Status) + ": " + r.Error.Message
	}
	return string(r.Status) + ": " + r.Reason
}

// writeAgreement prints the report as tables.
func writeAgreement(w io.Writer, rep agreementReport, show int) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "Agreement with the public sets' labels (judge %s; %s)\n", rep.JudgeModel, rep.Intervals)
	notScored := func(t agreementTable) string {
		n := 0
		for _, c := range t.NotScored {
			n += c
		}
		return fmt.Sprint(n)
	}
	var pf, sc []string
	for _, t := range rep.Tables {
		switch {
		case t.Scores != nil:
			r := t.Scores
			sc = append(sc, fmt.Sprintf("%s\t%s\t%d\t%s\t%s\t%s\t%s", t.Set, t.Scorer, r.Runs, r.Spearman, r.Kendall, r.MAE, notScored(t)))
		case t.PassFail == nil:
			pf = append(pf, fmt.Sprintf("%s\t%s\t0\t%s\t\t\t\t\t\t\t\t%s", t.Set, t.Scorer, t.Error, notScored(t)))
		default:
			row := func(who string, r *agreement.PassFailReport, skipped string) string {
				c := r.Confusion
				return fmt.Sprintf("%s\t%s\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s", t.Set, who, r.Runs, r.Accuracy, r.Kappa,
					r.FailPrecision, r.FailRecall, c.BothPass, c.BothFail, c.Missed, c.FalseAlarms, skipped)
			}
			pf = append(pf, row(t.Scorer, t.PassFail, notScored(t)))
			if t.People != nil {
				pf = append(pf, row("people: annotator 2 vs 1", t.People, "-"))
			}
		}
	}
	if err := writeTable(ew, passFailTitle,
		"set\tscorer\truns\taccuracy\tkappa\tfail precision\tfail recall\tboth pass\tboth fail\tmissed\tfalse alarms\tnot scored", pf); err != nil {
		return err
	}
	if err := writeTable(ew, "Scores", "set\tscorer\truns\tspearman\tkendall tau-b\tmean abs error\tnot scored", sc); err != nil {
		return err
	}
	for _, t := range rep.Tables {
		if len(t.NotScoredReasons) > 0 {
			fmt.Fprintf(ew, "\n%s/%s: not scored: %s\n", t.Set, t.Scorer, strings.Join(t.NotScoredReasons, "; "))
		}
	}
	if show > 0 {
		for _, t := range rep.Tables {
			if len(t.Disagreements) == 0 {
				continue
			}
			fmt.Fprintf(ew, "\nDisagreements %s/%s (%d; first %d)\n", t.Set, t.Scorer, len(t.Disagreements), min(show, len(t.Disagreements)))
			for _, d := range t.Disagreements[:min(show, len(t.Disagreements))] {
				fmt.Fprintf(ew, "  %s: person %s (%s), scorer %s: %s\n", d.RunID, d.Person, d.Label, d.Scorer, clipReason(d.Reason))
			}
		}
	}
	return ew.err
}

func clipReason(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 160 {
		return string(r[:160]) + "..."
	}
	return s
}

// errWriter keeps the first write error so a report's many prints check it once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}
