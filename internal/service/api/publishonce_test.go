package api_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/scorers"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// TestPublishChecksOnce: each check of a publish is made in one place. A name is the
// service's to judge, whatever its length (the request's schema does not judge it first,
// with another message); the module a publish checked is left beside its compiled code
// as the tenant's processes run it, so its first result neither reads it from the store
// nor hashes it against its digest again.
func TestPublishChecksOnce(t *testing.T) {
	ok := watModule(t, "ok")
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		dir := t.TempDir()
		h := newHarness(t, dsn, servicetest.Options{Publish: service.PublishConfig{CacheDir: dir}}, "acme")
		c := h.as(t, "acme")
		for _, name := range []string{"", strings.Repeat("a", 65), "Bad Name"} {
			_, r := publish(t, c, map[string]any{"name": name, "base": "prescreen"})
			if p := r.problem(t); r.status != http.StatusUnprocessableEntity || p.Code != api.CodeScorerRefused ||
				!strings.Contains(p.Detail, "want 1 to 64 lower case letters") {
				t.Errorf("name %q: %d %s %q; want 422 %s naming the rule", name, r.status, p.Code, p.Detail, api.CodeScorerRefused)
			}
		}
		if _, r := publish(t, c, map[string]any{"name": strings.Repeat("a", 64), "base": "prescreen"}); r.status != http.StatusCreated {
			t.Fatalf("a name of 64 characters: %d %s", r.status, r.body)
		}

		v, r := publish(t, c, map[string]any{"name": "mine", "module": ok})
		if r.status != http.StatusCreated {
			t.Fatalf("publish: %d %s", r.status, r.body)
		}
		tn, err := h.env.Service.Tenant(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(scorers.ModuleDir(filepath.Join(dir, "tenants"), tn, v.Digest), scorers.ModuleFile)
		got, err := os.ReadFile(file)
		if err != nil || !bytes.Equal(got, scorers.TenantModule(tn, ok)) {
			t.Fatalf("after the publish, before any result, the tenant's folder holds %d bytes at %s (%v); want the module as the tenant runs it", len(got), file, err)
		}
		if r := c.do("POST", "/v1/score", []byte(`{"scorer": "mine", "run": {"input": "q", "output": "a"}}`)); r.status != http.StatusOK {
			t.Fatalf("the first result: %d %s", r.status, r.body)
		}
	})
}
