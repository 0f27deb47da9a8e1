package insights

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/sdk"
)

var t0 = time.Date(2025, 6, 2, 8, 0, 0, 0, time.UTC)

// row is the i-th run of a series (later i, later run), scored by prescreen 1.0.0.
type row struct {
	status  sdk.Status
	score   float64
	passed  bool
	flags   []string
	version string
	code    string
	msg     string
}

func pass() row             { return row{status: sdk.StatusScored, score: 0.95, passed: true} }
func fail() row             { return row{status: sdk.StatusScored, score: 0.1} }
func gross(f string) row    { return row{status: sdk.StatusScored, score: 0.5, flags: []string{f}} }
func failed(msg string) row { return row{status: sdk.StatusFailed, code: sdk.CodeJudgeError, msg: msg} }
func skipped() row          { return row{status: sdk.StatusSkipped, msg: "the run has no context"} }

// build returns one result per row, oldest first.
func build(rs ...row) []Result {
	out := make([]Result, len(rs))
	for i, r := range rs {
		v := r.version
		if v == "" {
			v = "1.0.0"
		}
		res := Result{RunID: fmt.Sprintf("run-%04d", i+1), RunTime: t0.Add(time.Duration(i) * time.Minute), Scorer: "prescreen",
			ScorerVersion: v, Status: r.status, Flags: r.flags, CreatedAt: t0.Add(time.Duration(i)*time.Minute + time.Second)}
		switch r.status {
		case sdk.StatusScored:
			s, p := r.score, r.passed
			res.Score, res.Passed = &s, &p
			res.Reason = fmt.Sprintf("scored %.2f", s)
		case sdk.StatusFailed:
			res.ErrorCode, res.ErrorMessage = r.code, r.msg
			res.Reason = r.msg
		case sdk.StatusSkipped:
			res.Reason = r.msg
		}
		out[i] = res
	}
	return out
}

// times repeats r n times.
func times(n int, r row) []row {
	out := make([]row, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// mix returns n rows where every k-th row (the k-th, 2k-th ...) is b and the rest a.
func mix(n, k int, a, b row) []row {
	out := make([]row, n)
	for i := range out {
		out[i] = a
		if (i+1)%k == 0 {
			out[i] = b
		}
	}
	return out
}

func cat(parts ...[]row) []row {
	var out []row
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func assess(t *testing.T, cfg Config, rs []row) map[Kind]Insight {
	t.Helper()
	got, err := Assess(cfg, "email-triage", "prescreen", build(rs...), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := map[Kind]Insight{}
	for _, in := range got {
		if _, dup := m[in.Kind]; dup {
			t.Fatalf("two insights of kind %s", in.Kind)
		}
		m[in.Kind] = in
	}
	return m
}

func TestWilson(t *testing.T) {
	z := zScore(0.95)
	if math.Abs(z-1.959964) > 1e-5 {
		t.Fatalf("z(0.95) = %v, want 1.959964", z)
	}
	// Reference values: Newcombe (1998), table I, and the textbook Wilson formula.
	tests := []struct {
		k, n      int
		low, high float64
	}{
		{0, 10, 0, 0.2775},
		{1, 29, 0.0061, 0.1718},
		{81, 263, 0.2553, 0.3662},
		{15, 148, 0.0624, 0.1605},
		{0, 0, 0, 1},
		{10, 10, 0.7225, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d of %d", tt.k, tt.n), func(t *testing.T) {
			l, h := Wilson(tt.k, tt.n, z)
			if math.Abs(l-tt.low) > 5e-5 || math.Abs(h-tt.high) > 5e-5 {
				t.Errorf("Wilson = [%.4f, %.4f], want [%.4f, %.4f]", l, h, tt.low, tt.high)
			}
		})
	}
}

// TestNewcombe checks the difference interval against Newcombe (1998), table II, method 10.
func TestNewcombe(t *testing.T) {
	tests := []struct {
		k1, n1, k2, n2 int
		low, high      float64
	}{
		{56, 70, 48, 80, 0.0524, 0.3339},
		{9, 10, 3, 10, 0.1705, 0.8090},
		{6, 7, 2, 7, 0.0582, 0.8062},
		{5, 56, 0, 29, -0.0381, 0.1926},
	}
	for _, tt := range tests {
		_, l, h := newcombe(tt.k1, tt.n1, tt.k2, tt.n2, zScore(0.95))
		if math.Abs(l-tt.low) > 5e-4 || math.Abs(h-tt.high) > 5e-4 {
			t.Errorf("%d/%d - %d/%d: [%.4f, %.4f], want [%.4f, %.4f]", tt.k1, tt.n1, tt.k2, tt.n2, l, h, tt.low, tt.high)
		}
	}
}

func TestBadInput(t *testing.T) {
	good := build(pass())[0]
	score := 1.5
	tests := []struct {
		name string
		cfg  Config
		edit func(*Result)
		want string
	}{
		{"no run id", Config{}, func(r *Result) { r.RunID = "" }, "run_id is empty"},
		{"no run time", Config{}, func(r *Result) { r.RunTime = time.Time{} }, "run_time is not set"},
		{"another scorer", Config{}, func(r *Result) { r.Scorer = "relevancy" }, `scorer "relevancy" in a call for "prescreen"`},
		{"unknown status", Config{}, func(r *Result) { r.Status = "ok" }, `status "ok": want scored, skipped or failed`},
		{"scored without score", Config{}, func(r *Result) { r.Score = nil }, "needs a score in [0, 1]"},
		{"score above 1", Config{}, func(r *Result) { r.Score = &score }, "got 1.5"},
		{"negative window", Config{Window: -1}, func(*Result) {}, "window -1: want 1 to 10000"},
		{"levels inverted", Config{Quality: Levels{Warning: 0.3, Critical: 0.2}}, func(*Result) {}, "quality levels 0.3 / 0.2"},
		{"confidence", Config{Confidence: 95}, func(*Result) {}, "confidence 95"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := good
			tt.edit(&r)
			_, err := Assess(tt.cfg, "a", "prescreen", []Result{r}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if !errors.Is(err, ErrInvalidResult) && !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("err %v wraps neither ErrInvalidResult nor ErrInvalidConfig", err)
			}
		})
	}
	if _, err := Assess(Config{}, "", "prescreen", nil, nil); err == nil {
		t.Error("an empty agent name is accepted")
	}
}

// TestQualitySeverity: the severity follows the interval, not the estimate alone.
func TestQualitySeverity(t *testing.T) {
	tests := []struct {
		name string
		rows []row
		want Severity
	}{
		{"all pass", times(100, pass()), ""},
		{"5 of 100 fail", mix(100, 20, pass(), fail()), ""},
		// 10 of 100: the interval [5.5%, 17.4%] is not above the 10% warning level.
		{"10 of 100 fail", mix(100, 10, pass(), fail()), ""},
		// 20 of 100: [13.3%, 28.9%]: certainly above 10%, not certainly above 20%.
		{"20 of 100 fail", mix(100, 5, pass(), fail()), SeverityWarning},
		// 34 of 100: [25.4%, 43.5%]: certainly above the 20% critical level.
		{"34 of 100 fail", mix(100, 3, pass(), fail()), SeverityCritical},
		// Every run fails, but 20 scored runs are too few to be certain enough for critical.
		{"20 of 20 fail", times(20, fail()), SeverityWarning},
		{"30 of 30 fail", times(30, fail()), SeverityCritical},
		// 9 runs: too few for any insight.
		{"9 of 9 fail", times(9, fail()), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := assess(t, Config{}, tt.rows)[KindQuality]
			if got.Severity != tt.want {
				t.Fatalf("severity %q, want %q (%s)", got.Severity, tt.want, got.Title)
			}
			if tt.want == "" {
				return
			}
			m := got.Evidence.Measured
			if m.Low <= m.Level || m.Value < m.Low || m.High < m.Value || m.Confidence != 0.95 {
				t.Errorf("evidence %+v: want low > level and low <= value <= high at 0.95", m)
			}
			if got.Evidence.ScorerVersion != "1.0.0" || len(got.Evidence.Worst) == 0 || got.Evidence.Worst[0].Reason == "" {
				t.Errorf("evidence %+v lacks the scorer version or the worst runs with reasons", got.Evidence)
			}
		})
	}
}

// TestNotScoredIsNotLow: skipped and failed results never count as low scores; many of
// them are an evaluation_health insight about the scorer.
func TestNotScoredIsNotLow(t *testing.T) {
	t.Run("judge outage", func(t *testing.T) {
		msg := "HTTP 429: rate limited; gave up after 4 retries"
		got := assess(t, Config{}, cat(times(50, pass()), times(50, failed(msg))))
		if _, ok := got[KindQuality]; ok {
			t.Errorf("a quality insight from failed results: %s", got[KindQuality].Title)
		}
		if _, ok := got[KindRegression]; ok {
			t.Errorf("a regression from failed results: %s", got[KindRegression].Title)
		}
		h, ok := got[KindEvaluationHealth]
		if !ok || h.Severity != SeverityCritical {
			t.Fatalf("health %+v, want critical: the last 50 runs all failed", h)
		}
		if h.Evidence.Measured.K != 50 || h.Evidence.Measured.N != 50 {
			t.Errorf("measured %d of %d, want the 50 newest runs, all failed", h.Evidence.Measured.K, h.Evidence.Measured.N)
		}
		c := h.Evidence.Causes
		if len(c) != 1 || c[0].Code != sdk.CodeJudgeError || c[0].Count != 50 || !strings.Contains(h.Title, "429") {
			t.Errorf("causes %+v, title %q: want judge_error x50 and the 429 in the title", c, h.Title)
		}
	})
	t.Run("some failures", func(t *testing.T) {
		got := assess(t, Config{}, mix(100, 3, pass(), failed("timeout")))
		if got[KindEvaluationHealth].Severity != SeverityWarning || got[KindQuality].Severity != "" {
			t.Errorf("33 failed of 100: health %q, quality %q; want a health warning and no quality insight",
				got[KindEvaluationHealth].Severity, got[KindQuality].Severity)
		}
	})
	t.Run("skipped is never critical", func(t *testing.T) {
		got := assess(t, Config{}, times(100, skipped()))
		if h := got[KindEvaluationHealth]; h.Severity != SeverityWarning || h.Evidence.Causes[0].Status != sdk.StatusSkipped {
			t.Errorf("100 skipped: %+v, want a warning naming the skip reason", h)
		}
		if len(got) != 1 {
			t.Errorf("%d insights, want only evaluation health", len(got))
		}
	})
}

func TestGrossFailures(t *testing.T) {
	t.Run("spike", func(t *testing.T) {
		// 100 good runs, then 24 of which 8 are gross failures, 8 of the newest 20.
		rs := cat(times(100, pass()), mix(20, 5, pass(), gross("error_text")),
			[]row{gross("empty_output"), gross("error_text"), gross("error_text"), gross("error_text")})
		got := assess(t, Config{}, rs)
		g, ok := got[KindGrossFailures]
		if !ok || g.Severity != SeverityCritical {
			t.Fatalf("gross %+v, want critical", g)
		}
		if g.Evidence.Flags["error_text"] != 7 || g.Evidence.Flags["empty_output"] != 1 || g.Evidence.Measured.K != 8 {
			t.Errorf("flags %v, measured %+v: want error_text 7 and empty_output 1", g.Evidence.Flags, g.Evidence.Measured)
		}
		if g.Evidence.Worst[0].RunID != "run-0124" || g.Evidence.Worst[0].Flags[0] != "error_text" {
			t.Errorf("worst %+v, want the newest gross failure first", g.Evidence.Worst[0])
		}
	})
	t.Run("other flags are not gross", func(t *testing.T) {
		rs := cat(times(100, pass()), times(20, row{status: sdk.StatusScored, score: 0.3, flags: []string{"refusal"}}))
		if _, ok := assess(t, Config{}, rs)[KindGrossFailures]; ok {
			t.Error("refusals raised a gross-failure insight")
		}
	})
	t.Run("one error is nothing", func(t *testing.T) {
		if got := assess(t, Config{}, cat(times(99, pass()), []row{gross("error_text")})); len(got) != 0 {
			t.Errorf("one error text in 100 runs raised %v", got)
		}
	})
}

func TestRegression(t *testing.T) {
	// The previous window passes everything; the last 100 runs fail one in four.
	got := assess(t, Config{}, cat(times(100, pass()), mix(100, 4, pass(), fail())))
	r, ok := got[KindRegression]
	if !ok || r.Severity != SeverityCritical {
		t.Fatalf("regression %+v, want critical", r)
	}
	if r.Evidence.Previous == nil || r.Evidence.Previous.Passed != 100 || r.Evidence.Window.NotPassed != 25 {
		t.Errorf("evidence previous %+v, window %+v: want 100 passed before, 25 failing now", r.Evidence.Previous, r.Evidence.Window)
	}
	if !strings.Contains(r.Title, "from 100% to 75%") {
		t.Errorf("title %q", r.Title)
	}
	// Without a previous window there is nothing to regress from.
	if _, ok := assess(t, Config{}, mix(100, 4, pass(), fail()))[KindRegression]; ok {
		t.Error("a regression without a previous window")
	}
}

// TestVersionChange: a scorer whose version changed within the window raises no critical
// insight until its new version has scored a full window, and is never compared with its
// previous version.
func TestVersionChange(t *testing.T) {
	v2fail := fail()
	v2fail.version = "2.0.0"
	t.Run("part of a window", func(t *testing.T) {
		got := assess(t, Config{}, cat(times(160, pass()), times(40, v2fail)))
		q := got[KindQuality]
		if q.Severity != SeverityWarning || !strings.Contains(q.Evidence.Capped, "version changed") {
			t.Fatalf("quality %q capped %q: want a warning capped by the version change", q.Severity, q.Evidence.Capped)
		}
		if q.Evidence.ScorerVersion != "2.0.0" || q.Evidence.Window.Runs != 40 || q.Evidence.Window.OtherVersions != 60 {
			t.Errorf("evidence %+v: want version 2.0.0 measured on its 40 runs, 60 of another version", q.Evidence.Window)
		}
		if _, ok := got[KindRegression]; ok {
			t.Error("a regression across scorer versions")
		}
	})
	t.Run("full window", func(t *testing.T) {
		got := assess(t, Config{}, cat(times(100, pass()), times(100, v2fail)))
		if got[KindQuality].Severity != SeverityCritical || got[KindQuality].Evidence.Capped != "" {
			t.Errorf("quality %+v, want critical once 2.0.0 has a full window", got[KindQuality])
		}
		if _, ok := got[KindRegression]; ok {
			t.Error("a regression across scorer versions")
		}
	})
	t.Run("old version's failures are not blamed on the new", func(t *testing.T) {
		v2pass := pass()
		v2pass.version = "2.0.0"
		got := assess(t, Config{}, cat(times(90, fail()), times(40, v2pass)))
		if len(got) != 0 {
			t.Errorf("insights %v from the previous version's results", got)
		}
	})
}

func TestExperimental(t *testing.T) {
	cfg := Config{Experimental: []string{"prescreen"}}
	q := assess(t, cfg, times(60, fail()))[KindQuality]
	if q.Severity != SeverityWarning || !strings.Contains(q.Evidence.Capped, "experimental") {
		t.Fatalf("experimental, 60 runs: %q capped %q, want a capped warning", q.Severity, q.Evidence.Capped)
	}
	if q := assess(t, cfg, times(100, fail()))[KindQuality]; q.Severity != SeverityCritical {
		t.Errorf("experimental with a full window: %q, want critical", q.Severity)
	}
	if q := assess(t, Config{}, times(60, fail()))[KindQuality]; q.Severity != SeverityCritical {
		t.Errorf("not experimental, 60 runs: %q, want critical", q.Severity)
	}
}

// TestLowAgreement: a version whose measured kappa with the labels is under 0.4 raises no
// critical insight; another version of the scorer, or a kappa of 0.4, does.
func TestLowAgreement(t *testing.T) {
	low := Config{Agreements: []Agreement{{Scorer: "prescreen", Version: "1.0.0", Kappa: 0.31, Runs: 40}}}
	q := assess(t, low, times(100, fail()))[KindQuality]
	if q.Severity != SeverityWarning || !strings.Contains(q.Evidence.Capped, "kappa 0.31 on 40 runs, under 0.4") {
		t.Fatalf("kappa 0.31: %q capped %q, want a capped warning", q.Severity, q.Evidence.Capped)
	}
	for name, cfg := range map[string]Config{
		"another version": {Agreements: []Agreement{{Scorer: "prescreen", Version: "0.9.0", Kappa: 0.1, Runs: 40}}},
		"another scorer":  {Agreements: []Agreement{{Scorer: "relevancy", Version: "1.0.0", Kappa: 0.1, Runs: 40}}},
		"kappa 0.4":       {Agreements: []Agreement{{Scorer: "prescreen", Version: "1.0.0", Kappa: 0.4, Runs: 40}}},
	} {
		if q := assess(t, cfg, times(100, fail()))[KindQuality]; q.Severity != SeverityCritical {
			t.Errorf("%s: %q capped %q, want critical", name, q.Severity, q.Evidence.Capped)
		}
	}
}

// TestLatestResultCounts: when a run was scored twice, the newest result counts.
func TestLatestResultCounts(t *testing.T) {
	rs := build(times(40, fail())...)
	for _, r := range build(times(40, pass())...) {
		r.CreatedAt = r.CreatedAt.Add(time.Hour)
		rs = append(rs, r)
	}
	got, err := Assess(Config{}, "a", "prescreen", rs, nil)
	if err != nil || len(got) != 0 {
		t.Errorf("rescored runs: %v %v, want no insight (the newer results pass)", got, err)
	}
}

func TestWindowConfigurable(t *testing.T) {
	// 30 failures 50 runs ago: outside a window of 40, inside the default 100.
	rs := cat(times(30, fail()), times(50, pass()))
	if got := assess(t, Config{}, rs); got[KindQuality].Severity != SeverityCritical {
		t.Errorf("window 100: %v, want critical", got[KindQuality].Severity)
	}
	if got := assess(t, Config{Window: 40}, rs); len(got) != 0 {
		t.Errorf("window 40: %v, want nothing", got)
	}
}

// TestLifecycle: one insight per key, opened, updated as evidence arrives, escalated,
// held at the boundary and resolved when the condition clears.
func TestLifecycle(t *testing.T) {
	var open []Insight
	var all []row
	step := func(add []row) Changes {
		t.Helper()
		all = append(all, add...)
		rows := build(all...)
		now := rows[len(rows)-1].CreatedAt
		ch, err := Update(Config{}, "email-triage", "prescreen", rows, open, now)
		if err != nil {
			t.Fatal(err)
		}
		// Store and reload through JSON, as the service does.
		b, err := json.Marshal(ch.Apply(open))
		if err != nil {
			t.Fatal(err)
		}
		open = nil
		if err := json.Unmarshal(b, &open); err != nil {
			t.Fatal(err)
		}
		return ch
	}
	quality := func() *Insight {
		for i := range open {
			if open[i].Kind == KindQuality {
				return &open[i]
			}
		}
		return nil
	}

	if ch := step(times(100, pass())); !ch.Empty() {
		t.Fatalf("healthy runs: %+v", ch)
	}
	ch := step(mix(40, 2, pass(), fail())) // 20 of the last 100 fail
	if len(ch.Opened) == 0 || quality() == nil || quality().Severity != SeverityWarning {
		t.Fatalf("opened %+v, want a quality warning", ch.Opened)
	}
	opened := quality().OpenedAt
	if len(ch.NewCritical()) != 0 {
		t.Errorf("new critical %v on a warning", ch.NewCritical())
	}
	ch = step(times(20, fail())) // 40 of the last 100
	if quality().Severity != SeverityCritical || !quality().OpenedAt.Equal(opened) {
		t.Fatalf("after more failures: %+v, want the same insight, critical", quality())
	}
	crit := ch.NewCritical()
	if len(crit) == 0 || len(ch.Opened) != 0 && ch.Opened[0].Kind == KindQuality {
		t.Errorf("escalation: new critical %v, opened %v; want the quality insight updated to critical", crit, ch.Opened)
	}
	if ch := step(nil); !ch.Empty() {
		t.Errorf("no new results, changes %+v", ch)
	}
	// Good runs push the failures out of the window, slowly: the insight is updated and
	// held while the estimate stays above the warning level, then resolved.
	held := false
	for range 100 {
		ch = step([]row{pass()})
		if q := quality(); q != nil && q.Evidence.Held {
			held = true
		}
		if q := quality(); q == nil {
			break
		}
	}
	if quality() != nil || !held {
		t.Fatalf("after 100 good runs: %+v held %v, want resolved after being held", quality(), held)
	}
	if len(ch.Resolved) == 0 || ch.Resolved[0].ResolvedAt == nil {
		t.Errorf("resolved %+v, want ResolvedAt set", ch.Resolved)
	}
}

func TestReconcileRejectsDuplicates(t *testing.T) {
	in := Insight{Agent: "a", Scorer: "s", Kind: KindQuality, Severity: SeverityWarning}
	if _, err := Reconcile([]Insight{in, in}, nil, t0); err == nil || !strings.Contains(err.Error(), "one open insight per") {
		t.Errorf("err = %v", err)
	}
	if _, err := Reconcile(nil, []Insight{in, in}, t0); err == nil {
		t.Error("two desired insights with one key accepted")
	}
}

// TestUpdateLeavesOtherSeries: an assessment of one scorer never resolves another's.
func TestUpdateLeavesOtherSeries(t *testing.T) {
	other := Insight{Agent: "email-triage", Scorer: "relevancy", Kind: KindQuality, Severity: SeverityCritical}
	ch, err := Update(Config{}, "email-triage", "prescreen", build(times(100, pass())...), []Insight{other}, t0)
	if err != nil || !ch.Empty() {
		t.Errorf("changes %+v err %v, want none", ch, err)
	}
}

// refusal is a scored failure that is not a gross failure: a matter of judgement.
func refusal() row { return row{status: sdk.StatusScored, score: 0, flags: []string{"refusal"}} }

// TestOneFindingOneCard is the README's bad deploy: after a clean window, the newest 100
// runs hold 30 gross failures (all among the newest 39) and 10 refusals. Each card says one
// thing: the gross failures, counted over the window the card shows and listed on their
// own card; and one card for the failure rate, whose worst runs are the other failures.
func TestOneFindingOneCard(t *testing.T) {
	newest := cat(times(60, pass()), times(10, refusal()), mix(10, 2, gross("error_text"), gross("empty_output")),
		times(19, gross("error_text")), []row{gross("empty_output")})
	got := assess(t, Config{}, cat(times(100, pass()), newest))
	g, ok := got[KindGrossFailures]
	if !ok || g.Severity != SeverityCritical {
		t.Fatalf("gross failures %+v, want critical", g)
	}
	if want := "30 of the last 100 runs of email-triage are gross failures (error_text 24, empty_output 6), by prescreen, all in the newest "; !strings.HasPrefix(g.Title, want) {
		t.Errorf("gross title %q, want prefix %q: the count of the window the card shows", g.Title, want)
	}
	if g.Evidence.Measured.N >= 100 || !strings.Contains(g.Evidence.Measured.What, fmt.Sprintf("in the newest %d runs", g.Evidence.Measured.N)) {
		t.Errorf("measured %+v: the spike says where it was measured", g.Evidence.Measured)
	}
	_, quality := got[KindQuality]
	_, regression := got[KindRegression]
	if quality == regression {
		t.Fatalf("quality %v, regression %v: want one card for the failure rate: %v", quality, regression, got)
	}
	rate := got[KindRegression]
	if quality {
		rate = got[KindQuality]
	}
	if rate.Severity != SeverityCritical || !strings.Contains(rate.Title, "30 of the 40 are gross failures") {
		t.Errorf("%s %s %q: want critical, naming the gross failures it leaves to their card", rate.Kind, rate.Severity, rate.Title)
	}
	grossRuns := map[string]bool{}
	for _, w := range g.Evidence.Worst {
		grossRuns[w.RunID] = true
	}
	for _, w := range rate.Evidence.Worst {
		if grossRuns[w.RunID] || len(w.Flags) != 1 || w.Flags[0] != "refusal" {
			t.Errorf("%s lists %s %v; want the refusals, not the gross failures' card again", rate.Kind, w.RunID, w.Flags)
		}
	}
	if len(rate.Evidence.Worst) == 0 {
		t.Errorf("%s lists no run", rate.Kind)
	}

	// When every failure is a gross failure, their card says it all.
	got = assess(t, Config{}, cat(times(100, pass()), times(70, pass()), mix(30, 1, gross("error_text"), gross("error_text"))))
	if _, ok := got[KindGrossFailures]; !ok || len(got) != 1 {
		t.Errorf("%d insights (%v), want the gross failures' alone", len(got), kinds(got))
	}
}

// TestQualityOrRegression: a failure rate that is too high and that rose is one card. The
// more severe of the two wins; on a tie, the one already open stays (a second card for
// the same failures would alert twice), else quality, which says what the window before
// was.
func TestQualityOrRegression(t *testing.T) {
	rs := cat(times(100, pass()), mix(100, 2, pass(), fail())) // 50% failing after 0%: both critical
	for _, c := range []struct {
		name string
		open []Kind
		want Kind
	}{
		{"none open: quality", nil, KindQuality},
		{"quality open: it stays", []Kind{KindQuality}, KindQuality},
		{"regression open: it stays", []Kind{KindRegression}, KindRegression},
	} {
		t.Run(c.name, func(t *testing.T) {
			var open []Insight
			for _, k := range c.open {
				open = append(open, Insight{Agent: "email-triage", Scorer: "prescreen", Kind: k, Severity: SeverityCritical})
			}
			all, err := Assess(Config{}, "email-triage", "prescreen", build(rs...), open)
			if err != nil {
				t.Fatal(err)
			}
			var got []Kind
			for _, in := range all {
				got = append(got, in.Kind)
			}
			if len(got) != 1 || got[0] != c.want {
				t.Errorf("insights %v, want %s alone", got, c.want)
			}
		})
	}
	// When the two differ in severity, the more severe is kept, whichever it is.
	for _, rs := range [][]row{
		cat(mix(100, 4, pass(), fail()), mix(100, 3, pass(), fail())),  // 25% then 33%: quality above, a small rise
		cat(mix(100, 10, pass(), fail()), mix(100, 5, pass(), fail())), // 10% then 20%
		cat(mix(100, 20, pass(), fail()), mix(100, 8, pass(), fail())), // 5% then 12%
		cat(times(100, pass()), mix(100, 2, pass(), fail())),           // 0% then 50%
	} {
		s, err := newSeries(Config{}.WithDefaults(), "email-triage", "prescreen", build(rs...), nil)
		if err != nil {
			t.Fatal(err)
		}
		q, qok := s.quality()
		r, rok := s.regression()
		got := assess(t, Config{}, rs)
		_, gq := got[KindQuality]
		_, gr := got[KindRegression]
		switch {
		case qok && rok && q.Severity.rank() >= r.Severity.rank():
			if !gq || gr || got[KindQuality].Evidence.Previous == nil || !strings.Contains(got[KindQuality].Title, "of the 100 runs before failed") {
				t.Errorf("quality %s, regression %s: kept %v (%q), want quality with the window before", q.Severity, r.Severity, kinds(got), got[KindQuality].Title)
			}
		case qok && rok:
			if gq || !gr {
				t.Errorf("quality %s, regression %s: kept %v, want the regression", q.Severity, r.Severity, kinds(got))
			}
		case gq != qok || gr != rok:
			t.Errorf("quality %v, regression %v, alone: kept %v", qok, rok, kinds(got))
		}
	}
}

func kinds(m map[Kind]Insight) []Kind {
	var out []Kind
	for k := range m {
		out = append(out, k)
	}
	return out
}
