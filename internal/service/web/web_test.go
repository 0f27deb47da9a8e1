package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/pgtest"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/service/web"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// browser is a cookie-keeping client that does not follow redirects.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newBrowser(t *testing.T, base string) *browser {
	jar := newJar(t)
	return &browser{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(method, path string, form url.Values, header map[string]string) page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, header: resp.Header, body: string(out)}
}

func (b *browser) get(path string) page { return b.do("GET", path, nil, nil) }

func (b *browser) signIn(key string) page {
	return b.do("POST", "/login", url.Values{"key": {key}, "next": {"/"}}, map[string]string{"Sec-Fetch-Site": "same-origin"})
}

// Signing in: a key in a posted form (never a URL) opens a cookie session for its tenant;
// a wrong key, a cross-site post and a revoked key do not; signing out ends it.
func TestSignIn(t *testing.T) {
	in := seed(t, filepath.Join(t.TempDir(), "scorekit.db"), 0, web.Options{})
	b := newBrowser(t, in.srv.URL)

	p := b.get("/")
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/login?next=%2F" {
		t.Fatalf("GET / signed out: %d %s; want a redirect to /login", p.status, p.header.Get("Location"))
	}
	p = b.get("/login")
	if p.status != 200 || !strings.Contains(p.body, `<form method="post" action="/login">`) || !strings.Contains(p.body, `type="password"`) {
		t.Fatalf("login page: %d\n%s", p.status, p.body)
	}
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Errorf("CSP %q: want no script at all", csp)
	}
	if p := b.signIn("sk_wrong"); p.status != http.StatusUnauthorized || !strings.Contains(p.body, "unknown or revoked") {
		t.Fatalf("wrong key: %d\n%s", p.status, p.body)
	}
	// Another site cannot post the form (login CSRF).
	for _, h := range []map[string]string{{"Sec-Fetch-Site": "cross-site"}, {"Origin": "http://evil.example"}} {
		if p := b.do("POST", "/login", url.Values{"key": {in.keyA}}, h); p.status != http.StatusForbidden {
			t.Fatalf("cross-origin sign-in %v: %d; want 403", h, p.status)
		}
	}
	if b.cookie() != "" {
		t.Fatal("a refused sign-in set a session cookie")
	}
	p = b.signIn(in.keyA)
	if p.status != http.StatusSeeOther || p.header.Get("Location") != "/" {
		t.Fatalf("sign in: %d %s", p.status, p.header.Get("Location"))
	}
	sc := p.header.Get("Set-Cookie")
	if !strings.Contains(sc, web.CookieName+"=") || !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Lax") || strings.Contains(sc, in.keyA) {
		t.Fatalf("session cookie %q: want HttpOnly, SameSite=Lax and not the key", sc)
	}
	p = b.get("/")
	if p.status != 200 || !strings.Contains(p.body, `<b id="tenant">a</b>`) || !strings.Contains(p.body, `data-agent="email-triage"`) {
		t.Fatalf("overview signed in: %d\n%s", p.status, p.body)
	}
	if p.header.Get("Cache-Control") != "no-store" {
		t.Errorf("a tenant's page may be cached: Cache-Control %q", p.header.Get("Cache-Control"))
	}
	// Sign-in never sends the browser elsewhere.
	for _, next := range []string{"https://evil.example/", "//evil.example/x", "/\\evil.example", "/v1/runs"} {
		p := b.do("POST", "/login", url.Values{"key": {in.keyA}, "next": {next}}, nil)
		if p.header.Get("Location") != "/" {
			t.Errorf("next=%q redirects to %q; want /", next, p.header.Get("Location"))
		}
	}
	// Signing out ends the session; the old cookie opens nothing.
	old := b.cookie()
	if p := b.do("POST", "/logout", url.Values{}, nil); p.status != http.StatusSeeOther {
		t.Fatalf("sign out: %d", p.status)
	}
	if p := b.withCookie(old).get("/"); p.status != http.StatusSeeOther {
		t.Fatalf("the old cookie after sign-out: %d; want a redirect to sign in", p.status)
	}
	// A revoked key ends its sessions.
	b.signIn(in.keyA)
	if p := b.get("/"); p.status != 200 {
		t.Fatalf("signed in again: %d", p.status)
	}
	if err := in.env.Service.RevokeKey(context.Background(), "a", in.keyA); err != nil {
		t.Fatal(err)
	}
	if p := b.get("/"); p.status != http.StatusSeeOther {
		t.Fatalf("after the key was revoked: %d; want a redirect to sign in", p.status)
	}
}

func (b *browser) cookie() string {
	u, _ := url.Parse(b.base)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == web.CookieName {
			return c.Value
		}
	}
	return ""
}

// withCookie returns a browser that sends only this session cookie.
func (b *browser) withCookie(value string) *browser {
	nb := newBrowser(b.t, b.base)
	u, _ := url.Parse(b.base)
	nb.c.Jar.SetCookies(u, []*http.Cookie{{Name: web.CookieName, Value: value, Path: "/"}})
	return nb
}

// Every page of tenant b's session answers 404 for tenant a's agent, insight, evaluation
// and run, and shows nothing of a's in its lists; the API behind the dashboard still takes
// keys.
func TestIsolation(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		in := seed(t, dsn, 0, web.Options{})
		a, b := newBrowser(t, in.srv.URL), newBrowser(t, in.srv.URL)
		a.signIn(in.keyA)
		b.signIn(in.keyB)
		pages := []string{"/agents/email-triage", "/insights/" + in.critical.ID, "/evaluations/" + in.evaluation, "/runs/email-triage-0001"}
		for _, path := range pages {
			if p := a.get(path); p.status != 200 {
				t.Errorf("a GET %s: %d", path, p.status)
			}
			p := b.get(path)
			if p.status != http.StatusNotFound || strings.Contains(p.body, "evidence") || strings.Contains(p.body, "prescreen") {
				t.Errorf("b GET %s: %d; want 404 and nothing of a's\n%s", path, p.status, p.body)
			}
		}
		for _, path := range []string{"/", "/insights", "/insights?state=all"} {
			p := b.get(path)
			if p.status != 200 || strings.Contains(p.body, "email-triage") || strings.Contains(p.body, in.critical.ID) {
				t.Errorf("b GET %s: %d shows a's data", path, p.status)
			}
		}
		if p := b.get("/"); !strings.Contains(p.body, `data-agent="b-agent"`) {
			t.Errorf("b's overview lacks b's own agent")
		}
		// The API answers through the dashboard's handler, with keys, as before.
		req, _ := http.NewRequest("GET", in.srv.URL+"/v1/agents", nil)
		req.Header.Set("Authorization", "Bearer "+in.keyB)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "b-agent") || strings.Contains(string(body), "email-triage") {
			t.Errorf("GET /v1/agents as b: %d %s", resp.StatusCode, body)
		}
		if p := newBrowser(t, in.srv.URL).get("/v1/insights"); p.status != http.StatusUnauthorized {
			t.Errorf("GET /v1/insights without a key: %d; want 401", p.status)
		}
	})
}

// A service that runs open needs no sign-in.
func TestOpenMode(t *testing.T) {
	in := seed(t, filepath.Join(t.TempDir(), "scorekit.db"), 0, web.Options{Open: true})
	b := newBrowser(t, in.srv.URL)
	if p := b.get("/login"); p.status != http.StatusSeeOther {
		t.Fatalf("GET /login in open mode: %d; want a redirect to /", p.status)
	}
	// The open tenant has no runs: the page says how to send some.
	if p := b.get("/"); p.status != 200 || !strings.Contains(p.body, "open mode") || !strings.Contains(p.body, "No runs yet") {
		t.Fatalf("open mode overview: %d\n%s", p.status, p.body)
	}
}

var rowRE = regexp.MustCompile(`<tr><td><a href="/runs/`)

// An agent with 10,000 runs: every page renders, the runs and an evaluation's results are
// paged (50 runs a page, followed to the end by their links), and the trend covers them
// all in a bounded number of points.
func TestTenThousandRuns(t *testing.T) {
	backends(t, func(t *testing.T, dsn string) {
		in := seed(t, dsn, 10000, web.Options{})
		b := newBrowser(t, in.srv.URL)
		b.signIn(in.keyA)
		p := b.get("/agents/" + loadAgent)
		if p.status != 200 {
			t.Fatalf("agent page: %d\n%s", p.status, p.body)
		}
		if n := len(rowRE.FindAllString(p.body, -1)); n != 50 {
			t.Fatalf("the agent page lists %d runs; want a page of 50", n)
		}
		if !strings.Contains(p.body, "the chart covers the newest 10000") || !strings.Contains(p.body, `data-points="60"`) {
			t.Errorf("the trend does not cover the 10,000 runs in 60 points")
		}
		if !strings.Contains(p.body, "load-09999") || strings.Contains(p.body, "load-09949<") {
			t.Errorf("the first page is not the newest 50 runs")
		}
		// Follow "older" three pages: each is the next 50, newest first.
		next := regexp.MustCompile(`href="(/agents/load-test\?cursor=[^"]+)" id="older"`)
		for i := 1; i <= 3; i++ {
			m := next.FindStringSubmatch(p.body)
			if m == nil {
				t.Fatalf("page %d has no link to older runs", i)
			}
			p = b.get(strings.ReplaceAll(m[1], "&amp;", "&"))
			want := fmt.Sprintf("load-%05d", 9999-50*i)
			if p.status != 200 || !strings.Contains(p.body, ">"+want+"<") || len(rowRE.FindAllString(p.body, -1)) != 50 {
				t.Fatalf("page %d: %d; want 50 runs from %s", i+1, p.status, want)
			}
		}
		// The evaluation of 10,000 runs, its last page.
		var evID string
		if m := regexp.MustCompile(`href="/evaluations/(ev_[a-z0-9]+)"`).FindStringSubmatch(b.get("/agents/" + loadAgent).body); m != nil {
			evID = m[1]
		}
		p = b.get("/evaluations/" + evID + "?page=200")
		if p.status != 200 || !strings.Contains(p.body, "page 200 of 200") || !strings.Contains(p.body, ">load-00000<") || len(rowRE.FindAllString(p.body, -1)) != 50 {
			t.Fatalf("the evaluation%s last page: %d (%d rows)\n%s", "'s", p.status, len(rowRE.FindAllString(p.body, -1)), p.body[len(p.body)-3000:])
		}
		if p := b.get("/evaluations/" + evID + "?page=201"); p.status != http.StatusBadRequest || !strings.Contains(p.body, "pages 1 to 200") {
			t.Errorf("page 201: %d", p.status)
		}
		for _, path := range []string{"/", "/insights", "/runs/load-05000"} {
			if p := b.get(path); p.status != 200 {
				t.Errorf("GET %s: %d", path, p.status)
			}
		}
	})
}

// The dashboard only reads: a read key signs in and sees the tenant's pages; an ingest
// key (an exporter's) is refused with the scope it lacks, and gets no session.
func TestSignInScopes(t *testing.T) {
	in := seed(t, filepath.Join(t.TempDir(), "scorekit.db"), 0, web.Options{})
	ctx := context.Background()
	read, _, err := in.env.Service.CreateScopedKey(ctx, "a", store.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	ingest, _, err := in.env.Service.CreateScopedKey(ctx, "a", store.ScopeIngest)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, in.srv.URL)
	p := b.signIn(ingest)
	if p.status != http.StatusUnauthorized || !strings.Contains(p.body, "scope ingest") || !strings.Contains(p.body, "--scope read") || b.cookie() != "" {
		t.Fatalf("an ingest key signs in: %d cookie %q\n%s", p.status, b.cookie(), p.body)
	}
	if p := b.get("/"); p.status != http.StatusSeeOther {
		t.Fatalf("after a refused sign-in: %d; want a redirect to sign in", p.status)
	}
	if p := b.signIn(read); p.status != http.StatusSeeOther {
		t.Fatalf("a read key signs in: %d\n%s", p.status, p.body)
	}
	if p := b.get("/"); p.status != 200 || !strings.Contains(p.body, `data-agent="email-triage"`) {
		t.Fatalf("a read key's overview: %d\n%s", p.status, p.body)
	}
}
