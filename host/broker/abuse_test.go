package broker

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/sdk"
)

// The limits below are tested as allowed/denied pairs against judgetest servers that
// misbehave the way endpoints (and proxies in front of them) do.

func TestOnlyAnswersThatParseAreCached(t *testing.T) {
	tests := []struct {
		name       string
		reply      string
		json       bool
		wantCached bool
	}{
		{"a JSON object is kept", `{"score": 1}`, true, true},
		{"JSON in a code fence with prose is kept", "Sure:\n```json\n{\"score\": 1}\n```", true, true},
		{"prose asked for JSON is not kept", "I would rate this answer highly.", true, false},
		{"an HTML page asked for JSON is not kept", "<html><body>502 Bad Gateway</body></html>", true, false},
		{"prose asked for prose is kept", "It answers the question.", false, true},
		// An answer holding text no database stores is used but not kept: the service stores
		// the result repaired and flagged, and a rerun should get a chance at a clean answer.
		{"a NUL in a JSON verdict is not kept", `{"reasoning": "it answers \u0000 the question", "score": 1}`, true, false},
		{"a NUL in prose is not kept", "it answers \x00 the question", false, false},
		{"U+FFFD itself is kept", `{"reasoning": "it answers \ufffd the question", "score": 1}`, true, true},
		{"an escaped backslash before u0000 is kept", `{"reasoning": "it answers \\u0000 the question", "score": 1}`, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := judgetest.New(judgetest.Rule{Reply: tt.reply})
			defer srv.Close()
			b, _ := newBroker(t, srv, Config{})
			req := ask("q")
			req[0].JSON = tt.json
			for range 2 {
				out, err := b.Complete(context.Background(), req)
				if err != nil || out[0].Error != nil || out[0].Content != tt.reply {
					t.Fatalf("response = %+v, %v", out, err)
				}
			}
			if want := map[bool]int{true: 1, false: 2}[tt.wantCached]; srv.Calls() != want {
				t.Fatalf("server saw %d requests for two identical asks, want %d", srv.Calls(), want)
			}
		})
	}
}

// TestMeterCachesWhatTheScorerCouldUse: an answer that is valid JSON but that the scorer
// could not read (it failed with judge_error) is not cached, so a rerun against a healthy
// judge asks again; answers of a scored call, or of a call that only ran out of time, are.
func TestMeterCachesWhatTheScorerCouldUse(t *testing.T) {
	tests := []struct {
		name       string
		result     sdk.Result
		wantCached bool
	}{
		{"scored keeps", sdk.Scored(0.8, "ok"), true},
		{"skipped keeps", sdk.Skipped("not applicable"), true},
		{"judge_error drops", sdk.Failed(sdk.CodeJudgeError, "no score in the answer"), false},
		{"invalid_result drops", sdk.Failed(sdk.CodeInvalidResult, "score 7 on a 0-1 range"), false},
		{"scorer_error drops", sdk.Failed(sdk.CodeScorerError, "panic"), false},
		{"timeout keeps", sdk.Failed(sdk.CodeTimeout, "deadline"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := judgetest.New(judgetest.Rule{Reply: `{"error": "overloaded"}`})
			defer srv.Close()
			b, _ := newBroker(t, srv, Config{})
			m := b.Meter("acme", "s")
			if _, err := m.Complete(context.Background(), ask("q")); err != nil {
				t.Fatal(err)
			}
			// Until the call finishes, its answer is nobody's to reuse (this other call is
			// never finished, so it caches nothing either).
			if _, err := b.Meter("acme", "other").Complete(context.Background(), ask("q")); err != nil {
				t.Fatal(err)
			}
			if srv.Calls() != 2 {
				t.Fatalf("an unfinished call's answer was served from the cache: %d requests", srv.Calls())
			}
			res := tt.result
			m.Finish(&res)
			if res.Telemetry.JudgeCalls != 1 {
				t.Errorf("telemetry = %+v, want 1 call", res.Telemetry)
			}
			out, err := b.Meter("acme", "s").Complete(context.Background(), ask("q"))
			if err != nil {
				t.Fatal(err)
			}
			if out[0].Cached != tt.wantCached {
				t.Fatalf("rerun cached = %v, want %v (server saw %d requests)", out[0].Cached, tt.wantCached, srv.Calls())
			}
		})
	}
}

// TestCacheKeyHasTheEndpoint: two endpoints sharing a disk cache do not share answers, nor
// do two models, API versions or parameters; the same endpoint does.
func TestCacheKeyHasTheEndpoint(t *testing.T) {
	first := judgetest.New(judgetest.Rule{Reply: `{"from": "first"}`})
	defer first.Close()
	second := judgetest.New(judgetest.Rule{Reply: `{"from": "second"}`})
	defer second.Close()
	dir := t.TempDir()
	ctx := context.Background()
	get := func(cfg Config, srv *judgetest.Server, req []sdk.CompletionRequest) sdk.CompletionResponse {
		t.Helper()
		cfg.CacheDir = dir
		b, _ := newBroker(t, srv, cfg)
		defer b.Close()
		out, err := b.Complete(ctx, req)
		if err != nil || out[0].Error != nil {
			t.Fatalf("%v %v", err, out[0].Error)
		}
		return out[0]
	}
	if r := get(Config{}, first, ask("q")); r.Cached {
		t.Fatal("the first request was a cache hit")
	}
	tests := []struct {
		name       string
		cfg        Config
		srv        *judgetest.Server
		req        []sdk.CompletionRequest
		wantCached bool
		wantFrom   string
	}{
		{"same endpoint, model and request is a hit", Config{}, first, ask("q"), true, "first"},
		{"another URL is a miss", Config{}, second, ask("q"), false, "second"},
		{"another model is a miss", Config{Model: "other-model"}, first, ask("q"), false, "first"},
		{"another organization is a miss", Config{Organization: "org-2"}, first, ask("q"), false, "first"},
		{"another max_tokens is a miss", Config{MaxTokens: 99}, first, ask("q"), false, "first"},
		{"plain text instead of JSON mode is a miss", Config{}, first, []sdk.CompletionRequest{{Messages: ask("q")[0].Messages}}, false, "first"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := get(tt.cfg, tt.srv, tt.req)
			if r.Cached != tt.wantCached || !strings.Contains(r.Content, tt.wantFrom) {
				t.Fatalf("cached %v content %s, want cached %v from %s", r.Cached, r.Content, tt.wantCached, tt.wantFrom)
			}
		})
	}
	t.Run("another Azure API version is a miss", func(t *testing.T) {
		azure := Config{BaseURL: first.RootURL(), APIType: APIAzure, APIKey: "k"}
		if r := get(azure, first, ask("q")); r.Cached {
			t.Fatal("the first Azure request was a hit")
		}
		if r := get(azure, first, ask("q")); !r.Cached {
			t.Fatal("the same Azure request was a miss")
		}
		azure.APIVersion = "2025-01-01-preview"
		if r := get(azure, first, ask("q")); r.Cached {
			t.Fatal("another API version was a hit")
		}
	})
}

func TestResponseSizeCap(t *testing.T) {
	t.Run("an answer under the cap passes", func(t *testing.T) {
		srv := judgetest.New(judgetest.Rule{Size: 1 << 20})
		defer srv.Close()
		b, _ := newBroker(t, srv, Config{})
		out, err := b.Complete(context.Background(), []sdk.CompletionRequest{{Messages: ask("q")[0].Messages}})
		if err != nil || out[0].Error != nil || len(out[0].Content) != 1<<20 {
			t.Fatalf("%v %v, %d bytes", err, out[0].Error, len(out[0].Content))
		}
	})
	t.Run("a 300 MB answer fails at the cap without taking the memory", func(t *testing.T) {
		const body = 300 << 20
		srv := judgetest.New(judgetest.Rule{Size: body})
		defer srv.Close()
		b, _ := newBroker(t, srv, Config{MaxRetries: 3})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m := b.Meter("t", "s")
		out, err := m.Complete(context.Background(), ask("q"))
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		e := out[0].Error
		if e == nil || e.Code != sdk.CodeJudgeError || !strings.Contains(e.Message, "longer than the 8 MiB cap (MaxResponseBytes)") {
			t.Fatalf("error = %v, want judge_error naming the 8 MiB cap", e)
		}
		if srv.Calls() != 1 || m.Usage().Retries != 0 {
			t.Errorf("an answer over the cap was retried: %d requests, usage %+v", srv.Calls(), m.Usage())
		}
		// The host allocated about the cap, not the body: the test server's own writes
		// reuse one 64 KiB chunk.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
			t.Errorf("the call allocated %d MiB for a %d MiB answer capped at 8 MiB", alloc>>20, body>>20)
		}
		srv.Close() // wait for the handler to see the client go
		if w := srv.BytesWritten(); w >= body {
			t.Errorf("the whole answer was read: %d bytes", w)
		}
	})
	t.Run("a declared length over the cap is refused before reading", func(t *testing.T) {
		raw := `{"choices": [{"message": {"role": "assistant", "content": "` + strings.Repeat("y", 1000) + `"}}]}`
		srv := judgetest.New(judgetest.Rule{Raw: raw})
		defer srv.Close()
		b, _ := newBroker(t, srv, Config{MaxResponseBytes: 512})
		out, _ := b.Complete(context.Background(), ask("q"))
		if e := out[0].Error; e == nil || !strings.Contains(e.Message, "512-byte cap") {
			t.Fatalf("error = %v, want the 512-byte cap", out[0].Error)
		}
	})
}

func TestGarbageIsRetriedAtMostOnce(t *testing.T) {
	tests := []struct {
		name      string
		rule      judgetest.Rule
		wantCalls int
		wantMsg   string
	}{
		{"HTTP 200 with an HTML page", judgetest.Rule{Raw: "<html><body>Welcome to nginx!</body></html>"}, 2, "not a completion"},
		{"HTTP 200 with half an object", judgetest.Rule{Raw: `{"choices": [{"message": {"content": "x`}, 2, "not a completion"},
		{"HTTP 503 is transient: every retry", judgetest.Rule{Status: 503}, 5, "gave up after 4 retries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := judgetest.New(tt.rule)
			defer srv.Close()
			b, _ := newBroker(t, srv, Config{MaxRetries: 4, BackoffBase: time.Millisecond})
			m := b.Meter("t", "s")
			out, err := m.Complete(context.Background(), ask("q"))
			if err != nil {
				t.Fatal(err)
			}
			if e := out[0].Error; e == nil || e.Code != sdk.CodeJudgeError || !strings.Contains(e.Message, tt.wantMsg) {
				t.Fatalf("error = %v, want judge_error containing %q", out[0].Error, tt.wantMsg)
			}
			if srv.Calls() != tt.wantCalls {
				t.Errorf("server saw %d requests, want %d", srv.Calls(), tt.wantCalls)
			}
			if u := m.Usage(); u.Calls != 1 || u.Retries != int64(tt.wantCalls-1) || u.Failures != 1 {
				t.Errorf("usage = %+v", u)
			}
		})
	}
}

func TestBatchCap(t *testing.T) {
	batch := func(n int) []sdk.CompletionRequest {
		var reqs []sdk.CompletionRequest
		for i := range n {
			reqs = append(reqs, ask(strings.Repeat("w ", i+1))...)
		}
		return reqs
	}
	texts := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, strings.Repeat("w ", i+1))
		}
		return out
	}
	tests := []struct {
		name    string
		tenant  string
		n       int
		embed   bool
		wantErr bool
	}{
		{"64 requests pass the default cap", "acme", DefaultMaxBatch, false, false},
		{"65 requests are refused whole", "acme", DefaultMaxBatch + 1, false, true},
		{"2000 requests are refused whole", "acme", 2000, false, true},
		{"65 texts to embed are refused whole", "acme", DefaultMaxBatch + 1, true, true},
		{"a tenant with a higher cap may send 65", "big", DefaultMaxBatch + 1, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := judgetest.New(judgetest.Rule{Reply: `{"ok": 1}`})
			defer srv.Close()
			b, _ := newBroker(t, srv, Config{EmbeddingModel: "e", Tenants: map[string]Limits{"big": {MaxBatch: 100}}})
			m := b.Meter(tt.tenant, "s")
			var err error
			if tt.embed {
				_, err = m.Embed(context.Background(), texts(tt.n))
			} else {
				_, err = m.Complete(context.Background(), batch(tt.n))
			}
			res := sdk.Failed(sdk.CodeLimitExceeded, "x")
			m.Finish(&res)
			if !tt.wantErr {
				if err != nil || srv.Calls() == 0 || len(res.Telemetry.JudgeLimits) != 0 {
					t.Fatalf("err %v, %d requests, limits %v", err, srv.Calls(), res.Telemetry.JudgeLimits)
				}
				return
			}
			var e *sdk.Error
			if !errors.Is(err, ErrBatchTooLarge) || !errors.As(err, &e) || e.Code != sdk.CodeLimitExceeded ||
				!strings.Contains(e.Message, "--judge-max-batch") {
				t.Fatalf("err = %v, want limit_exceeded saying how to raise the cap", err)
			}
			if srv.Calls() != 0 {
				t.Errorf("a batch over the cap sent %d requests", srv.Calls())
			}
			if l := res.Telemetry.JudgeLimits; len(l) != 1 || !strings.HasPrefix(l[0], "max_batch: ") {
				t.Errorf("telemetry judge_limits = %v, want the max_batch hit", l)
			}
		})
	}
}

func TestDefaultTokenBudget(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"ok": 1}`})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{})
	if l := b.TenantLimits("anyone"); l.TokenBudget != DefaultTokenBudget || l.BudgetWindow != DefaultBudgetWindow || l.MaxBatch != DefaultMaxBatch {
		t.Fatalf("default limits = %+v", l)
	}
	unlimited, _ := newBroker(t, srv, Config{TokenBudget: -1})
	if l := unlimited.TenantLimits("anyone"); l.TokenBudget != -1 {
		t.Fatalf("TokenBudget -1 gave %+v", l)
	}
}

func TestTokenBudgetHitIsReported(t *testing.T) {
	// Each request: 10 prompt words + 2 completion words = 12 tokens at the server.
	srv := judgetest.New(judgetest.Rule{Reply: `{"ok": 1}`})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{TokenBudget: 20, BudgetWindow: time.Hour})
	prompt := func(i int) []sdk.CompletionRequest { return ask(strings.Repeat("w ", 9) + string(rune('a'+i))) }
	ctx := context.Background()
	// The first spends 12; 12 + the second's estimate (6) fits 20, and it spends 24 in all.
	for i := range 2 {
		m := b.Meter("acme", "s")
		_, err := m.Complete(ctx, prompt(i))
		res := sdk.Scored(1, "")
		m.Finish(&res)
		if err != nil || len(res.Telemetry.JudgeLimits) != 0 {
			t.Fatalf("request %d: %v, limits %v", i, err, res.Telemetry.JudgeLimits)
		}
	}
	m := b.Meter("acme", "s")
	_, err := m.Complete(ctx, prompt(2))
	res := sdk.Failed(sdk.CodeLimitExceeded, "budget")
	m.Finish(&res)
	var e *sdk.Error
	if !errors.Is(err, ErrBudgetExhausted) || !errors.As(err, &e) || !strings.Contains(e.Message, "--judge-token-budget") ||
		!strings.Contains(e.Message, "until ") {
		t.Fatalf("err = %v, want the budget error saying how to raise it and when it resets", err)
	}
	if l := res.Telemetry.JudgeLimits; len(l) != 1 || !strings.HasPrefix(l[0], "token_budget: ") {
		t.Errorf("telemetry judge_limits = %v, want the token_budget hit", l)
	}
}

func TestBudgetWindowStartsAgain(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"ok": 1}`})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{TokenBudget: 5, BudgetWindow: 20 * time.Millisecond})
	ctx := context.Background()
	if out, err := b.Complete(ctx, ask("one two three")); err != nil || out[0].Error != nil {
		t.Fatalf("first: %v %v", err, out[0].Error)
	}
	if _, err := b.Complete(ctx, ask("four five six")); !errors.Is(err, ErrBudgetExhausted) {
		t.Fatalf("within the window: err = %v, want the budget spent", err)
	}
	time.Sleep(30 * time.Millisecond) // past the window: not a timing assertion, a wait for it to end
	if out, err := b.Complete(ctx, ask("four five six")); err != nil || out[0].Error != nil {
		t.Fatalf("next window: %v %v", err, out[0].Error)
	}
}

func TestSetTenantLimits(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"ok": 1}`, Delay: 50 * time.Millisecond})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{MaxConcurrency: 8})
	ctx := context.Background()
	four := append(append(ask("a"), ask("b")...), append(ask("c"), ask("d")...)...)

	if _, err := b.For("acme", "s").Complete(ctx, four); err != nil {
		t.Fatal(err)
	}
	if srv.MaxInFlight() < 2 {
		t.Fatalf("before: at most %d in flight of 4 with MaxConcurrency 8", srv.MaxInFlight())
	}

	// Replacing the limits of a tenant already in use.
	if err := b.SetTenantLimits("acme", Limits{MaxConcurrency: 1, MaxBatch: 3}); err != nil {
		t.Fatal(err)
	}
	if l := b.TenantLimits("acme"); l.MaxConcurrency != 1 || l.MaxBatch != 3 || l.TokenBudget != DefaultTokenBudget {
		t.Fatalf("limits = %+v", l)
	}
	if _, err := b.For("acme", "s").Complete(ctx, four); !errors.Is(err, ErrBatchTooLarge) {
		t.Fatalf("a batch of 4 under MaxBatch 3: err = %v", err)
	}
	calls := srv.Calls()
	if _, err := b.For("acme", "s").Complete(ctx, append(ask("e"), ask("f")...)); err != nil {
		t.Fatal(err)
	}
	if srv.Calls() != calls+2 {
		t.Fatalf("server saw %d new requests, want 2", srv.Calls()-calls)
	}

	// Setting the limits of a tenant before its first request, and an unlimited budget.
	if err := b.SetTenantLimits("new", Limits{TokenBudget: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.For("new", "s").Complete(ctx, ask("too long for one token")); err != nil {
		t.Fatal(err)
	}
	if u := b.Usage("new"); u.Calls != 0 {
		t.Fatalf("a request over a 1-token budget reached the endpoint: %+v", u)
	}
	if err := b.SetTenantLimits("new", Limits{TokenBudget: -1}); err != nil {
		t.Fatal(err)
	}
	if out, err := b.For("new", "s").Complete(ctx, ask("too long for one token")); err != nil || out[0].Error != nil {
		t.Fatalf("unlimited: %v %v", err, out[0].Error)
	}

	// A bad value names the field and changes nothing.
	err := b.SetTenantLimits("acme", Limits{MaxConcurrency: -3})
	if err == nil || !strings.Contains(err.Error(), `tenant "acme": MaxConcurrency -3`) {
		t.Fatalf("err = %v", err)
	}
	if l := b.TenantLimits("acme"); l.MaxConcurrency != 1 {
		t.Fatalf("a refused change changed the limits: %+v", l)
	}
}

func TestSetTenantLimitsLowersConcurrency(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"ok": 1}`, Delay: 50 * time.Millisecond})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{MaxConcurrency: 8})
	if err := b.SetTenantLimits("acme", Limits{MaxConcurrency: 1}); err != nil {
		t.Fatal(err)
	}
	four := append(append(ask("a"), ask("b")...), append(ask("c"), ask("d")...)...)
	if _, err := b.For("acme", "s").Complete(context.Background(), four); err != nil {
		t.Fatal(err)
	}
	if got := srv.MaxInFlight(); got != 1 {
		t.Fatalf("server saw %d requests at once under MaxConcurrency 1", got)
	}
}

// TestCacheIsPerTenant: tenant B asking what tenant A asked gets no cache hit (it would
// learn that A judged that text, and pay nothing for it), completions and embeddings
// alike, with the disk cache too; A asking again does.
func TestCacheIsPerTenant(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"score": 1}`})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{CacheDir: t.TempDir(), EmbeddingModel: "embed-model"})
	ctx := context.Background()
	steps := []struct {
		tenant    string
		wantCache bool
	}{
		{"a", false},
		{"b", false}, // denied: A's answer
		{"a", true},  // allowed: its own
		{"b", true},
	}
	for i, s := range steps {
		out, err := b.For(s.tenant, "relevancy").Complete(ctx, ask("was it judged?"))
		if err != nil || out[0].Error != nil {
			t.Fatalf("step %d: %+v, %v", i, out, err)
		}
		if out[0].Cached != s.wantCache {
			t.Fatalf("step %d, tenant %s: cached %v, want %v", i, s.tenant, out[0].Cached, s.wantCache)
		}
		if _, err := b.For(s.tenant, "relevancy").Embed(ctx, []string{"was it embedded?"}); err != nil {
			t.Fatal(err)
		}
		if hits := b.Usage(s.tenant).CacheHits; s.wantCache != (hits > 0) {
			t.Fatalf("step %d, tenant %s: %d cache hits", i, s.tenant, hits)
		}
	}
	if u := b.Usage("b"); u.Calls != 2 || u.CacheHits != 2 {
		t.Fatalf("tenant b: %+v; want its own 2 calls (completion, embedding), then 2 hits", u)
	}
}
