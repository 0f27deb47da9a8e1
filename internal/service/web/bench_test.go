package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/web"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// BenchmarkAgentPage renders an agent's page (its trend over up to 10,000 runs, a page of
// runs, its insights and evaluations) for agents of 1,000 and 10,000 evaluated runs in the
// same store: the page grows with the runs its chart covers, not with anything else.
func BenchmarkAgentPage(b *testing.B) {
	env := servicetest.New(b, filepath.Join(b.TempDir(), "scorekit.db"), servicetest.Options{})
	ctx := context.Background()
	tenant, err := env.Service.Open(ctx) // the dashboard below runs open
	if err != nil {
		b.Fatal(err)
	}
	sizes := map[string]int{"runs-1000": 1000, "runs-10000": 10000}
	for agent, n := range sizes {
		seedLoad(b, env, tenant, agent, n)
	}
	if ok, err := env.Service.WaitInsights(ctx, tenant, "", time.Minute); err != nil || !ok {
		b.Fatalf("insights not up to date: %v", err)
	}
	h, err := web.New(env.Service, web.Options{Open: true, Next: api.New(env.Service, api.Options{Open: true})})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, agent := range []string{"runs-1000", "runs-10000"} {
		b.Run(agent, func(b *testing.B) {
			var bytes int64
			for b.Loop() {
				resp, err := http.Get(srv.URL + "/agents/" + agent)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("GET /agents/%s: %s", agent, resp.Status)
				}
				bytes = n
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/page")
			b.ReportMetric(float64(bytes), "bytes/page")
			b.ReportMetric(float64(sizes[agent]), "runs")
		})
	}
}

// BenchmarkDeepRunPage serves the run page and the review page of the dashboard's repro (a
// run stored with two chains of 9,000 nested arrays in its metadata, and 125 results) and
// reports each page's size; -benchmem's B/op is what the server allocated for it (the
// client keeps nothing).
func BenchmarkDeepRunPage(b *testing.B) {
	s := newDeepRunService(b, filepath.Join(b.TempDir(), "scorekit.db"))
	for _, c := range []struct{ name, path string }{{"run", "/runs/deep"}, {"review", "/review/prescreen?labeller=ann&run=deep"}} {
		b.Run(c.name, func(b *testing.B) {
			var bytes int64
			for b.Loop() {
				resp, err := http.Get(s.srv.URL + c.path)
				if err != nil {
					b.Fatal(err)
				}
				bytes, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("GET %s: %s", c.path, resp.Status)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/page")
			b.ReportMetric(float64(bytes), "bytes/page")
		})
	}
}
