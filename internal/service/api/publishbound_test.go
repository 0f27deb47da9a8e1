package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/buildtest"
	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/scorers"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// filesUnder lists the regular files under dir, relative to it.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out = append(out, rel)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

// variant is mod with a custom section holding i: the same code under another digest.
func variant(mod []byte, i int) []byte {
	payload := []byte(fmt.Sprintf("variant %d", i))
	name := "scorekit.test"
	body := append([]byte{byte(len(name))}, name...)
	body = append(body, payload...)
	return append(append(append([]byte{}, mod...), 0, byte(len(body))), body...)
}

// waitFor polls cond until it holds (the test's own timeout ends a wait that never does).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if t.Context().Err() != nil {
			t.Fatalf("waiting for %s: %v", what, t.Context().Err())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// publishAsync publishes body as key from another goroutine, with no t.Fatal there.
func publishAsync(url, key string, body []byte) <-chan reply {
	out := make(chan reply, 1)
	go func() {
		req, err := http.NewRequest("POST", url+"/v1/scorers", bytes.NewReader(body))
		if err != nil {
			out <- reply{body: []byte(err.Error())}
			return
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out <- reply{body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out <- reply{status: resp.StatusCode, header: resp.Header, body: b}
	}()
	return out
}

func jsonBody(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPublishAtQuotaCompilesNothing is issue 30's repro scaled down: a tenant at its
// scorer quota sends 8 publishes at once; every one is refused before anything compiles
// (no check starts, nothing is written under the cache folder). The stored-bytes quota
// and a version the tenant has already are refused before compiling as well.
func TestPublishAtQuotaCompilesNothing(t *testing.T) {
	ok := watModule(t, "ok")
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		dir := t.TempDir()
		h := newHarness(t, dsn, servicetest.Options{Publish: service.PublishConfig{CacheDir: dir, MaxScorers: 1}}, "acme")
		c := h.as(t, "acme")
		if _, r := publish(t, c, map[string]any{"name": "first", "base": "prescreen"}); r.status != http.StatusCreated {
			t.Fatalf("publish first: %d %s", r.status, r.body)
		}
		tn, err := h.env.Service.Tenant(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		errs := make([]error, 8)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = h.env.Service.Publish(ctx, tn, service.PublishRequest{Name: fmt.Sprintf("m%d", i), Module: variant(ok, i)})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if !errors.Is(err, service.ErrRefused) || !strings.Contains(err.Error(), "quota: 1 scorers") {
				t.Fatalf("publish %d at the quota: %v; want the scorer quota's refusal", i, err)
			}
		}
		if files := filesUnder(t, dir); len(files) != 0 {
			t.Fatalf("publishes refused at the quota wrote %v", files)
		}
		if st := h.env.Service.PublishChecks(); st.Started != 0 {
			t.Fatalf("checks started for publishes refused at the quota: %+v", st)
		}

		// Over the stored bytes: 413, before compiling.
		if err := h.env.Service.SetTenantPolicy(ctx, "acme", store.Policy{Quotas: store.Quotas{Scorers: 10, StoredBytes: int64(len(ok)) - 1}}); err != nil {
			t.Fatal(err)
		}
		if _, r := publish(t, c, map[string]any{"name": "big", "module": ok}); r.status != http.StatusRequestEntityTooLarge ||
			!strings.Contains(r.problem(t).Detail, "quota: stored module bytes") {
			t.Fatalf("publish over the stored bytes: %d %s", r.status, r.body)
		}
		// A version the tenant has: 409 naming it, before compiling.
		if err := h.env.Service.SetTenantPolicy(ctx, "acme", store.Policy{Quotas: store.Quotas{Scorers: 10}}); err != nil {
			t.Fatal(err)
		}
		body := map[string]any{"name": "dup", "module": ok, "manifest": map[string]any{"limits": map[string]any{"memory_mib": 8}}}
		if _, r := publish(t, c, body); r.status != http.StatusCreated {
			t.Fatalf("publish dup: %d %s", r.status, r.body)
		}
		if _, r := publish(t, c, body); r.status != http.StatusConflict || r.problem(t).Code != api.CodeExists || !strings.Contains(r.problem(t).Detail, "dup@1") {
			t.Fatalf("publish dup again: %d %s", r.status, r.body)
		}
		if st := h.env.Service.PublishChecks(); st.Started != 1 {
			t.Fatalf("checks started: %+v; want the one of dup@1", st)
		}
		// Another manifest, or another config, is another version.
		body["manifest"] = map[string]any{"limits": map[string]any{"memory_mib": 16}}
		if v, r := publish(t, c, body); r.status != http.StatusCreated || v.Version != 2 {
			t.Fatalf("publish dup with other limits: %d %s", r.status, r.body)
		}
	})
}

// spin publishes loopstart.wat for t through the service, whose check then runs until
// ctx ends (the module's start never returns, and its deadline is a minute away).
func spin(h *harness, ctx context.Context, t store.Tenant, module []byte) <-chan error {
	out := make(chan error, 1)
	go func() {
		_, err := h.env.Service.Publish(ctx, t, service.PublishRequest{Name: "spin", Module: module,
			Manifest: &scorers.Manifest{Limits: host.Limits{TimeoutMS: 60_000}}})
		out <- err
	}()
	return out
}

// TestPublishChecksBounded: with one check at a time for the service and for each
// tenant, and no wait, a publish while another check runs gets 429 with Retry-After,
// whether it is the same tenant's (its share) or another's (the service's); once the
// check ends, the publish goes through. No two checks ever ran at once.
func TestPublishChecksBounded(t *testing.T) {
	ok, loop := watModule(t, "ok"), watModule(t, "loopstart")
	backends(t, func(t *testing.T, dsn string) {
		dir := t.TempDir()
		h := newHarness(t, dsn, servicetest.Options{Publish: service.PublishConfig{CacheDir: dir, MaxChecks: 1, MaxChecksPerTenant: 1, CheckWait: -1}}, "acme", "other")
		acme, err := h.env.Service.Tenant(context.Background(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		spun := spin(h, ctx, acme, loop)
		waitFor(t, "acme's check to run", func() bool { return h.env.Service.PublishChecks().Running == 1 })
		for _, tc := range []struct{ tenant, detail string }{
			{"acme", `tenant "acme" is checking as many modules as its share`},
			{"other", "the service is checking as many modules as it checks at once (1)"},
		} {
			_, r := publish(t, h.as(t, tc.tenant), map[string]any{"name": "b", "module": ok})
			if p := r.problem(t); r.status != http.StatusTooManyRequests || p.Code != api.CodeRateLimited || r.header.Get("Retry-After") == "" || !strings.Contains(p.Detail, tc.detail) {
				t.Fatalf("%s publishes during acme's check: %d %v %s", tc.tenant, r.status, r.header, r.body)
			}
		}
		cancel()
		if err := <-spun; !errors.Is(err, context.Canceled) {
			t.Fatalf("the spinning check, cancelled: %v", err)
		}
		for _, tenant := range []string{"acme", "other"} {
			if _, r := publish(t, h.as(t, tenant), map[string]any{"name": "b", "module": ok}); r.status != http.StatusCreated {
				t.Fatalf("%s publishes after the check: %d %s", tenant, r.status, r.body)
			}
		}
		if st := h.env.Service.PublishChecks(); st.Started != 3 || st.MostRunning != 1 || st.Busy != 2 || st.Running != 0 || st.Waiting != 0 {
			t.Fatalf("checks: %+v; want 3 started, at most 1 at once, 2 refused busy", st)
		}
		// The cancelled check left no scratch folder.
		for _, f := range filesUnder(t, dir) {
			if !strings.HasPrefix(f, "tenants"+string(filepath.Separator)) {
				t.Fatalf("left after the checks: %s", f)
			}
		}
	})
}

// TestPublishWaitsForItsTurn: a publish past the service's bound waits for a turn, starts
// no check meanwhile, and goes through when the running one ends.
func TestPublishWaitsForItsTurn(t *testing.T) {
	ok, loop := watModule(t, "ok"), watModule(t, "loopstart")
	h := newHarness(t, filepath.Join(t.TempDir(), "scorekit.db"), servicetest.Options{Publish: service.PublishConfig{MaxChecks: 1, CheckWait: time.Hour}}, "acme", "other")
	acme, err := h.env.Service.Tenant(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	spun := spin(h, ctx, acme, loop)
	waitFor(t, "acme's check to run", func() bool { return h.env.Service.PublishChecks().Running == 1 })
	waiting := publishAsync(h.srv.URL, h.keys["other"], jsonBody(t, map[string]any{"name": "b", "module": ok}))
	waitFor(t, "other's publish to wait", func() bool { return h.env.Service.PublishChecks().Waiting == 1 })
	if st := h.env.Service.PublishChecks(); st.Started != 1 || st.Running != 1 {
		t.Fatalf("while other's publish waits: %+v", st)
	}
	cancel()
	<-spun
	if r := <-waiting; r.status != http.StatusCreated {
		t.Fatalf("other's publish after its wait: %d %s", r.status, r.body)
	}
	if st := h.env.Service.PublishChecks(); st.Started != 2 || st.MostRunning != 1 || st.Busy != 0 {
		t.Fatalf("checks: %+v; want 2 started, one at a time, none refused", st)
	}
}

// TestRefusedPublishLeavesNothing: a module the check refuses, and one whose compiled
// code takes the tenant over its stored bytes (known only once compiled), leave nothing
// on disk and nothing in the store.
func TestRefusedPublishLeavesNothing(t *testing.T) {
	ok, forbidden := watModule(t, "ok"), watModule(t, "forbidden")
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		dir := t.TempDir()
		h := newHarness(t, dsn, servicetest.Options{Publish: service.PublishConfig{CacheDir: dir}}, "acme")
		c := h.as(t, "acme")
		if _, r := publish(t, c, map[string]any{"name": "x", "module": forbidden}); r.status != http.StatusUnprocessableEntity {
			t.Fatalf("publish forbidden: %d %s", r.status, r.body)
		}
		if files := filesUnder(t, dir); len(files) != 0 {
			t.Fatalf("a refused module left %v", files)
		}
		if err := h.env.Service.SetTenantPolicy(ctx, "acme", store.Policy{Quotas: store.Quotas{StoredBytes: int64(len(ok)) + 1}}); err != nil {
			t.Fatal(err)
		}
		_, r := publish(t, c, map[string]any{"name": "x", "module": ok})
		if p := r.problem(t); r.status != http.StatusRequestEntityTooLarge || !strings.Contains(p.Detail, "compiled code") {
			t.Fatalf("publish over the stored bytes with its compiled code: %d %s", r.status, r.body)
		}
		if files := filesUnder(t, dir); len(files) != 0 {
			t.Fatalf("a module refused over its compiled code's bytes left %v", files)
		}
		if n, _, err := h.env.Store.ModuleUsage(ctx, tenantID(t, h, "acme")); err != nil || n != 0 {
			t.Fatalf("modules stored: %d, %v", n, err)
		}
		if st := h.env.Service.PublishChecks(); st.Started != 2 {
			t.Fatalf("checks: %+v; want both compiled", st)
		}
	})
}

// TestCompiledBytesCountTowardStoredBytes: a module's compiled code counts toward the
// tenant's stored bytes, as the check measured it in the module's folder, once however
// many versions run it, and no more once the last of them is deleted, which removes the
// folder; the quota sees it before compiling the next module.
func TestCompiledBytesCountTowardStoredBytes(t *testing.T) {
	ok := watModule(t, "ok")
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		dir := t.TempDir()
		h := newHarness(t, dsn, servicetest.Options{Publish: service.PublishConfig{CacheDir: dir}}, "acme")
		c := h.as(t, "acme")
		tn, err := h.env.Service.Tenant(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		stored := func() (modules, compiled int64) {
			t.Helper()
			m, cc, err := h.env.Store.StoredBytes(ctx, tn.ID)
			if err != nil {
				t.Fatal(err)
			}
			return m, cc
		}
		folder := func(digest string) string { return scorers.ModuleDir(filepath.Join(dir, "tenants"), tn, digest) }
		a1, r := publish(t, c, map[string]any{"name": "a", "module": ok})
		if r.status != http.StatusCreated {
			t.Fatalf("publish a: %d %s", r.status, r.body)
		}
		c1, err := scorers.CompiledBytes(folder(a1.Digest))
		if err != nil || c1 == 0 {
			t.Fatalf("compiled code in a's folder: %d bytes, %v", c1, err)
		}
		if m, cc := stored(); m != int64(len(ok)) || cc != c1 {
			t.Fatalf("stored after a@1: modules %d, compiled %d; want %d and %d", m, cc, len(ok), c1)
		}
		// The same module under another name: counted once.
		if _, r := publish(t, c, map[string]any{"name": "same", "module": ok}); r.status != http.StatusCreated {
			t.Fatalf("publish same: %d %s", r.status, r.body)
		}
		if m, cc := stored(); m != int64(len(ok)) || cc != c1 {
			t.Fatalf("stored after the same module again: modules %d, compiled %d", m, cc)
		}
		// At the quota with the compiled code: the next module is refused before compiling.
		if err := h.env.Service.SetTenantPolicy(ctx, "acme", store.Policy{Quotas: store.Quotas{StoredBytes: int64(len(ok)) + c1}}); err != nil {
			t.Fatal(err)
		}
		started := h.env.Service.PublishChecks().Started
		if _, r := publish(t, c, map[string]any{"name": "a", "module": variant(ok, 2)}); r.status != http.StatusRequestEntityTooLarge {
			t.Fatalf("publish past the quota its compiled code fills: %d %s", r.status, r.body)
		}
		if st := h.env.Service.PublishChecks(); st.Started != started {
			t.Fatalf("a publish the quota refuses started a check: %+v", st)
		}
		if err := h.env.Service.SetTenantPolicy(ctx, "acme", store.Policy{}); err != nil {
			t.Fatal(err)
		}
		a2, r := publish(t, c, map[string]any{"name": "a", "module": variant(ok, 2)})
		if r.status != http.StatusCreated || a2.Promoted {
			t.Fatalf("publish a@2: %d %s", r.status, r.body)
		}
		c2, err := scorers.CompiledBytes(folder(a2.Digest))
		if err != nil || c2 == 0 {
			t.Fatalf("compiled code in a@2's folder: %d bytes, %v", c2, err)
		}
		if _, cc := stored(); cc != c1+c2 {
			t.Fatalf("compiled after a@2: %d; want %d", cc, c1+c2)
		}
		// Deleting a@2, the last version of its module, removes its compiled code.
		if r := c.do("DELETE", "/v1/scorers/a/versions/2", nil); r.status != http.StatusNoContent {
			t.Fatalf("delete a@2: %d %s", r.status, r.body)
		}
		if files := filesUnder(t, folder(a2.Digest)); len(files) != 0 {
			t.Fatalf("a@2's folder after its deletion: %v", files)
		}
		if m, cc := stored(); m != int64(len(ok))+int64(len(variant(ok, 2))) || cc != c1 {
			t.Fatalf("stored after deleting a@2: modules %d, compiled %d; want the modules kept (for the export) and %d compiled", m, cc, c1)
		}
		if files := filesUnder(t, folder(a1.Digest)); len(files) == 0 {
			t.Fatal("a@1's folder went with a@2's")
		}
	})
}

// TestDeletedTenantLeavesNothingToInherit: deleting a tenant removes its modules and
// their compiled code from disk; a tenant created again under its name (on SQLite, under
// its id too) finds none of it: its scorer of the same name and version runs its own
// module, not the one the deleted tenant's evaluation opened in this process.
func TestDeletedTenantLeavesNothingToInherit(t *testing.T) {
	first, ok := buildtest.FirstScorerWASM(t), watModule(t, "ok")
	backends(t, func(t *testing.T, dsn string) {
		ctx := context.Background()
		dir := t.TempDir()
		h := newHarness(t, dsn, servicetest.Options{Publish: service.PublishConfig{CacheDir: dir}}, "acme")
		c := h.as(t, "acme")
		old, err := h.env.Service.Tenant(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if r := c.do("POST", "/v1/runs", wordRuns("bot", "r", 0, 3)); r.status != 200 {
			t.Fatalf("import: %d %s", r.status, r.body)
		}
		if _, r := publish(t, c, map[string]any{"name": "triage", "module": first}); r.status != http.StatusCreated {
			t.Fatalf("publish: %d %s", r.status, r.body)
		}
		for _, res := range evaluate(t, c, "bot", `{"limit": 3, "scorers": ["triage@1"]}`).Results {
			if res.Status != "scored" || res.Reason == "wat says yes" {
				t.Fatalf("the deleted tenant's triage: %+v", res)
			}
		}
		if files := filesUnder(t, scorers.TenantDir(filepath.Join(dir, "tenants"), old)); len(files) < 2 {
			t.Fatalf("acme's folder holds %v; want its module and compiled code", files)
		}
		if r := c.do("DELETE", "/v1/tenant", nil); r.status != http.StatusOK {
			t.Fatalf("delete the tenant: %d %s", r.status, r.body)
		}
		if files := filesUnder(t, dir); len(files) != 0 {
			t.Fatalf("the deleted tenant left %v", files)
		}

		again, err := h.env.Service.CreateTenant(ctx, "acme", store.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		key, _, err := h.env.Service.CreateKey(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		h.keys["acme"] = key
		c = h.as(t, "acme")
		t.Logf("tenant ids: deleted %d, new %d", old.ID, again.ID)
		if files := filesUnder(t, scorers.TenantDir(filepath.Join(dir, "tenants"), again)); len(files) != 0 {
			t.Fatalf("the new acme's folder holds %v", files)
		}
		if r := c.do("GET", "/v1/scorers/triage/versions", nil); r.status != http.StatusNotFound {
			t.Fatalf("the new acme lists the deleted one's triage: %d %s", r.status, r.body)
		}
		if r := c.do("POST", "/v1/runs", wordRuns("bot", "r", 0, 3)); r.status != 200 {
			t.Fatalf("import: %d %s", r.status, r.body)
		}
		if v, r := publish(t, c, map[string]any{"name": "triage", "module": ok}); r.status != http.StatusCreated || v.Version != 1 {
			t.Fatalf("the new acme publishes triage: %d %s", r.status, r.body)
		}
		for _, res := range evaluate(t, c, "bot", `{"limit": 3, "scorers": ["triage@1"]}`).Results {
			if res.Status != "scored" || res.Reason != "wat says yes" {
				t.Fatalf("the new acme's triage@1 ran another module: %+v", res)
			}
		}
	})
}

// TestOpenSweepsPublishedFolder: opening the service removes the previous layout (one
// cache for every tenant, modules in folders named by tenant names), scratch folders no
// check can be using, the folders of tenants that are no more and of modules no version
// needs; it keeps what a tenant's versions need.
func TestOpenSweepsPublishedFolder(t *testing.T) {
	ok := watModule(t, "ok")
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(t.TempDir(), "scorekit.db")
	h := newHarness(t, db, servicetest.Options{Publish: service.PublishConfig{CacheDir: dir}}, "acme")
	v, r := publish(t, h.as(t, "acme"), map[string]any{"name": "a", "module": ok})
	if r.status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.status, r.body)
	}
	tn, err := h.env.Service.Tenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.env.Service.Close(ctx); err != nil {
		t.Fatal(err)
	}
	tenants := filepath.Join(dir, "tenants")
	write := func(rel string) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("wazero/wazero-v1.12.0-amd64-linux/0123")
	write("modules/0a1b2c3d4e5f6071/feed.wasm")
	stale := write("scratch/1-1-stale/wazero/0123")
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Dir(filepath.Dir(stale)), old, old); err != nil {
		t.Fatal(err)
	}
	write("scratch/1-1-running/wazero/0123")
	write("tenants/999-1/beef/module.wasm")
	unneeded, _ := filepath.Rel(dir, filepath.Join(scorers.ModuleDir(tenants, tn, "sha256:cafe"), scorers.ModuleFile))
	write(unneeded)

	servicetest.New(t, db, servicetest.Options{NoWorkers: true, Publish: service.PublishConfig{CacheDir: dir}})
	got := filesUnder(t, dir)
	want := map[string]bool{filepath.Join("scratch", "1-1-running", "wazero", "0123"): true}
	kept, _ := filepath.Rel(dir, scorers.ModuleDir(tenants, tn, v.Digest))
	for _, f := range got {
		if !want[f] && !strings.HasPrefix(f, kept+string(filepath.Separator)) {
			t.Fatalf("after the sweep: %v; want only a@1's folder (%s) and the running scratch folder", got, kept)
		}
	}
	if files := filesUnder(t, filepath.Join(dir, kept)); len(files) == 0 {
		t.Fatalf("the sweep removed a@1's compiled code")
	}
}
