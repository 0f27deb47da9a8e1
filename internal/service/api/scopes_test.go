package api_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// apiScopes is the API table: the scope each operation needs. An operation registered
// without a row here fails TestScopes, so no route ships without a decided scope.
var apiScopes = map[string]store.Scope{
	"import-runs":          store.ScopeIngest,
	"export-traces":        store.ScopeIngest,
	"export-logs":          store.ScopeIngest,
	"get-ingest":           store.ScopeRead,
	"list-scorers":         store.ScopeRead,
	"get-run":              store.ScopeRead,
	"list-agents":          store.ScopeRead,
	"list-runs":            store.ScopeRead,
	"list-evaluations":     store.ScopeRead,
	"get-evaluation":       store.ScopeRead,
	"get-agent-policy":     store.ScopeRead,
	"list-agent-insights":  store.ScopeRead,
	"list-insights":        store.ScopeRead,
	"get-insight":          store.ScopeRead,
	"list-judge-endpoints": store.ScopeRead,
	"put-judge-key":        store.ScopeAdmin,
	"delete-judge-key":     store.ScopeAdmin,
	"list-run-labels":      store.ScopeRead,
	"list-labels":          store.ScopeRead,
	"get-agreement":        store.ScopeRead,
	"put-label":            store.ScopeLabel,
	"delete-label":         store.ScopeLabel,
	"import-labels":        store.ScopeLabel,
	"score-labelled":       store.ScopeAdmin,
	"score":                store.ScopeAdmin,
	"create-evaluation":    store.ScopeAdmin,
	"put-agent-policy":     store.ScopeAdmin,
	"delete-agent-policy":  store.ScopeAdmin,
	"delete-run":           store.ScopeAdmin,
	"delete-agent":         store.ScopeAdmin,
	"delete-tenant":        store.ScopeAdmin,
	"export":               store.ScopeRead,
	"audit-log":            store.ScopeRead,
	// A tenant's own scorers: reading them is a read; publishing, promoting and deleting
	// change what its evaluations run.
	"list-scorer-versions":   store.ScopeRead,
	"get-scorer-version":     store.ScopeRead,
	"publish-scorer":         store.ScopeAdmin,
	"promote-scorer-version": store.ScopeAdmin,
	"delete-scorer-version":  store.ScopeAdmin,
}

// keyless are the operations that need no key at all.
var keyless = []string{"healthz"}

type docOperation struct {
	ID       string                `json:"operationId"`
	Security []map[string][]string `json:"security"`
	Scope    string                `json:"x-scorekit-scope"`
}

// operations walks the API's OpenAPI document: every registered operation with its method
// and path.
func operations(t *testing.T) map[string]struct {
	method, path string
	op           docOperation
} {
	t.Helper()
	raw, err := api.New(nil, api.Options{}).OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]struct {
		method, path string
		op           docOperation
	}{}
	for path, item := range doc.Paths {
		for method, body := range item {
			var op docOperation
			if err := json.Unmarshal(body, &op); err != nil || op.ID == "" {
				continue // parameters and other non-operation fields of a path item
			}
			out[op.ID] = struct {
				method, path string
				op           docOperation
			}{strings.ToUpper(method), path, op}
		}
	}
	return out
}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// TestScopes walks every registered operation: it declares the scope the API table gives
// it (security requirement and extension), a key of that scope (and an admin key) gets
// past the check, and a key of any other scope gets 403 insufficient_scope naming the
// scope needed, before its body is read.
func TestScopes(t *testing.T) {
	h := newHarness(t, filepath.Join(t.TempDir(), "scorekit.db"), servicetest.Options{NoWorkers: true}, "acme")
	keys := map[store.Scope]string{}
	for _, sc := range store.Scopes() {
		key, k, err := h.env.Service.CreateScopedKey(context.Background(), "acme", sc)
		if sc == store.ScopeLabel {
			key, k, err = h.env.Service.CreateLabellerKey(context.Background(), "acme", "ana")
		}
		if err != nil || k.Scope != sc {
			t.Fatalf("create %s key: %+v, %v", sc, k, err)
		}
		keys[sc] = key
	}
	ops := operations(t)
	for id := range apiScopes {
		if _, ok := ops[id]; !ok {
			t.Errorf("the API table names %s, which is not registered: drop its row", id)
		}
	}
	// The tenant's deletion goes last: with the admin key it deletes the tenant, and every
	// key with it.
	ids := slices.Sorted(maps.Keys(ops))
	ids = append(slices.DeleteFunc(ids, func(id string) bool { return id == api.OpDeleteTenant }), api.OpDeleteTenant)
	for _, id := range ids {
		o := ops[id]
		t.Run(id, func(t *testing.T) {
			if slices.Contains(keyless, id) {
				if len(o.op.Security) != 0 {
					t.Fatalf("%s needs no key but declares %v", id, o.op.Security)
				}
				return
			}
			need, ok := apiScopes[id]
			if !ok {
				t.Fatalf("%s %s (%s) is not in the API table (apiScopes in scopes_test.go): decide the scope it needs, "+
					"declare it where it is registered and add the row", o.method, o.path, id)
			}
			if len(o.op.Security) != 1 || !slices.Equal(o.op.Security[0]["bearer"], []string{string(need)}) || o.op.Scope != string(need) {
				t.Fatalf("%s declares security %v and %s %q; want bearer [%s]", id, o.op.Security, api.ScopeExtension, o.op.Scope, need)
			}
			path := pathParam.ReplaceAllString(o.path, "x")
			var body []byte
			if o.method == http.MethodPost || o.method == http.MethodPut {
				body = []byte(`{}`)
			}
			for _, sc := range store.Scopes() {
				r := client{t: t, url: h.srv.URL, key: keys[sc]}.do(o.method, path, body)
				// OTLP's route answers errors as OTLP says (a google.rpc.Status), not as
				// problem details: its refusal is told by its message.
				otlp := id == "export-traces" || id == "export-logs"
				refused := r.status == http.StatusForbidden && (strings.Contains(string(r.body), api.CodeInsufficientScope) ||
					otlp && strings.Contains(string(r.body), "needs a key with scope"))
				if sc.Grants(need) {
					if refused || r.status == http.StatusUnauthorized {
						t.Errorf("a %s key, %s %s: %d %s; want past the scope check", sc, o.method, path, r.status, r.body)
					}
					continue
				}
				if !refused {
					t.Errorf("a %s key, %s %s: %d %s; want 403 %s", sc, o.method, path, r.status, r.body, api.CodeInsufficientScope)
					continue
				}
				detail := string(r.body)
				if !otlp {
					detail = r.problem(t).Detail
				}
				if !strings.Contains(detail, "needs a key with scope "+string(need)) || !strings.Contains(detail, "--scope "+string(need)) {
					t.Errorf("a %s key, %s %s: detail %q; want it to name scope %s and how to get a key of it", sc, o.method, path, detail, need)
				}
				if a := r.header.Get("WWW-Authenticate"); !strings.Contains(a, `error="insufficient_scope"`) || !strings.Contains(a, `scope="`+string(need)+`"`) {
					t.Errorf("a %s key, %s %s: WWW-Authenticate %q", sc, o.method, path, a)
				}
			}
		})
	}
}

// An ingest key stores runs and reads nothing back; a read key reads them and changes
// nothing: the two halves of the exporter and dashboard split, end to end.
func TestScopesIngestThenRead(t *testing.T) {
	h := newHarness(t, filepath.Join(t.TempDir(), "scorekit.db"), servicetest.Options{NoWorkers: true}, "acme")
	ctx := context.Background()
	ingest, _, err := h.env.Service.CreateScopedKey(ctx, "acme", store.ScopeIngest)
	if err != nil {
		t.Fatal(err)
	}
	read, _, err := h.env.Service.CreateScopedKey(ctx, "acme", store.ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	in, rd := client{t: t, url: h.srv.URL, key: ingest}, client{t: t, url: h.srv.URL, key: read}
	if r := in.do("POST", "/v1/runs", []byte(`{"id": "r1", "agent": "bot", "input": "q", "output": "a"}`)); r.status != 200 {
		t.Fatalf("ingest key stores a run: %d %s", r.status, r.body)
	}
	if r := in.do("GET", "/v1/runs/r1", nil); r.status != http.StatusForbidden {
		t.Fatalf("ingest key reads the run back: %d %s; want 403", r.status, r.body)
	}
	if r := rd.do("GET", "/v1/runs/r1", nil); r.status != 200 || !strings.Contains(string(r.body), `"r1"`) {
		t.Fatalf("read key reads the run: %d %s", r.status, r.body)
	}
	if r := rd.do("POST", "/v1/runs", []byte(`{"id": "r2", "agent": "bot", "input": "q", "output": "a"}`)); r.status != http.StatusForbidden {
		t.Fatalf("read key stores a run: %d %s; want 403", r.status, r.body)
	}
	if r := rd.do("PUT", "/v1/agents/bot/policy", []byte(`{"scorers": ["prescreen"], "sample_rate": 1}`)); r.status != http.StatusForbidden {
		t.Fatalf("read key sets a policy: %d %s; want 403", r.status, r.body)
	}
	if r := rd.do("GET", "/v1/agents/bot/runs", nil); r.status != 200 || strings.Contains(string(r.body), `"r2"`) {
		t.Fatalf("the refused run was stored: %d %s", r.status, r.body)
	}
}
