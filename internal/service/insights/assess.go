package insights

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/scorekit/scorekit/internal/textkit"
	"github.com/scorekit/scorekit/sdk"
)

// ErrInvalidResult is wrapped by every error about a result row.
var ErrInvalidResult = errors.New("invalid result row")

// Assess returns the insights the rules want for one (agent, scorer), computed from its
// result rows: the latest result per run, as many runs as two windows hold (the window and
// the previous one, for regressions; more rows are ignored, fewer are fine). When a run has
// more than one row, the one with the newest CreatedAt counts. open are the insights open
// now; those of this (agent, scorer) keep their state while their estimate stays above
// the warning level, the rest are ignored.
//
// The insights come in kind order: evaluation_health, gross_failures, quality, regression.
// A row that cannot be read is an error that names it and says what is wrong; nothing is
// assessed then.
func Assess(cfg Config, agent, scorer string, results []Result, open []Insight) ([]Insight, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	s, err := newSeries(cfg, agent, scorer, results, open)
	if err != nil {
		return nil, err
	}
	if len(s.cur) == 0 {
		return nil, nil
	}
	return s.cards(), nil
}

// cards returns the insights the rules want, one card per finding: the failures a
// gross_failures card shows are not shown again on the quality or regression card (which
// is not raised when they are all its failures), and a failure rate that is too high and
// rose is one card, not two with the same runs.
func (s *series) cards() []Insight {
	health, hok := s.health()
	gross, gok := s.gross()
	quality, qok := s.quality()
	regression, rok := s.regression()
	if gok {
		qok = qok && s.besideGross(&quality, gross)
		rok = rok && s.besideGross(&regression, gross)
	}
	if qok && rok {
		// The more severe; on a tie the one already open, so that the same failures do
		// not alert twice; else quality, which stays true while the failures last, where a
		// regression gives way to quality once the window before fails too (a second alert
		// for the same failures). Quality then says what the window before was.
		qr, rr := quality.Severity.rank(), regression.Severity.rank()
		keepQuality := qr > rr || qr == rr && !(s.open[KindRegression] && !s.open[KindQuality])
		if keepQuality {
			quality.Evidence.Previous = regression.Evidence.Previous
			if p := s.prevCounts; p.Passed+p.NotPassed > 0 {
				quality.Title += fmt.Sprintf("; %.0f%% of the %d runs before failed", 100*float64(p.NotPassed)/float64(p.Passed+p.NotPassed), p.Runs)
			}
		}
		qok, rok = keepQuality, !keepQuality
	}
	var out []Insight
	for _, c := range []struct {
		in Insight
		ok bool
	}{{health, hok}, {gross, gok}, {quality, qok}, {regression, rok}} {
		if c.ok {
			out = append(out, c.in)
		}
	}
	return out
}

// besideGross fits a quality or regression card beside the gross_failures card: its worst
// runs leave out the gross failures (their card lists them) and its title says how many of
// its failures they are. It reports false, for no card, when every failure is a gross
// failure and their card is at least as severe: that card says it all.
func (s *series) besideGross(in *Insight, gross Insight) bool {
	failures, grossFailures := 0, 0
	for _, r := range s.cur {
		if r.Status == sdk.StatusScored && r.Passed != nil && !*r.Passed {
			failures++
			if s.isGross(r) {
				grossFailures++
			}
		}
	}
	switch {
	case grossFailures == 0:
		return true
	case grossFailures == failures:
		return gross.Severity.rank() < in.Severity.rank()
	}
	in.Evidence.Worst = s.worst(s.cur, s.isGross)
	in.Title += fmt.Sprintf("; %d of the %d are gross failures, on their own insight", grossFailures, failures)
	return true
}

// series is one (agent, scorer) ready to assess.
type series struct {
	cfg           Config
	z             float64
	agent, scorer string
	version       string
	// cur and prev are the current version's rows of the window and of the previous
	// window, newest first.
	cur, prev           []*Result
	curCounts           Counts
	prevCounts          Counts
	capped              string
	open                map[Kind]bool
	grossFlag           map[string]bool
	otherCur, otherPrev int
}

func newSeries(cfg Config, agent, scorer string, results []Result, open []Insight) (*series, error) {
	if agent == "" || scorer == "" {
		return nil, fmt.Errorf("insights: assess: agent %q, scorer %q: both are required", agent, scorer)
	}
	latest := make(map[string]int, len(results))
	rows := make([]*Result, 0, len(results))
	for i := range results {
		r := &results[i]
		if err := checkRow(i, scorer, r); err != nil {
			return nil, err
		}
		if j, ok := latest[r.RunID]; ok {
			if !r.CreatedAt.Before(rows[j].CreatedAt) {
				rows[j] = r
			}
			continue
		}
		latest[r.RunID] = len(rows)
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b *Result) int {
		if c := b.RunTime.Compare(a.RunTime); c != 0 {
			return c
		}
		return strings.Compare(b.RunID, a.RunID)
	})
	w := cfg.Window
	window := rows[:min(w, len(rows))]
	previous := rows[len(window):min(2*w, len(rows))]
	s := &series{cfg: cfg, z: zScore(cfg.Confidence), agent: agent, scorer: scorer, open: map[Kind]bool{}, grossFlag: map[string]bool{}}
	for _, f := range cfg.GrossFlags {
		s.grossFlag[f] = true
	}
	for _, in := range open {
		if in.Agent == agent && in.Scorer == scorer && in.ResolvedAt == nil {
			s.open[in.Kind] = true
		}
	}
	if len(window) == 0 {
		return s, nil
	}
	// The current version is the one that scored most recently.
	newest := window[0]
	for _, r := range window[1:] {
		if r.CreatedAt.After(newest.CreatedAt) {
			newest = r
		}
	}
	s.version = newest.ScorerVersion
	s.cur, s.otherCur = s.ofVersion(window)
	s.prev, s.otherPrev = s.ofVersion(previous)
	s.curCounts = s.counts(s.cur, s.otherCur)
	s.prevCounts = s.counts(s.prev, s.otherPrev)
	switch {
	case s.otherCur > 0:
		s.capped = fmt.Sprintf("the scorer's version changed: %d of the last %d runs were scored by an earlier version than %s; no critical insight until %s has scored a full window of %d runs",
			s.otherCur, len(window), s.version, s.version, w)
	case cfg.experimental(scorer) && len(s.cur) < w:
		s.capped = fmt.Sprintf("the scorer is marked experimental: no critical insight until version %s has scored a full window of %d runs (it has %d)",
			s.version, w, len(s.cur))
	default:
		if a, low := cfg.lowAgreement(scorer, s.version); low {
			s.capped = fmt.Sprintf("version %s of the scorer agrees with the tenant's labels with kappa %.2f on %d runs, under %.1f: no critical insight from it until a version agrees better",
				s.version, a.Kappa, a.Runs, MinKappa)
		}
	}
	return s, nil
}

func checkRow(i int, scorer string, r *Result) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("insights: %w %d (run %q): "+format, append([]any{ErrInvalidResult, i, r.RunID}, a...)...)
	}
	switch {
	case r.RunID == "":
		return bad("run_id is empty; every row names its run")
	case r.RunTime.IsZero():
		return bad("run_time is not set; use the run's time, or the time the service received it")
	case r.Scorer != scorer:
		return bad("scorer %q in a call for %q; assess one scorer's rows at a time", r.Scorer, scorer)
	}
	switch r.Status {
	case sdk.StatusScored:
		if r.Score == nil || math.IsNaN(*r.Score) || *r.Score < 0 || *r.Score > 1 {
			return bad("a scored row needs a score in [0, 1] (normalized by the host, before any display scale); got %v", ptrString(r.Score))
		}
	case sdk.StatusSkipped, sdk.StatusFailed:
	default:
		return bad("status %q: want scored, skipped or failed", r.Status)
	}
	return nil
}

func ptrString(p *float64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

func (s *series) ofVersion(rows []*Result) (same []*Result, other int) {
	same = make([]*Result, 0, len(rows))
	for _, r := range rows {
		if r.ScorerVersion == s.version {
			same = append(same, r)
		} else {
			other++
		}
	}
	return same, other
}

func (s *series) isGross(r *Result) bool {
	if r.Status != sdk.StatusScored {
		return false
	}
	for _, f := range r.Flags {
		if s.grossFlag[f] {
			return true
		}
	}
	return false
}

func (s *series) counts(rows []*Result, other int) Counts {
	c := Counts{Runs: len(rows), OtherVersions: other}
	var m moments
	for i, r := range rows {
		if i == 0 || r.RunTime.After(c.To) {
			c.To = r.RunTime
		}
		if i == 0 || r.RunTime.Before(c.From) {
			c.From = r.RunTime
		}
		switch r.Status {
		case sdk.StatusScored:
			c.Scored++
			m.add(*r.Score)
			if r.Passed != nil {
				if *r.Passed {
					c.Passed++
				} else {
					c.NotPassed++
				}
			}
			if s.isGross(r) {
				c.Gross++
			}
		case sdk.StatusSkipped:
			c.Skipped++
		case sdk.StatusFailed:
			c.Failed++
		}
	}
	if m.n > 0 {
		mean := m.mean
		c.Mean = &mean
	}
	return c
}

// decide turns an estimate and its interval over n runs into a severity: critical when the
// lower bound is above the critical level with at least minCritical runs, warning when it is
// above the warning level or the estimate is above the critical level, warning "held" when
// the insight is open and the estimate is still above the warning level.
func (s *series) decide(kind Kind, est, low float64, l Levels, n, minCritical int) (sev Severity, level float64, held bool) {
	switch {
	case n < s.cfg.MinRuns:
		return "", 0, false
	case low > l.Critical && n >= minCritical:
		return SeverityCritical, l.Critical, false
	case low > l.Warning:
		return SeverityWarning, l.Warning, false
	case est > l.Critical:
		return SeverityWarning, l.Critical, false
	case s.open[kind] && est > l.Warning:
		return SeverityWarning, l.Warning, true
	}
	return "", 0, false
}

// insight assembles an insight and applies the version and experimental cap.
func (s *series) insight(kind Kind, sev Severity, title string, ev Evidence) Insight {
	ev.ScorerVersion = s.version
	ev.Window = s.curCounts
	if sev == SeverityCritical && s.capped != "" {
		sev = SeverityWarning
		ev.Capped = s.capped
	}
	return Insight{Agent: s.agent, Scorer: s.scorer, Kind: kind, Severity: sev, Title: title, Evidence: ev}
}

// scan measures a spike: for every run count m from min to len(rows), the share of the
// newest m rows for which hit is true, and returns the m whose interval's lower bound is
// highest (the longest such m on ties): where the evidence is strongest.
func (s *series) scan(rows []*Result, hit func(*Result) bool, from int) (k, n int, low, high float64) {
	best := math.Inf(-1)
	count := 0
	for m, r := range rows {
		if hit(r) {
			count++
		}
		if m+1 < from {
			continue
		}
		lo, hi := Wilson(count, m+1, s.z)
		if lo >= best {
			best, k, n, low, high = lo, count, m+1, lo, hi
		}
	}
	return k, n, low, high
}

// spike decides a severity on the newest runs: critical on the strongest evidence among
// at least minCritical runs, else warning on the strongest among at least MinRuns.
func (s *series) spike(kind Kind, rows []*Result, hit func(*Result) bool, l Levels, minCritical int) (sev Severity, held bool, m Measure) {
	if len(rows) < s.cfg.MinRuns {
		return "", false, m
	}
	if len(rows) >= minCritical {
		k, n, low, high := s.scan(rows, hit, minCritical)
		if sev, level, _ := s.decide(kind, float64(k)/float64(n), low, l, n, minCritical); sev == SeverityCritical {
			return sev, false, Measure{K: k, N: n, Value: float64(k) / float64(n), Low: low, High: high, Confidence: s.cfg.Confidence, Level: level}
		}
	}
	k, n, low, high := s.scan(rows, hit, s.cfg.MinRuns)
	// Below minCritical runs nothing is critical: pass a minimum n cannot reach.
	sev, level, held := s.decide(kind, float64(k)/float64(n), low, l, n, math.MaxInt)
	return sev, held, Measure{K: k, N: n, Value: float64(k) / float64(n), Low: low, High: high, Confidence: s.cfg.Confidence, Level: level}
}

func (s *series) health() (Insight, bool) {
	unusable := func(r *Result) bool { return r.Status != sdk.StatusScored }
	sev, held, m := s.spike(KindEvaluationHealth, s.cur, unusable, s.cfg.Health, s.cfg.MinScored)
	if sev == "" {
		return Insight{}, false
	}
	rows := s.cur[:m.N]
	// Only failed results can make evaluation health critical: a scorer that does not
	// apply to an agent (skipped) is a configuration to change, not an outage.
	failed := 0
	for _, r := range rows {
		if r.Status == sdk.StatusFailed {
			failed++
		}
	}
	if fl, _ := Wilson(failed, m.N, s.z); sev == SeverityCritical && fl <= s.cfg.Health.Critical {
		sev, m.Level = SeverityWarning, s.cfg.Health.Warning
	}
	m.What = "share of results not scored (skipped or failed)"
	ev := Evidence{Measured: m, Held: held, Causes: causes(rows)}
	for _, r := range rows {
		if unusable(r) && len(ev.Worst) < s.cfg.WorstRuns {
			ev.Worst = append(ev.Worst, example(r))
		}
	}
	title := fmt.Sprintf("%s could not score %d of the last %d runs of %s", s.scorer, m.K, m.N, s.agent)
	if len(ev.Causes) > 0 {
		c := ev.Causes[0]
		title += ": " + string(c.Status)
		if c.Code != "" {
			title += " (" + c.Code + ")"
		}
		title += fmt.Sprintf(" %d times: %s", c.Count, clip(c.Message, 100))
	}
	return s.insight(KindEvaluationHealth, sev, title, ev), true
}

func (s *series) gross() (Insight, bool) {
	scored := make([]*Result, 0, len(s.cur))
	for _, r := range s.cur {
		if r.Status == sdk.StatusScored {
			scored = append(scored, r)
		}
	}
	if s.curCounts.Gross == 0 {
		return Insight{}, false
	}
	sev, held, m := s.spike(KindGrossFailures, scored, s.isGross, s.cfg.Gross, s.cfg.MinGross)
	// An open insight is held while the whole window's share stays above the warning level.
	if sev == "" && s.open[KindGrossFailures] && len(scored) >= s.cfg.MinRuns && float64(s.curCounts.Gross)/float64(len(scored)) > s.cfg.Gross.Warning {
		sev, held = SeverityWarning, true
		m = Measure{K: s.curCounts.Gross, N: len(scored), Value: float64(s.curCounts.Gross) / float64(len(scored)), Confidence: s.cfg.Confidence, Level: s.cfg.Gross.Warning}
		m.Low, m.High = Wilson(m.K, m.N, s.z)
	}
	if sev == "" || m.K == 0 {
		return Insight{}, false
	}
	m.What = "share of gross failures (" + strings.Join(s.cfg.GrossFlags, ", ") + ")"
	if m.N < len(scored) {
		m.What += fmt.Sprintf(" in the newest %d runs, where they are densest", m.N)
	}
	// The title and the flags count the window the card shows; the measure says where
	// the evidence is strongest, which decided the severity.
	ev := Evidence{Measured: m, Held: held, Flags: map[string]int{}}
	for _, r := range scored {
		if !s.isGross(r) {
			continue
		}
		for _, f := range r.Flags {
			ev.Flags[f]++
		}
		if len(ev.Worst) < s.cfg.WorstRuns {
			ev.Worst = append(ev.Worst, example(r))
		}
	}
	runs := "runs"
	if len(scored) < s.curCounts.Runs {
		runs = "scored runs"
	}
	title := fmt.Sprintf("%d of the last %d %s of %s are gross failures (%s), by %s", s.curCounts.Gross, len(scored), runs, s.agent, flagSummary(ev.Flags), s.scorer)
	switch {
	case m.N == len(scored):
	case m.K == s.curCounts.Gross:
		title += fmt.Sprintf(", all in the newest %d", m.N)
	default:
		title += fmt.Sprintf(", %d of them in the newest %d", m.K, m.N)
	}
	return s.insight(KindGrossFailures, sev, title, ev), true
}

func (s *series) quality() (Insight, bool) {
	c := s.curCounts
	n := c.Passed + c.NotPassed
	if n == 0 {
		return Insight{}, false
	}
	est := float64(c.NotPassed) / float64(n)
	low, high := Wilson(c.NotPassed, n, s.z)
	sev, level, held := s.decide(KindQuality, est, low, s.cfg.Quality, n, s.cfg.MinScored)
	if sev == "" {
		return Insight{}, false
	}
	ev := Evidence{
		Measured: Measure{What: "failure rate (scored runs that did not pass)", K: c.NotPassed, N: n, Value: est, Low: low, High: high, Confidence: s.cfg.Confidence, Level: level},
		Held:     held,
		Worst:    s.worst(s.cur, nil),
	}
	title := fmt.Sprintf("%s fails %d of the last %d scored runs of %s (%s)", s.scorer, c.NotPassed, n, s.agent, pct(est, low, high, s.cfg.Confidence))
	return s.insight(KindQuality, sev, title, ev), true
}

func (s *series) regression() (Insight, bool) {
	c, p := s.curCounts, s.prevCounts
	n1, n2 := c.Passed+c.NotPassed, p.Passed+p.NotPassed
	var best Insight
	found := false
	consider := func(sev Severity, held bool, m Measure, title string) {
		if sev == "" || found && sev.rank() <= best.Severity.rank() {
			return
		}
		prev := p
		best = s.insight(KindRegression, sev, title, Evidence{Measured: m, Previous: &prev, Held: held, Worst: s.worst(s.cur, nil)})
		found = true
	}
	if n1 >= s.cfg.MinScored && n2 >= s.cfg.MinScored {
		d, low, high := newcombe(c.NotPassed, n1, p.NotPassed, n2, s.z)
		sev, level, held := s.decide(KindRegression, d, low, s.cfg.Regression, n1, s.cfg.MinScored)
		consider(sev, held, Measure{What: "rise of the failure rate from the previous window", K: c.NotPassed, N: n1, Value: d, Low: low, High: high, Confidence: s.cfg.Confidence, Level: level},
			fmt.Sprintf("%s pass rate of %s fell from %.0f%% to %.0f%% (the %d runs before against the last %d)", s.scorer, s.agent,
				100*float64(p.Passed)/float64(n2), 100*float64(c.Passed)/float64(n1), p.Runs, c.Runs))
	}
	var mp, mc moments
	for _, r := range s.prev {
		if r.Status == sdk.StatusScored {
			mp.add(*r.Score)
		}
	}
	for _, r := range s.cur {
		if r.Status == sdk.StatusScored {
			mc.add(*r.Score)
		}
	}
	if mc.n >= s.cfg.MinScored && mp.n >= s.cfg.MinScored {
		d, low, high := meanDrop(mp, mc, s.z)
		sev, level, held := s.decide(KindRegression, d, low, s.cfg.Regression, mc.n, s.cfg.MinScored)
		consider(sev, held, Measure{What: "drop of the mean score from the previous window", N: mc.n, Value: d, Low: low, High: high, Confidence: s.cfg.Confidence, Level: level},
			fmt.Sprintf("%s mean score of %s fell from %.2f to %.2f (the %d runs before against the last %d)", s.scorer, s.agent, mp.mean, mc.mean, p.Runs, c.Runs))
	}
	return best, found
}

// worst returns the lowest-scored runs that did not pass, newest first among equal
// scores, leaving out those skip says (nil for none).
func (s *series) worst(rows []*Result, skip func(*Result) bool) []Example {
	var scored []*Result
	for _, r := range rows {
		if r.Status == sdk.StatusScored && (r.Passed == nil || !*r.Passed) && (skip == nil || !skip(r)) {
			scored = append(scored, r)
		}
	}
	slices.SortStableFunc(scored, func(a, b *Result) int { return cmp.Compare(*a.Score, *b.Score) })
	out := make([]Example, 0, min(len(scored), s.cfg.WorstRuns))
	for _, r := range scored[:min(len(scored), s.cfg.WorstRuns)] {
		out = append(out, example(r))
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func example(r *Result) Example {
	return Example{RunID: r.RunID, RunTime: r.RunTime, Status: r.Status, Score: clonePtr(r.Score), Passed: clonePtr(r.Passed),
		Reason: clip(r.Reason, 300), Flags: slices.Clone(r.Flags), ErrorCode: r.ErrorCode, ErrorMessage: clip(r.ErrorMessage, 300)}
}

// causes groups the skipped and failed rows by status, error code and message, most
// frequent first (then failed before skipped, then by code and message).
func causes(rows []*Result) []Cause {
	idx := map[Cause]int{}
	var out []Cause
	for _, r := range rows {
		if r.Status == sdk.StatusScored {
			continue
		}
		msg := r.ErrorMessage
		if msg == "" {
			msg = r.Reason
		}
		key := Cause{Status: r.Status, Code: r.ErrorCode, Message: clip(msg, 160)}
		if i, ok := idx[key]; ok {
			out[i].Count++
			continue
		}
		idx[key] = len(out)
		key.Count = 1
		out = append(out, key)
	}
	slices.SortStableFunc(out, func(a, b Cause) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(string(a.Status), string(b.Status)), strings.Compare(a.Code, b.Code), strings.Compare(a.Message, b.Message))
	})
	return out[:min(len(out), 5)]
}

func flagSummary(flags map[string]int) string {
	keys := make([]string, 0, len(flags))
	for k := range flags {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(flags[b], flags[a]), strings.Compare(a, b)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, flags[k])
	}
	return strings.Join(parts, ", ")
}

func pct(est, low, high, confidence float64) string {
	return fmt.Sprintf("%.0f%%, %.0f%% CI %.0f-%.0f%%", 100*est, 100*confidence, 100*low, 100*high)
}

func clip(s string, n int) string { return textkit.Clip(textkit.CollapseSpace(s), n) }
