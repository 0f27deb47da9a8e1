package scorers_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/broker"
	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/internal/service/scorers"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/sdk"
)

// counted is a scorer whose opens and closes are counted.
type counted struct {
	testkit.Scorer
	opens, closes *atomic.Int64
}

func newCounted(opens, closes *atomic.Int64) counted {
	return counted{testkit.Scorer{Meta: sdk.Info{Name: "counted", Version: "1.0.0", ABIVersion: sdk.ABIVersion,
		ConfigSchema: json.RawMessage(`{"type":"object","properties":{"k":{"type":"string"}},"additionalProperties":false}`)}}, opens, closes}
}

func (c counted) Configure(json.RawMessage) error { c.opens.Add(1); return nil }
func (c counted) Close() error                    { c.closes.Add(1); return nil }

type limits struct {
	mu  sync.Mutex
	got map[string]broker.Limits
}

func (l *limits) SetTenantLimits(t string, lim broker.Limits) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got[t] = lim
	return nil
}

func newCache(t *testing.T, size int) (*scorers.Cache, *atomic.Int64, *atomic.Int64, *limits) {
	var opens, closes atomic.Int64
	reg := host.NewRegistry()
	if err := reg.Register(host.Native(func() sdk.Scorer { return newCounted(&opens, &closes) }), false); err != nil {
		t.Fatal(err)
	}
	lim := &limits{got: map[string]broker.Limits{}}
	c := scorers.New(host.New(reg), lim, size)
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c, &opens, &closes, lim
}

func TestOpenedOncePerTenantAndConfig(t *testing.T) {
	c, opens, _, lim := newCache(t, 8)
	ctx := context.Background()
	a := store.Tenant{Name: "a", Policy: store.Policy{Judge: store.JudgeLimits{TokenBudget: 99}}}
	b := store.Tenant{Name: "b"}
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, cfg := range []string{``, `{}`, `{"k": "v"}`, `{"k":"v"}`} {
				sc, release, err := c.Get(ctx, a, "counted", json.RawMessage(cfg))
				if err != nil {
					t.Error(err)
					return
				}
				if r := sc.Score(ctx, sdk.Run{Output: "x"}); r.Status != sdk.StatusScored {
					t.Error(r.Error)
				}
				release()
			}
		}()
	}
	wg.Wait()
	// "" and {} differ as keys but both are the default config; {"k": "v"} and
	// {"k":"v"} are one config.
	if got := opens.Load(); got != 3 {
		t.Fatalf("opened %d times for 800 requests; want 3 (one per distinct config)", got)
	}
	if _, release, err := c.Get(ctx, b, "counted", nil); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
	if got := opens.Load(); got != 4 {
		t.Fatalf("another tenant shares a's scorer: %d opens, want 4", got)
	}
	if lim.got["a"].TokenBudget != 99 {
		t.Fatalf("tenant a's judge limits did not reach the broker: %+v", lim.got)
	}
}

func TestBoundedAndPolicy(t *testing.T) {
	c, opens, closes, _ := newCache(t, 2)
	ctx := context.Background()
	a := store.Tenant{Name: "a"}
	for _, k := range []string{"1", "2", "3", "4"} {
		_, release, err := c.Get(ctx, a, "counted", json.RawMessage(`{"k":"`+k+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	if c.Len() != 2 || opens.Load() != 4 || closes.Load() != 2 {
		t.Fatalf("len %d, opens %d, closes %d; want 2, 4, 2", c.Len(), opens.Load(), closes.Load())
	}
	denied := store.Tenant{Name: "d", Policy: store.Policy{Scorers: []string{"prescreen"}}}
	if _, _, err := c.Get(ctx, denied, "counted", nil); !errors.Is(err, scorers.ErrNotAllowed) {
		t.Fatalf("err = %v, want ErrNotAllowed", err)
	}
	allowed := store.Tenant{Name: "d2", Policy: store.Policy{Scorers: []string{"counted"}}}
	if _, release, err := c.Get(ctx, allowed, "counted", nil); err != nil {
		t.Fatalf("allowed scorer: %v", err)
	} else {
		release()
	}
	if _, _, err := c.Get(ctx, a, "nope", nil); !errors.Is(err, host.ErrUnknownScorer) {
		t.Fatalf("err = %v, want ErrUnknownScorer", err)
	}
	if _, _, err := c.Get(ctx, a, "counted", json.RawMessage(`{"zz": 1}`)); !errors.Is(err, host.ErrInvalidConfig) {
		t.Fatalf("err = %v, want ErrInvalidConfig", err)
	}
}

// A tenant's judge limits reach the real broker when its scorer is opened.
func TestJudgeLimitsReachTheBroker(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: "{}"})
	defer srv.Close()
	b, err := broker.New(broker.Config{BaseURL: srv.URL(), Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	reg := host.NewRegistry()
	var opens, closes atomic.Int64
	if err := reg.Register(host.Native(func() sdk.Scorer { return newCounted(&opens, &closes) }), false); err != nil {
		t.Fatal(err)
	}
	c := scorers.New(host.New(reg, host.WithJudge(b)), b, 0)
	defer c.Close(context.Background())
	tenant := store.Tenant{Name: "acme", Policy: store.Policy{Judge: store.JudgeLimits{TokenBudget: 1234, MaxConcurrency: 3}}}
	_, release, err := c.Get(context.Background(), tenant, "counted", nil)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if got := b.TenantLimits("acme"); got.TokenBudget != 1234 || got.MaxConcurrency != 3 {
		t.Fatalf("broker limits of acme = %+v; want the policy's", got)
	}
	if got := b.TenantLimits("other"); got.TokenBudget == 1234 {
		t.Fatalf("another tenant got acme's limits")
	}
}

// recording is a plugin that records the tenant each backend is opened for, as a WASM or
// process runtime receives it.
type recording struct {
	mu      sync.Mutex
	tenants []host.Tenant
}

func (p *recording) Info() sdk.Info {
	return sdk.Info{Name: "rec", Version: "1", ABIVersion: sdk.ABIVersion}
}
func (p *recording) Runtime() string { return host.RuntimeWASM }
func (p *recording) Open(_ context.Context, t host.Tenant, _ json.RawMessage) (host.Backend, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tenants = append(p.tenants, t)
	return nopBackend{}, nil
}
func (p *recording) Close(context.Context) error { return nil }

type nopBackend struct{}

func (nopBackend) Score(context.Context, *sdk.Run, sdk.Judge) (sdk.Result, error) {
	return sdk.Scored(1, ""), nil
}
func (nopBackend) Close(context.Context) error { return nil }

// The tenant's name and runtime ceilings reach the runtime the scorer is opened in.
func TestTenantLimitsReachTheRuntime(t *testing.T) {
	p := &recording{}
	reg := host.NewRegistry()
	if err := reg.Register(p, false); err != nil {
		t.Fatal(err)
	}
	c := scorers.New(host.New(reg), nil, 0)
	defer c.Close(context.Background())
	tenant := store.Tenant{Name: "acme", Policy: store.Policy{Limits: host.Limits{MemoryMiB: 16, TimeoutMS: 500, PoolSize: 1}}}
	_, release, err := c.Get(context.Background(), tenant, "rec", nil)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if len(p.tenants) != 1 || p.tenants[0].Name != "acme" || p.tenants[0].Limits != tenant.Policy.Limits {
		t.Fatalf("opened for %+v; want acme with its policy's limits", p.tenants)
	}
}
