package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/service/web"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

// deepRunBody is the dashboard's repro: a run whose metadata holds two chains of n nested
// arrays (36 KB for 9,000), which an older server stored as it came.
func deepRunBody(n int) string {
	chain := strings.Repeat("[", n) + strings.Repeat("]", n)
	return `{"id": "deep", "agent": "bot", "input": "q", "output": "a", "metadata": {"a": ` + chain + `, "b": ` + chain + `}}`
}

// hugeRunBody is a run large every way: a 3 MiB output, 200 passages (the first 20 KiB),
// 5,000 metadata keys.
func hugeRunBody() string {
	var b strings.Builder
	b.WriteString(`{"id": "huge", "agent": "bot", "input": [{"role": "user", "content": "` + strings.Repeat("i", 100<<10) + `"}], "output": "` + strings.Repeat("o", 3<<20) + `", "context": [`)
	for i := range 200 {
		text := strings.Repeat("p", 100)
		if i == 0 {
			b.WriteString(`{"id": "p0", "text": "` + strings.Repeat("p", 20<<10) + `"}`)
			continue
		}
		fmt.Fprintf(&b, `, {"id": "p%d", "text": %q}`, i, text)
	}
	b.WriteString(`], "metadata": {`)
	for i := range 5000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%04d": %q`, i, strings.Repeat("m", 100))
	}
	b.WriteString(`}}`)
	return b.String()
}

// deepRunService is an open service holding, as an older server would have stored them
// (straight into the store, past today's import checks), the deep and the huge run, and
// results on the deep run: 25 evaluations' of prescreen and 100 of other scorers, one
// with 10,000 flags and dimensions and every reason 10 KB.
type deepRunService struct {
	srv *httptest.Server
	ev  string // the evaluation holding the large result
}

func newDeepRunService(t testing.TB, dsn string) *deepRunService {
	t.Helper()
	ctx := context.Background()
	env := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true})
	tn, err := env.Service.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pks, err := env.Store.PutRuns(ctx, tn.ID, []store.NewRun{
		{ID: "deep", Agent: "bot", Body: json.RawMessage(deepRunBody(9000))},
		{ID: "huge", Agent: "bot", Body: json.RawMessage(hugeRunBody())},
	})
	if err != nil || pks[0] == 0 || pks[1] == 0 {
		t.Fatalf("store the runs: %v %v", pks, err)
	}
	reason := strings.Repeat("r", 10<<10)
	flags, dims := make([]string, 10000), map[string]float64{}
	for i := range flags {
		flags[i] = fmt.Sprintf("flag_%05d", i)
		dims[fmt.Sprintf("dim_%05d", i)] = 0.5
	}
	var rs []store.Result
	first := ""
	for i := range 25 {
		ev, err := env.Service.CreateEvaluation(ctx, tn, "bot", service.EvaluationRequest{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		sev, err := env.Store.Evaluation(ctx, tn.ID, ev.ID)
		if err != nil {
			t.Fatal(err)
		}
		res := sdk.Scored(1, reason)
		if i == 0 {
			first = ev.ID
			res.Flags, res.Dimensions = flags, dims
			for j := range 100 {
				rs = append(rs, result(t, tn, sev.PK, pks[0], fmt.Sprintf("other_%03d", j), sdk.Scored(1, reason)))
			}
		}
		rs = append(rs, result(t, tn, sev.PK, pks[0], "prescreen", res))
	}
	if _, err := env.Store.InsertResults(ctx, rs); err != nil {
		t.Fatal(err)
	}
	h, err := web.New(env.Service, web.Options{Open: true, Next: api.New(env.Service, api.Options{Open: true})})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &deepRunService{srv: srv, ev: first}
}

func result(t testing.TB, tn store.Tenant, ev, run int64, scorer string, res sdk.Result) store.Result {
	body, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return store.Result{TenantID: tn.ID, EvaluationPK: ev, RunPK: run, Scorer: scorer, ScorerVersion: "1", Status: string(res.Status), Score: res.Score, Passed: res.Passed, Body: body}
}

// maxTestPage bounds every page below, well under the dashboard's own 4 MiB: what the
// bounds let through of the largest run and 100 results with 10 KB reasons.
const maxTestPage = 1 << 20

// TestDeepStoredRunPages: the run page and the review page of a run stored with metadata
// 9,000 levels deep, and of one huge every way, render within a bound and say what they
// cut, with a link to the whole run through the API; so does the evaluation page of a
// result with 10,000 flags and dimensions. Before, the deep run's page was 324 MB.
func TestDeepStoredRunPages(t *testing.T) {
	servicetest.Backends(t, func(t *testing.T, dsn string) {
		s := newDeepRunService(t, dsn)
		b := newBrowser(t, s.srv.URL)
		for _, c := range []struct {
			path string
			want []string
		}{
			{"/runs/deep", []string{"2 values nested deeper than 8 levels shown as […] or {…}", `<a href="/v1/runs/deep">`,
				`id="older-results">The 25 oldest results are not shown, only the newest 100`, "[cut: the first 4 KiB of 10 KiB are shown", "… 9950 more"}},
			{"/review/prescreen?labeller=ann&run=deep", []string{"2 values nested deeper than 8 levels shown as […] or {…}", `<a href="/v1/runs/deep">`,
				"The 5 oldest results of prescreen are not shown, only the newest 20", "[cut: the first 4 KiB of 10 KiB are shown"}},
			{"/runs/huge", []string{"Cut: the first 32 KiB of 3 MiB are shown.", "Cut: 150 passages past the first 50 not shown.", "Cut: the first 8 KiB of 20.0 KiB are shown.",
				"Cut: 1 string cut to 2 KiB.", "Cut: 4900 items past the first 100 of an array or object left out.", `<a href="/v1/runs/huge">`}},
			{"/review/prescreen?labeller=ann&run=huge", []string{"Cut: the first 32 KiB of 3 MiB are shown.", `<a href="/v1/runs/huge">`}},
			{"/evaluations/" + s.ev, []string{"… 9950 more"}},
			{"/agents/bot", []string{`href="/runs/deep"`, `href="/runs/huge"`}},
		} {
			p := b.get(c.path)
			if p.status != 200 || len(p.body) > maxTestPage {
				t.Errorf("GET %s: %d, %d bytes; want 200 within %d", c.path, p.status, len(p.body), maxTestPage)
				continue
			}
			t.Logf("GET %s: %d bytes", c.path, len(p.body))
			for _, w := range c.want {
				if !strings.Contains(p.body, w) {
					t.Errorf("GET %s does not say %q", c.path, w)
				}
			}
		}
	})
}
