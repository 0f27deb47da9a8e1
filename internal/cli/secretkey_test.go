package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/internal/service/secrets"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
	"github.com/scorekit/scorekit/sdk"
)

// Rotating the operator's secret key: a key a tenant stored under the old one is sealed
// again under the new one by secret-key rotate, and opens with the new key alone after;
// a key that opens with none of the keys given is named, and the command fails.
func TestSecretKeyRotate(t *testing.T) {
	db := filepath.Join(t.TempDir(), "scorekit.db")
	r := runCLI(t, "", "secret-key", "new")
	oldKey := strings.TrimSpace(r.stdout)
	if r.code != ExitOK || len(oldKey) != 44 || !strings.Contains(r.stderr, EnvSecretKey) {
		t.Fatalf("secret-key new: %d %q %s", r.code, r.stdout, r.stderr)
	}
	newKey := strings.TrimSpace(runCLI(t, "", "secret-key", "new").stdout)
	oldRing, err := secrets.New(oldKey)
	if err != nil {
		t.Fatal(err)
	}
	b, err := broker.New(broker.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	env := servicetest.New(t, db, servicetest.Options{Judge: b, Secrets: oldRing, NoWorkers: true})
	ctx := context.Background()
	acme, err := env.Service.CreateTenant(ctx, "acme", store.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Service.SetJudgeKey(ctx, acme, broker.DefaultEndpoint, "sk-acme-own"); err != nil {
		t.Fatal(err)
	}
	if err := env.Service.Close(ctx); err != nil {
		t.Fatal(err)
	}

	t.Setenv(EnvSecretKey, newKey)
	t.Setenv(EnvSecretKeyOld, oldKey)
	if r := runCLI(t, "", "secret-key", "rotate", "--db", db); r.code != ExitOK || !strings.Contains(r.stdout, "1 tenant key(s) sealed again") {
		t.Fatalf("rotate: %d %s%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI(t, "", "secret-key", "rotate", "--db", db); r.code != ExitOK || !strings.Contains(r.stdout, "0 tenant key(s) sealed again") {
		t.Fatalf("rotate again: %d %s%s", r.code, r.stdout, r.stderr)
	}
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := st.JudgeKeys(ctx, acme.ID)
	st.Close()
	if err != nil || len(keys) != 1 {
		t.Fatalf("stored keys: %+v, %v", keys, err)
	}
	newRing, err := secrets.New(newKey)
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := newRing.Open(keys[0].Sealed, fmt.Appendf(nil, "scorekit judge key\x00tenant %d\x00endpoint %s", acme.ID, "default")); err != nil || string(pt) != "sk-acme-own" {
		t.Fatalf("after rotation the new key alone: %q, %v", pt, err)
	}

	// A third key, with neither of the others: nothing opens, and the command says what
	// to do rather than dropping the key.
	t.Setenv(EnvSecretKey, secrets.NewKey())
	t.Setenv(EnvSecretKeyOld, "")
	r = runCLI(t, "", "secret-key", "rotate", "--db", db)
	if r.code == ExitOK || !strings.Contains(r.stderr, `judge endpoint "default"`) || !strings.Contains(r.stderr, EnvSecretKeyOld) || strings.Contains(r.stderr+r.stdout, "sk-acme-own") {
		t.Fatalf("rotate with a wrong key: %d %s%s", r.code, r.stdout, r.stderr)
	}
	t.Setenv(EnvSecretKey, "not-a-key")
	if r := runCLI(t, "", "keys", "list", "--tenant", "acme", "--db", db); r.code == ExitOK || !strings.Contains(r.stderr, "$"+EnvSecretKey) || !strings.Contains(r.stderr, "openssl rand -base64 32") {
		t.Fatalf("a malformed secret key: %d %s", r.code, r.stderr)
	}
}

// The config file's judge.endpoints become the broker's endpoints; a key_env that is not
// set is an error naming it.
func TestJudgeEndpointsConfig(t *testing.T) {
	cfg, err := readConfig(writeFile(t, "config.json", `{"judge": {"url": "http://127.0.0.1:1/v1", "model": "m", "models": ["m2"],
		"endpoints": [{"name": "team", "url": "http://127.0.0.1:2/v1", "model": "t1", "models": ["t2"], "tenant_key_required": true}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := newJudge(cfg.Judge.merge(judgeConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	eps := b.Endpoints()
	if len(eps) != 2 || strings.Join(eps[0].Models, ",") != "m,m2" || eps[1].Name != "team" || strings.Join(eps[1].Models, ",") != "t1,t2" || !eps[1].TenantKeyRequired {
		t.Fatalf("endpoints: %+v", eps)
	}
	cfg.Judge.Endpoints[0].KeyEnv = "SCOREKIT_TEST_UNSET_KEY"
	if _, err := newJudge(cfg.Judge.merge(judgeConfig{})); err == nil || !strings.Contains(err.Error(), "SCOREKIT_TEST_UNSET_KEY") {
		t.Fatalf("an unset key_env: %v", err)
	}
	if _, err := readConfig(writeFile(t, "bad.json", `{"judge": {"endpoints": [{"nam": "x"}]}}`)); err == nil || !strings.Contains(err.Error(), "judge.endpoints takes name") {
		t.Fatalf("a mistyped endpoint key: %v", err)
	}
}

// A tenant's route and key hold in every runtime: the relevancy scorer built for WASM and
// as a process plugin, asked through the host with the route on the call's context, sends
// the tenant's model with the tenant's key to the tenant's endpoint.
func TestJudgeRouteEveryRuntime(t *testing.T) {
	build, err := filepath.Abs(filepath.Join("..", "..", "build"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SCOREKIT_BUILD", build)
	main := judgetest.New(judgetest.Rule{Reply: `{"reasoning": "operator", "score": 0.2}`})
	defer main.Close()
	team := judgetest.New(judgetest.Rule{Reply: `{"reasoning": "team", "score": 0.9}`})
	defer team.Close()
	cfg := writeFile(t, "cfg.json", fmt.Sprintf(`{"judge": {"url": %q, "model": "judge-model", "key_env": "none",
		"endpoints": [{"name": "team", "url": %q, "model": "team-small", "models": ["team-large"]}]}}`, main.URL(), team.URL()))
	e := &env{stderr: io.Discard, stdout: io.Discard, registry: builtinRegistry}
	for _, rt := range []string{"native", "wasm", "process"} {
		t.Run(rt, func(t *testing.T) {
			o := hostOptions{config: cfg, timeout: 30 * time.Second, scorers: []string{"relevancy"}}
			if rt != "native" {
				if o.builtins, err = builtinManifest(rt); err != nil {
					t.Fatal(err)
				}
			}
			hp, err := e.assembleHost(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer hp.close(context.Background())
			if err := hp.judge.SetTenantKey("acme", "team", "sk-acme-"+rt); err != nil {
				t.Fatal(err)
			}
			sc, err := hp.host.Open(context.Background(), "relevancy", host.OpenOptions{Tenant: "acme"})
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close(context.Background())
			if got := sc.Runtime(); got != rt {
				t.Fatalf("relevancy runs %s, want %s", got, rt)
			}
			before := len(team.Requests())
			ctx := broker.WithRoute(context.Background(), broker.Route{Endpoint: "team", Model: "team-large"})
			res := sc.Score(ctx, sdk.Run{Input: "Which runtime is this, " + rt + "?", Output: rt})
			if res.Status != sdk.StatusScored || !strings.Contains(res.Reason, "team") {
				t.Fatalf("result %+v; want the team endpoint's verdict", res)
			}
			got := team.Requests()[before:]
			if len(got) != 1 || got[0].Authorization != "Bearer sk-acme-"+rt || got[0].Model != "team-large" {
				t.Fatalf("the team endpoint saw %+v; want acme's key and team-large", got)
			}
			for _, q := range main.Requests() {
				if strings.Contains(q.LastUser(), "Which runtime is this, "+rt) {
					t.Fatalf("the call went to the operator's endpoint")
				}
			}
		})
	}
}
