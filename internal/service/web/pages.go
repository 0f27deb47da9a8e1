package web

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/insights"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/textkit"
	"github.com/scorekit/scorekit/sdk"
)

// Page sizes.
const (
	agentsPerPage   = 20
	runsPerPage     = 50
	insightsPerPage = 50
	resultsPerPage  = 50 // runs of an evaluation per page
	// overviewRuns and agentRuns are how many of an agent's newest runs a trend covers
	// on the overview and on the agent's page; the points are groups of consecutive runs.
	overviewRuns, overviewPoints = 500, 25
	agentRuns, agentPoints       = 10000, 60
)

var pageNames = []string{"login", "error", "overview", "agent", "insights", "insight", "evaluation", "run", "review", "agreement", "ingest"}

func (h *Handler) parse() error {
	funcs := template.FuncMap{
		"pct":          pct,
		"num":          num,
		"pctOf":        func(v float64) string { return fmt.Sprintf("%.1f%%", v*100) },
		"when":         when,
		"clip":         textkit.OneLine,
		"path":         url.PathEscape,
		"query":        url.QueryEscape,
		"trend":        func(v service.SeriesView) template.HTML { return trendChart(v, false) },
		"spark":        func(v service.SeriesView) template.HTML { return trendChart(v, true) },
		"dims":         sortedDims,
		"flags":        sortedFlags,
		"score":        scoreText,
		"outcome":      outcome,
		"isClamp":      func(rule string) bool { return strings.HasPrefix(rule, "clamp_") },
		"add":          func(a, b int) int { return a + b },
		"sub":          func(a, b int) int { return a - b },
		"mul":          func(a, b int) int { return a * b },
		"min":          func(a int, b int64) int64 { return min(int64(a), b) },
		"mul100":       func(v float64) float64 { return v * 100 },
		"resultOf":     resultOf,
		"text":         rawText,
		"cut":          cut,
		"head":         head,
		"more":         more,
		"long":         func(s string) string { return cut(s, maxResultText) },
		"overviewRuns": func() int { return overviewRuns },
		"deref":        deref,
		"firstPeople":  firstPeople,
		"dropReason":   dropReason,
	}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/evidence.html", "templates/"+name+".html")
		if err != nil {
			return fmt.Errorf("web: templates: %w", err)
		}
		h.pages[name] = t
	}
	return nil
}

func pct(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", *v*100)
}

func num(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f", *v)
}

func when(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

type kv struct {
	Name  string
	Value float64
}

// sortedDims lists a result's dimensions by name.
func sortedDims(m map[string]float64) []kv {
	out := make([]kv, 0, len(m))
	for k, v := range m {
		out = append(out, kv{k, v})
	}
	slices.SortFunc(out, func(a, b kv) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// sortedFlags lists an insight's flag counts, the most frequent first.
func sortedFlags(m map[string]int) []kv {
	out := make([]kv, 0, len(m))
	for k, v := range m {
		out = append(out, kv{k, float64(v)})
	}
	slices.SortFunc(out, func(a, b kv) int { return int(b.Value - a.Value) })
	return out
}

// scoreText is a result's score, or its status when it has none: a skipped or failed
// result is never shown as a 0.
func scoreText(status string, score *float64) string {
	if status != string(sdk.StatusScored) || score == nil {
		return status
	}
	return fmt.Sprintf("%.2f", *score)
}

// outcome is the CSS class of a result: pass, fail, skipped or failed.
func outcome(status string, passed *bool) string {
	switch {
	case status == string(sdk.StatusSkipped):
		return "skipped"
	case status != string(sdk.StatusScored):
		return "failed"
	case passed != nil && !*passed:
		return "fail"
	}
	return "pass"
}

// resultOf returns the result of scorer in latest, or nil.
func resultOf(latest map[string]service.ResultView, scorer string) *service.ResultView {
	if r, ok := latest[scorer]; ok {
		return &r
	}
	return nil
}

// agentRow is an agent on the overview.
type agentRow struct {
	service.AgentSummary
	Series   []service.SeriesView
	Critical int
	Warning  int
}

type overviewData struct {
	pageData
	Agents   []agentRow
	Next     string
	Critical int
	Warning  int
}

func (h *Handler) overview(w http.ResponseWriter, r *http.Request, t store.Tenant) {
	ctx := r.Context()
	page, err := h.svc.Agents(ctx, t, agentsPerPage, r.URL.Query().Get("cursor"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	open, err := h.svc.Insights(ctx, t, service.InsightQuery{Limit: service.MaxPage})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := overviewData{pageData: h.page(t, "Agents"), Next: page.Next}
	d.Nav = "agents"
	count := map[string][2]int{}
	for _, in := range open.Insights {
		c := count[in.Agent]
		if in.Severity == insights.SeverityCritical {
			c[0]++
			d.Critical++
		} else {
			c[1]++
			d.Warning++
		}
		count[in.Agent] = c
	}
	for _, a := range page.Agents {
		series, err := h.svc.AgentSeries(ctx, t, a.Name, overviewRuns, overviewPoints)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		d.Agents = append(d.Agents, agentRow{AgentSummary: a, Series: series, Critical: count[a.Name][0], Warning: count[a.Name][1]})
	}
	h.render(w, r, "overview", http.StatusOK, d)
}

type agentData struct {
	pageData
	Agent       string
	Series      []service.SeriesView
	Insights    []store.Insight
	Evaluations []service.EvaluationView
	Runs        service.RunRowsPage
	Cursor      string
}

func (h *Handler) agent(w http.ResponseWriter, r *http.Request, t store.Tenant) {
	ctx := r.Context()
	name := r.PathValue("agent")
	cursor := r.URL.Query().Get("cursor")
	runs, err := h.svc.AgentRuns(ctx, t, name, runsPerPage, cursor)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	series, err := h.svc.AgentSeries(ctx, t, name, agentRuns, agentPoints)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ins, err := h.svc.AgentInsights(ctx, t, name, service.InsightQuery{Limit: insightsPerPage})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	evs, err := h.svc.Evaluations(ctx, t, name, 10)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := agentData{pageData: h.page(t, name), Agent: name, Series: series, Insights: ins.Insights, Evaluations: evs, Runs: runs, Cursor: cursor}
	d.Nav = "agents"
	h.render(w, r, "agent", http.StatusOK, d)
}

type insightsData struct {
	pageData
	Insights []store.Insight
	Severity string
	State    string
	Next     string
}

func (h *Handler) insights(w http.ResponseWriter, r *http.Request, t store.Tenant) {
	q := r.URL.Query()
	page, err := h.svc.Insights(r.Context(), t, service.InsightQuery{Severity: q.Get("severity"), State: q.Get("state"), Limit: insightsPerPage, Cursor: q.Get("cursor")})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	state := q.Get("state")
	if state == "" {
		state = service.InsightsOpen
	}
	d := insightsData{pageData: h.page(t, "Insights"), Insights: page.Insights, Severity: q.Get("severity"), State: state, Next: page.Next}
	d.Nav = "insights"
	h.render(w, r, "insights", http.StatusOK, d)
}

type insightData struct {
	pageData
	Insight store.Insight
}

func (h *Handler) insight(w http.ResponseWriter, r *http.Request, t store.Tenant) {
	in, err := h.svc.Insight(r.Context(), t, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := insightData{pageData: h.page(t, in.Title), Insight: in}
	d.Nav = "insights"
	h.render(w, r, "insight", http.StatusOK, d)
}

type evaluationData struct {
	pageData
	service.EvaluationPage
}

func (h *Handler) evaluation(w http.ResponseWriter, r *http.Request, t store.Tenant) {
	page := 1
	if p := r.URL.Query().Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			h.fail(w, r, fmt.Errorf("page %q: want a number: %w", p, service.ErrInvalid))
			return
		}
		page = n
	}
	ev, err := h.svc.EvaluationResults(r.Context(), t, r.PathValue("id"), page, resultsPerPage)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := evaluationData{pageData: h.page(t, "Evaluation "+ev.ID), EvaluationPage: ev}
	d.Nav = "agents"
	h.render(w, r, "evaluation", http.StatusOK, d)
}

type runData struct {
	pageData
	Run   service.RunView
	Shown runShown
	// Results are the newest maxRunResults of Run.Results; Older counts the others.
	Results []service.ResultView
	Older   int
}

func (h *Handler) run(w http.ResponseWriter, r *http.Request, t store.Tenant) {
	v, err := h.svc.Run(r.Context(), t, r.PathValue("id"), false)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := runData{pageData: h.page(t, "Run "+v.ID), Run: v, Shown: showRun(v.ID, v.Run), Results: v.Results}
	d.Nav = "agents"
	if n := len(v.Results); n > maxRunResults {
		d.Results, d.Older = v.Results[n-maxRunResults:], n-maxRunResults
	}
	h.render(w, r, "run", http.StatusOK, d)
}
