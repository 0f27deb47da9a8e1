package web_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/otellibstest"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/service/web"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// TestIngestPage: the dashboard's ingest page shows what a tenant's OpenTelemetry
// exports brought in: the AI SDK capture's spans and runs, a span sent after its trace's
// runs were made as dropped (late) with its trace id and what that means, and nothing of
// another tenant's.
func TestIngestPage(t *testing.T) {
	servicetest.Backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		env := servicetest.New(t, dsn, servicetest.Options{NoWorkers: true})
		svc := env.Service
		var keys []string
		var tenants []store.Tenant
		for _, name := range []string{"a", "b"} {
			tn, err := svc.CreateTenant(ctx, name, store.Policy{})
			if err != nil {
				t.Fatal(err)
			}
			key, _, err := svc.CreateKey(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			keys, tenants = append(keys, key), append(tenants, tn)
		}
		c := otellibstest.Load(t, "ai-sdk")
		for _, td := range c.Traces {
			if _, err := svc.IngestTraces(ctx, tenants[0], td); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := svc.CompleteTraces(ctx, time.Now().Add(service.DefaultTraceQuiet+time.Second)); err != nil {
			t.Fatal(err)
		}
		// One span sent again under a new id, after its trace's runs were made.
		late := c.Traces[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
		trace := late.TraceID().String()
		id := late.SpanID()
		id[7] ^= 0xff
		late.SetSpanID(id)
		if res, err := svc.IngestTraces(ctx, tenants[0], c.Traces[0]); err != nil || res.Rejected != 1 {
			t.Fatalf("the late span: %+v, %v", res, err)
		}

		h, err := web.New(svc, web.Options{Next: api.New(svc, api.Options{})})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		b := newBrowser(t, srv.URL)
		b.signIn(keys[0])
		p := b.get("/ingest")
		for _, want := range []string{`<td id="spans">20</td>`, `<td id="runs">3</td>`, `<td id="waiting-spans">0</td>`,
			`<tr data-reason="late"><td>late</td><td>1</td><td>0</td>`, "arrived after its run was made", `<code class="trace">` + trace + `</code>`,
			`<a href="/ingest" class="here">Ingest</a>`} {
			if !strings.Contains(p.body, want) {
				t.Errorf("tenant a's ingest page lacks %q:\n%s", want, p.body)
			}
		}
		other := newBrowser(t, srv.URL)
		other.signIn(keys[1])
		p = other.get("/ingest")
		if p.status != 200 || !strings.Contains(p.body, `<td id="spans">0</td>`) || !strings.Contains(p.body, `id="no-drops"`) || strings.Contains(p.body, trace) {
			t.Errorf("tenant b's ingest page shows a's: %d\n%s", p.status, p.body)
		}
	})
}
