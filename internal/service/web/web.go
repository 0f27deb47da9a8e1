// Package web is the evaluation service's dashboard, served by scorekit serve at /: the
// tenant's agents with their pass rate and mean per scorer and a trend chart, the open
// insights with their evidence, an evaluation's results (reason, flags, dimensions and
// the adjustments the host applied), one run with every result it ever had, a review that
// walks the runs worth a person's look for a scorer and takes their label, and each
// scorer's agreement with the labels.
//
// Pages are rendered on the server from embedded html/template files; charts are SVG
// drawn on the server; there is no script at all, and the Content-Security-Policy says
// so. Every listing is paged, and every page reads a bounded number of rows through an
// index, so an agent with 10,000 runs renders like one with 10. What a page shows of one
// run or result is bounded too, however large or deeply nested it was stored: each part is
// cut to a bound and says what was cut, with a link to the whole run through the API, and
// no page is buffered past 4 MiB (bound.go).
//
// Signing in takes an API key of scope read or admin (an ingest key reads nothing) in a
// form posted to /login (never in a URL); the dashboard only reads, so a read key sees
// every page and changes nothing. The server
// answers with a session cookie (HttpOnly, SameSite=Lax) whose random token is stored
// hashed, and ends with the key: a revoked key's sessions end too. Requests that change
// state (sign in, sign out) must come from the dashboard's own origin
// (http.CrossOriginProtection). Labelling a run on the review page also needs a form token
// tied to the session (review.go). A service that runs open (no keys, loopback only) needs
// no sign-in.
package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/textkit"
)

//go:embed templates static
var files embed.FS

// CookieName is the session cookie's name.
const CookieName = "scorekit_session"

// Options configure a Handler. Zero fields take the defaults.
type Options struct {
	// Open serves every page as the open tenant without signing in (see api.Options).
	Open bool
	// Next serves what the dashboard does not (the API). Optional. Default answers 404.
	Next http.Handler
	// SessionTTL is how long a session lasts. Optional. Default is 12 hours.
	SessionTTL time.Duration
	// Logger logs internal errors. Optional. Default is slog.Default().
	Logger *slog.Logger
}

// Handler serves the dashboard.
type Handler struct {
	svc   *service.Service
	opts  Options
	pages map[string]*template.Template
	mux   *http.ServeMux
	root  http.Handler
	// csrfKey signs the review form's token (review.go); drawn at start, so a restart
	// asks open forms to be reloaded.
	csrfKey [32]byte
}

// New returns the dashboard of svc.
func New(svc *service.Service, o Options) (*Handler, error) {
	if o.SessionTTL <= 0 {
		o.SessionTTL = 12 * time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Next == nil {
		o.Next = http.NotFoundHandler()
	}
	h := &Handler{svc: svc, opts: o, pages: map[string]*template.Template{}, mux: http.NewServeMux()}
	if err := h.parse(); err != nil {
		return nil, err
	}
	if _, err := rand.Read(h.csrfKey[:]); err != nil {
		return nil, fmt.Errorf("web: form key: %w", err)
	}
	static, _ := fs.Sub(files, "static")
	h.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	h.mux.HandleFunc("GET /login", h.loginPage)
	h.mux.HandleFunc("POST /login", h.login)
	h.mux.HandleFunc("POST /logout", h.logout)
	h.mux.Handle("GET /{$}", h.signedIn(h.overview))
	h.mux.Handle("GET /agents/{agent}", h.signedIn(h.agent))
	h.mux.Handle("GET /insights", h.signedIn(h.insights))
	h.mux.Handle("GET /insights/{id}", h.signedIn(h.insight))
	h.mux.Handle("GET /evaluations/{id}", h.signedIn(h.evaluation))
	h.mux.Handle("GET /runs/{id}", h.signedIn(h.run))
	h.mux.Handle("GET /agreement", h.signedIn(h.agreement))
	h.mux.Handle("GET /ingest", h.signedIn(h.ingest))
	h.mux.Handle("GET /review/{scorer}", h.signedIn(h.review))
	h.mux.Handle("POST /review/{scorer}/runs/{id}", h.signedInAs(store.ScopeLabel, h.label))
	h.mux.Handle("/", o.Next)
	// State changes (sign in, sign out) come from this origin only; a page on another
	// site cannot post a form here (Sec-Fetch-Site and Origin are checked).
	h.root = http.NewCrossOriginProtection().Handler(h.mux)
	return h, nil
}

// dashboardPath reports whether path is one of the dashboard's own.
func dashboardPath(p string) bool {
	if p == "/" || p == "/login" || p == "/logout" || p == "/insights" || p == "/agreement" || p == "/ingest" {
		return true
	}
	for _, prefix := range []string{"/static/", "/agents/", "/insights/", "/evaluations/", "/runs/", "/review/"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// ServeHTTP serves the dashboard's pages and passes anything else to Options.Next.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !dashboardPath(r.URL.Path) {
		h.opts.Next.ServeHTTP(w, r)
		return
	}
	hd := w.Header()
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("X-Frame-Options", "DENY")
	h.root.ServeHTTP(w, r)
}

type (
	tenantKey   struct{}
	scopeKey    struct{}
	labellerKey struct{}
)

// signedIn runs page for the session's tenant, or sends the browser to sign in.
func (h *Handler) signedIn(page func(w http.ResponseWriter, r *http.Request, t store.Tenant)) http.Handler {
	return h.signedInAs(store.ScopeRead, page)
}

// signedInAs is signedIn for a page that needs a key of scope need: a session opened
// with a key without it is answered 403 with the scope it lacks (a read key looks at the
// dashboard and changes nothing).
func (h *Handler) signedInAs(need store.Scope, page func(w http.ResponseWriter, r *http.Request, t store.Tenant)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t, scope, err := h.tenant(r)
		if errors.Is(err, errSignedOut) {
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		if err != nil {
			h.fail(w, r, err)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		ctx := context.WithValue(context.WithValue(r.Context(), tenantKey{}, t), scopeKey{}, scope)
		if scope == store.ScopeLabel {
			// A session opened with a label key labels as that key's labeller only.
			labeller, err := h.sessionLabeller(r)
			if err != nil {
				h.fail(w, r, err)
				return
			}
			ctx = context.WithValue(service.AsLabeller(ctx, labeller), labellerKey{}, labeller)
		}
		r = r.WithContext(ctx)
		if !scope.Grants(need) {
			how := "scorekit keys create --tenant " + t.Name + " --scope " + string(need)
			if need == store.ScopeLabel {
				how += " --labeller NAME, or --scope admin"
			}
			h.refuse(w, r, fmt.Sprintf("This needs a key with scope %s; you signed in with a key of scope %s, which can look but not change. "+
				"Sign in with a key of scope %s (%s).", need, scope, need, how))
			return
		}
		page(w, r, t)
	})
}

// canLabel reports whether the request's session may label runs, the one change the
// dashboard makes: its key has scope label or admin.
func canLabel(r *http.Request) bool {
	s, _ := r.Context().Value(scopeKey{}).(store.Scope)
	return s.Grants(store.ScopeLabel)
}

// boundLabeller is the labeller the request's session labels as when it was opened with
// a label key; "" otherwise.
func boundLabeller(r *http.Request) string {
	l, _ := r.Context().Value(labellerKey{}).(string)
	return l
}

// sessionLabeller reads the labeller of the key the request's session was opened with.
func (h *Handler) sessionLabeller(r *http.Request) (string, error) {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return "", errSignedOut
	}
	return h.svc.Store().SessionLabeller(r.Context(), hashToken(c.Value), time.Now())
}

var errSignedOut = errors.New("signed out")

// tenant returns the request's tenant and the scope of the key its session was opened
// with: the open tenant (admin), or the session's.
func (h *Handler) tenant(r *http.Request) (store.Tenant, store.Scope, error) {
	if h.opts.Open {
		t, err := h.svc.Open(r.Context())
		return t, store.ScopeAdmin, err
	}
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return store.Tenant{}, "", errSignedOut
	}
	t, scope, err := h.svc.Store().SessionTenant(r.Context(), hashToken(c.Value), time.Now())
	if errors.Is(err, store.ErrNotFound) || err == nil && !scope.Grants(store.ScopeRead) {
		return t, "", errSignedOut
	}
	return t, scope, err
}

func hashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// secure reports whether the browser reached the server over TLS (directly or through a
// proxy that says so): the cookie is then marked Secure.
func secure(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// safeNext returns next when it is a path of this site, else "/": sign-in never sends a
// browser elsewhere.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") || !dashboardPath(strings.SplitN(next, "?", 2)[0]) {
		return "/"
	}
	return next
}

type loginData struct {
	pageData
	Next  string
	Error string
}

func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	if h.opts.Open {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	h.render(w, r, "login", http.StatusOK, loginData{pageData: pageData{Title: "Sign in"}, Next: safeNext(r.URL.Query().Get("next"))})
}

// login checks the key posted in the form and opens a session for its tenant.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if h.opts.Open {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		h.render(w, r, "login", http.StatusBadRequest, loginData{pageData: pageData{Title: "Sign in"}, Next: "/", Error: "The form could not be read; sign in again."})
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	key := strings.TrimSpace(r.PostForm.Get("key"))
	fail := func(msg string) {
		h.render(w, r, "login", http.StatusUnauthorized, loginData{pageData: pageData{Title: "Sign in"}, Next: next, Error: msg})
	}
	if key == "" {
		fail("Paste an API key (scorekit keys create --tenant NAME makes one).")
		return
	}
	sum := sha256.Sum256([]byte(key))
	st := h.svc.Store()
	k, err := st.KeyByHash(r.Context(), sum[:])
	if errors.Is(err, store.ErrNotFound) {
		fail("That key is unknown or revoked.")
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// The dashboard reads; an ingest key (an exporter's) reads nothing.
	if !k.Scope.Grants(store.ScopeRead) {
		fail(fmt.Sprintf("That key has scope %s: it can send runs but not read them. Sign in with a key of scope read or admin "+
			"(scorekit keys create --tenant NAME --scope read).", k.Scope))
		return
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		h.fail(w, r, err)
		return
	}
	token := base64.RawURLEncoding.EncodeToString(b[:])
	if err := st.DeleteSession(r.Context(), nil, time.Now()); err != nil { // the expired ones
		h.fail(w, r, err)
		return
	}
	if err := st.CreateSession(r.Context(), hashToken(token), k.TenantID, k.ID, time.Now().Add(h.opts.SessionTTL)); err != nil {
		h.fail(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: token, Path: "/", MaxAge: int(h.opts.SessionTTL.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: secure(r)})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout ends the session.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(CookieName); err == nil && c.Value != "" {
		if err := h.svc.Store().DeleteSession(r.Context(), hashToken(c.Value), time.Now()); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: secure(r)})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// fail answers an error page: 404 and 400 say what is wrong; anything else is logged
// and answered 500 without internals.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := http.StatusInternalServerError, "Something went wrong; the server log has the cause."
	switch {
	case errors.Is(err, service.ErrNotFound):
		status, msg = http.StatusNotFound, err.Error()
	case errors.Is(err, service.ErrInvalid):
		status, msg = http.StatusBadRequest, err.Error()
	case errors.Is(err, service.ErrInsufficientScope):
		status, msg = http.StatusForbidden, err.Error()
	case errors.Is(err, context.Canceled):
		return
	default:
		h.opts.Logger.Error("dashboard: internal error", "path", r.URL.Path, "err", err)
	}
	t, _ := r.Context().Value(tenantKey{}).(store.Tenant)
	h.render(w, r, "error", status, errorData{pageData: h.page(t, http.StatusText(status)), Status: status, Message: msg})
}

type errorData struct {
	pageData
	Status  int
	Message string
}

// pageData is what every page's layout shows.
type pageData struct {
	Title  string
	Tenant string
	Open   bool
	Nav    string
}

func (h *Handler) page(t store.Tenant, title string) pageData {
	return pageData{Title: title, Tenant: t.Name, Open: h.opts.Open}
}

// render writes page with data. The page is rendered into a buffer of at most
// maxPageBytes, so an error while rendering still answers an error page; a page that
// would be larger is not sent, and the answer says so.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, page string, status int, data any) {
	t, ok := h.pages[page]
	if !ok {
		h.opts.Logger.Error("dashboard: no template", "page", page)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	b := cappedBuffer{max: maxPageBytes}
	if err := t.ExecuteTemplate(&b, "layout", data); err != nil {
		if errors.Is(err, errPageTooLarge) && page != "error" {
			h.opts.Logger.Warn("dashboard: page over the bound", "page", page, "path", r.URL.Path, "bound", maxPageBytes)
			tn, _ := r.Context().Value(tenantKey{}).(store.Tenant)
			msg := fmt.Sprintf("This page would be larger than %s, the most the dashboard renders, so it is not shown. "+
				"What it holds is in the API (/openapi.json lists the endpoints; a run is at GET /v1/runs/{id}).", textkit.FormatBytes(maxPageBytes))
			h.render(w, r, "error", http.StatusInternalServerError, errorData{pageData: h.page(tn, "Page too large"), Status: http.StatusInternalServerError, Message: msg})
			return
		}
		h.opts.Logger.Error("dashboard: render", "page", page, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.b.Bytes())
}

// errPageTooLarge is a page that would pass maxPageBytes.
var errPageTooLarge = errors.New("the page is over the dashboard's bound")

// cappedBuffer takes at most max bytes; a write past that fails, which stops the
// template.
type cappedBuffer struct {
	b   bytes.Buffer
	max int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if c.b.Len()+len(p) > c.max {
		return 0, errPageTooLarge
	}
	return c.b.Write(p)
}
