package web_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/scorekit/scorekit/internal/otellibstest"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/web"
)

// Chromium is Debian's chromium, which the browser test drives.
const Chromium = "/usr/bin/chromium"

var updateScreenshot = flag.Bool("update-screenshot", false, "write docs/dashboard.png (the README's screenshot) from the agent page")

// screenshots is where each page's screenshot is kept (a CI artifact; git-ignored).
var screenshots = filepath.Join("..", "..", "..", "build", "dashboard")

// The dashboard in a real browser (Debian's headless chromium, driven over the DevTools
// protocol): sign in with a key through the form, then load each page of a seeded
// instance, check the rendered DOM for the agents, the insight and the charts, keep a
// screenshot of each, and fail on any console error or exception.
func TestDashboardInBrowser(t *testing.T) {
	ctx := chromium(t)
	in := seed(t, filepath.Join(t.TempDir(), "scorekit.db"), 10000, web.Options{})
	if err := os.MkdirAll(screenshots, 0o755); err != nil {
		t.Fatal(err)
	}

	// Every console message of the page, gathered as it comes.
	var (
		mu       sync.Mutex
		problems []string
		console  sync.WaitGroup
	)
	lctx, stopListening := context.WithCancel(ctx)
	console.Add(1)
	go func() {
		defer console.Done()
		for m, err := range chromedp.Console(lctx) {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line))
				mu.Unlock()
			}
		}
	}()

	step := func(name string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	dom := func() string {
		t.Helper()
		html, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html")))
		if err != nil {
			t.Fatal(err)
		}
		return html
	}
	count := func(css string) int {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		nodes, err := chromedp.Run(sctx, chromedp.Nodes(chromedp.CSSAll(css), chromedp.AtLeast(0)))
		if err != nil {
			t.Fatalf("query %s: %v", css, err)
		}
		return len(nodes)
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(screenshots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	visit := func(name, path string) string {
		t.Helper()
		step(name, chromedp.Navigate(in.srv.URL+path), chromedp.WaitVisible(chromedp.CSS("footer")))
		shot(name)
		return dom()
	}

	// Sign in through the form.
	html := visit("01-login", "/")
	if !strings.Contains(html, `id="key"`) {
		t.Fatalf("signed out, / does not show the sign-in form:\n%s", html)
	}
	step("sign in", chromedp.SendKeys(chromedp.ID("key"), in.keyA), chromedp.Click(chromedp.ID("signin")),
		chromedp.WaitVisible(chromedp.CSS("section.agent")))
	if loc, err := chromedp.Run(ctx, chromedp.Location()); err != nil || loc != in.srv.URL+"/" {
		t.Fatalf("after signing in the browser is at %q (%v); want /", loc, err)
	}
	if strings.Contains(dom(), in.keyA) {
		t.Fatal("the key is in the page after signing in")
	}

	// The agents, each with its scorer's numbers and a trend chart.
	html = visit("02-agents", "/")
	for _, agent := range []string{"assistant", "email-triage", loadAgent} {
		if !strings.Contains(html, `data-agent="`+agent+`"`) {
			t.Errorf("the overview lacks agent %s", agent)
		}
	}
	if n := count("section.agent svg.chart polyline.pass"); n < 3 {
		t.Errorf("%d trend lines on the overview; want one per agent", n)
	}
	if !regexp.MustCompile(`\d+ critical and \d+ warning insights? open`).MatchString(html) {
		t.Errorf("the overview does not count the open insights")
	}

	// The broken agent: its trend falls, and the critical insight shows its evidence.
	html = visit("03-agent-email-triage", "/agents/email-triage")
	if count("figure.trend svg.chart polyline.mean") < 1 || count("figure.trend svg.chart circle.dot") < 10 {
		t.Errorf("the agent page has no trend chart")
	}
	if count("article.insight.critical dl.evidence") < 1 || count("article.insight.critical table.worst tbody tr") < 1 {
		t.Errorf("the agent page shows no critical insight with evidence")
	}
	if !strings.Contains(html, in.critical.Title) {
		t.Errorf("the agent page lacks the insight %q", in.critical.Title)
	}
	if *updateScreenshot {
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "..", "..", "docs", "dashboard.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The quiet agent: no insight, a flat trend.
	html = visit("04-agent-assistant", "/agents/assistant")
	if !strings.Contains(html, `id="no-insights"`) || count("article.insight") != 0 {
		t.Errorf("the assistant shows an insight; its runs are correct")
	}

	html = visit("05-insights", "/insights?severity=critical")
	if count("article.insight.critical") < 1 || !strings.Contains(html, "email-triage") {
		t.Errorf("the insights page lacks the critical insight")
	}
	html = visit("06-insight", "/insights/"+in.critical.ID)
	if !strings.Contains(html, in.critical.Title) || count("dl.evidence dt") < 3 {
		t.Errorf("the insight page lacks its evidence")
	}

	// The broken deploy's evaluation: 100 runs, a page of 50, reasons and flags.
	html = visit("07-evaluation", "/evaluations/"+in.evaluation)
	if n := count("table.results tbody tr"); n != 50 {
		t.Errorf("the evaluation page shows %d results; want a page of 50", n)
	}
	if !strings.Contains(html, "error_text") || !strings.Contains(html, "page 1 of 2") {
		t.Errorf("the evaluation page lacks the flags or its pages")
	}

	html = visit("08-run", "/runs/email-triage-0301")
	if count("table.results tbody tr") < 1 || !strings.Contains(html, "refusal") {
		t.Errorf("the run page lacks its result")
	}

	// 10,000 runs: the page renders a page of them and a chart of them all.
	html = visit("09-agent-10000-runs", "/agents/"+loadAgent)
	if n := count("table.runs tbody tr"); n != 50 {
		t.Errorf("the agent with 10,000 runs lists %d; want a page of 50", n)
	}
	if !strings.Contains(html, "the chart covers the newest 10000") || count("figure.trend svg.chart circle.dot") != 60 {
		t.Errorf("the chart of the agent with 10,000 runs does not cover them in 60 points")
	}
	step("older runs", chromedp.Click(chromedp.ID("older")), chromedp.WaitVisible(chromedp.CSS("footer")))
	if !strings.Contains(dom(), ">load-09949<") {
		t.Errorf("the older page does not start at the 51st newest run")
	}

	// What the tenant's OpenTelemetry exports brought in: the AI SDK capture's spans and
	// runs, and a span sent after its trace's runs were made, dropped as late with its trace.
	octx := context.Background()
	c := otellibstest.Load(t, "ai-sdk")
	for _, td := range c.Traces {
		if _, err := in.env.Service.IngestTraces(octx, in.a, td); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := in.env.Service.CompleteTraces(octx, time.Now().Add(service.DefaultTraceQuiet+time.Second)); err != nil {
		t.Fatal(err)
	}
	late := c.Traces[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	lateTrace := late.TraceID().String()
	id := late.SpanID()
	id[7] ^= 0xff
	late.SetSpanID(id)
	if res, err := in.env.Service.IngestTraces(octx, in.a, c.Traces[0]); err != nil || res.Rejected != 1 {
		t.Fatalf("the late span: %+v, %v", res, err)
	}
	step("10-ingest", chromedp.Navigate(in.srv.URL+"/ingest"), chromedp.WaitVisible(chromedp.ID("ingest-counts")),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-reason="late"]`)))
	shot("10-ingest")
	text := func(css string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
		if err != nil {
			t.Fatalf("%s: %v", css, err)
		}
		return strings.TrimSpace(v)
	}
	for css, want := range map[string]string{"#spans": "20", "#runs": "3", "#waiting-spans": "0",
		`tr[data-reason="late"] td:nth-child(2)`: "1", `tr[data-reason="late"] code.trace`: lateTrace} {
		if got := text(css); got != want {
			t.Errorf("the ingest page shows %q at %s; want %q", got, css, want)
		}
	}
	if got := text(`tr[data-reason="late"] td:nth-child(4)`); !strings.Contains(got, "arrived after its run was made") {
		t.Errorf("the ingest page does not say what late means: %q", got)
	}
	if count(`nav a.here[href="/ingest"]`) != 1 {
		t.Errorf("the ingest page is not the one the navigation marks")
	}

	// Sign out: the browser is back at the form.
	step("sign out", chromedp.Click(chromedp.CSS("form.logout button")), chromedp.WaitVisible(chromedp.ID("key")))

	stopListening()
	console.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("the browser console reported:\n  %s", strings.Join(problems, "\n  "))
	}
}

// chromium starts Debian's headless chromium for the test, closed when it ends, and
// returns the context of its first tab.
func chromium(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(Chromium); err != nil {
		t.Fatalf("the browser test drives Debian's chromium at %s (%v): install it with apt-get install chromium (make test installs it as root)", Chromium, err)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(Chromium),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox, // CI runs as root
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start %s: %v", Chromium, err)
	}
	return ctx
}
