package broker

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/sdk"
)

// newBroker returns a broker against srv whose backoff waits are recorded, not slept.
func newBroker(t *testing.T, srv *judgetest.Server, cfg Config) (*Broker, *[]time.Duration) {
	t.Helper()
	if cfg.BaseURL == "" {
		cfg.BaseURL = srv.URL()
	}
	if cfg.Model == "" {
		cfg.Model = "judge-model"
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	waits := &[]time.Duration{}
	b.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		*waits = append(*waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return b, waits
}

func ask(prompt string) []sdk.CompletionRequest {
	return []sdk.CompletionRequest{{Messages: []sdk.Message{{Role: "user", Content: prompt}}, JSON: true}}
}

func TestCompleteSendsConfigAndAccounts(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"score": 1}`})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{APIKey: "sk-test", Organization: "org-1"})
	m := b.Meter("acme", "relevancy")
	out, err := m.Complete(context.Background(), ask("What is the capital of France?"))
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Error != nil || out[0].Content != `{"score": 1}` || out[0].FinishReason != "stop" {
		t.Fatalf("response = %+v", out[0])
	}
	req := srv.Requests()[0]
	if req.Model != "judge-model" || !req.JSON || req.Temperature > 1e-6 || req.MaxTokens != 1024 {
		t.Fatalf("request = %+v", req)
	}
	if req.Authorization != "Bearer sk-test" || req.Organization != "org-1" {
		t.Fatalf("auth headers = %q %q", req.Authorization, req.Organization)
	}
	want := Usage{Calls: 1, PromptTokens: 6, CompletionTokens: 2}
	for name, got := range map[string]Usage{"meter": m.Usage(), "tenant": b.Usage("acme"), "scorer": b.ScorerUsage("acme", "relevancy")} {
		if got != want {
			t.Errorf("%s usage = %+v, want %+v", name, got, want)
		}
	}
	if other := b.Usage("other"); other != (Usage{}) {
		t.Errorf("another tenant was charged: %+v", other)
	}
	var tel sdk.Telemetry
	m.Record(&tel)
	if tel.JudgeCalls != 1 || tel.PromptTokens != 6 || tel.CompletionTokens != 2 {
		t.Errorf("telemetry = %+v", tel)
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name        string
		rules       []judgetest.Rule
		wantErr     string // substring of the response error; "" for success
		wantCode    string
		wantCalls   int // requests the server saw
		wantRetries int64
		minWait     time.Duration // the first recorded wait is at least this
	}{
		{"429 with Retry-After then success", []judgetest.Rule{{Status: 429, RetryAfter: "0.25", Times: 1}, {Reply: "ok"}}, "", "", 2, 1, 250 * time.Millisecond},
		{"500 twice then success", []judgetest.Rule{{Status: 500, Times: 2}, {Reply: "ok"}}, "", "", 3, 2, 0},
		{"503 always gives up", []judgetest.Rule{{Status: 503}}, "gave up after 2 retries", sdk.CodeJudgeError, 3, 2, 0},
		{"400 is not retried", []judgetest.Rule{{Status: 400}}, "HTTP 400", sdk.CodeJudgeError, 1, 0, 0},
		{"401 says to check the key", []judgetest.Rule{{Status: 401}}, "check the API key", sdk.CodeJudgeError, 1, 0, 0},
		{"404 says to check the model", []judgetest.Rule{{Status: 404}}, "check the judge URL and model", sdk.CodeJudgeError, 1, 0, 0},
		{"Retry-After beyond the cap fails", []judgetest.Rule{{Status: 429, RetryAfter: "3600"}}, "retry after 1h0m0s", sdk.CodeJudgeError, 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := judgetest.New(tt.rules...)
			defer srv.Close()
			b, waits := newBroker(t, srv, Config{MaxRetries: 2, BackoffBase: time.Millisecond})
			m := b.Meter("t", "s")
			out, err := m.Complete(context.Background(), ask("q"))
			if err != nil {
				t.Fatal(err)
			}
			r := out[0]
			if tt.wantErr == "" {
				if r.Error != nil || r.Content != "ok" {
					t.Fatalf("response = %+v, error %v", r, r.Error)
				}
			} else {
				if r.Error == nil || !strings.Contains(r.Error.Message, tt.wantErr) || r.Error.Code != tt.wantCode {
					t.Fatalf("error = %v, want code %s containing %q", r.Error, tt.wantCode, tt.wantErr)
				}
			}
			if srv.Calls() != tt.wantCalls {
				t.Errorf("server saw %d requests, want %d", srv.Calls(), tt.wantCalls)
			}
			if u := m.Usage(); u.Retries != tt.wantRetries || u.Calls != 1 {
				t.Errorf("usage = %+v, want 1 call and %d retries", u, tt.wantRetries)
			}
			if tt.minWait > 0 && (len(*waits) == 0 || (*waits)[0] < tt.minWait) {
				t.Errorf("waits = %v, want the first >= %v (Retry-After)", *waits, tt.minWait)
			}
		})
	}
}

func TestBackoffIsExponentialWithJitter(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Status: 500})
	defer srv.Close()
	base := 100 * time.Millisecond
	b, waits := newBroker(t, srv, Config{MaxRetries: 3, BackoffBase: base, BackoffMax: 300 * time.Millisecond})
	if _, err := b.Complete(context.Background(), ask("q")); err != nil {
		t.Fatal(err)
	}
	bounds := [][2]time.Duration{{base / 2, base}, {base, 2 * base}, {150 * time.Millisecond, 300 * time.Millisecond}}
	if len(*waits) != len(bounds) {
		t.Fatalf("waits = %v, want %d", *waits, len(bounds))
	}
	for i, w := range *waits {
		if w < bounds[i][0] || w > bounds[i][1] {
			t.Errorf("wait %d = %v, want in %v", i, w, bounds[i])
		}
	}
}

func TestRequestTimeout(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: "late", Delay: 10 * time.Second})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{RequestTimeout: 50 * time.Millisecond})
	out, err := b.Complete(context.Background(), ask("q"))
	if err != nil {
		t.Fatal(err)
	}
	if e := out[0].Error; e == nil || e.Code != sdk.CodeTimeout || !strings.Contains(e.Message, "timed out after 50ms") {
		t.Fatalf("error = %v, want a timeout", out[0].Error)
	}
	if srv.Calls() != 1 {
		t.Errorf("a timed-out request was retried: %d requests", srv.Calls())
	}
}

func TestCallDeadlineBoundsTheBatch(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: "late", Delay: 10 * time.Second})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := b.Complete(ctx, ask("q"))
	var e *sdk.Error
	if !errors.As(err, &e) || e.Code != sdk.CodeTimeout {
		t.Fatalf("err = %v, want a timeout batch error", err)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	for _, tt := range []struct {
		name  string
		limit int
	}{{"limit 2 holds", 2}, {"limit 6 allows 6", 6}} {
		t.Run(tt.name, func(t *testing.T) {
			srv := judgetest.New(judgetest.Rule{Reply: "ok", Delay: 100 * time.Millisecond})
			defer srv.Close()
			b, _ := newBroker(t, srv, Config{MaxConcurrency: tt.limit})
			var reqs []sdk.CompletionRequest
			for i := range 6 {
				reqs = append(reqs, ask(strings.Repeat("x ", i+1))...)
			}
			out, err := b.Complete(context.Background(), reqs)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range out {
				if r.Error != nil {
					t.Fatalf("request %d: %v", i, r.Error)
				}
			}
			if got := srv.MaxInFlight(); got > tt.limit || tt.limit == 6 && got < 3 {
				t.Fatalf("server saw %d requests at once with limit %d", got, tt.limit)
			}
		})
	}
}

func TestRateLimit(t *testing.T) {
	tests := []struct {
		name    string
		burst   int
		wantErr bool
	}{
		{"within burst", 2, false},
		{"beyond burst waits past the deadline", 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := judgetest.New(judgetest.Rule{Reply: "ok"})
			defer srv.Close()
			// One request every 100s: the second waits far past the call's deadline.
			b, _ := newBroker(t, srv, Config{RequestsPerSecond: 0.01, Burst: tt.burst, MaxConcurrency: 1})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			out, err := b.Complete(ctx, append(ask("a"), ask("b")...))
			if err != nil {
				t.Fatal(err)
			}
			failures := 0
			for _, r := range out {
				if r.Error != nil {
					failures++
					if r.Error.Code != sdk.CodeTimeout || !strings.Contains(r.Error.Message, "rate limit") {
						t.Errorf("error = %v, want a rate-limit timeout", r.Error)
					}
				}
			}
			if got := failures > 0; got != tt.wantErr {
				t.Fatalf("failures = %d, wantErr %v", failures, tt.wantErr)
			}
			if want := 2 - failures; srv.Calls() != want {
				t.Errorf("server saw %d requests, want %d", srv.Calls(), want)
			}
		})
	}
}

func TestTokenBudget(t *testing.T) {
	// Each request: 10 prompt words + 10 completion words = 20 tokens at the server.
	srv := judgetest.New(judgetest.Rule{Reply: "a b c d e f g h i j"})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{TokenBudget: 30, Tenants: map[string]Limits{"rich": {TokenBudget: 1000}}})
	prompt := func(i int) []sdk.CompletionRequest {
		return ask(strings.Repeat("w ", 9) + string(rune('a'+i)))
	}
	ctx := context.Background()
	// First request fits (reserve ~6, spend 20); second: 20 + ~6 fits, spends 40 > 30.
	for i := range 2 {
		out, err := b.For("poor", "s").Complete(ctx, prompt(i))
		if err != nil || out[0].Error != nil {
			t.Fatalf("request %d: %v %v", i, err, out[0].Error)
		}
	}
	_, err := b.For("poor", "s").Complete(ctx, prompt(2))
	if !errors.Is(err, ErrBudgetExhausted) {
		t.Fatalf("err = %v, want ErrBudgetExhausted", err)
	}
	var e *sdk.Error
	if !errors.As(err, &e) || e.Code != sdk.CodeLimitExceeded || !strings.Contains(e.Message, `tenant "poor"`) {
		t.Fatalf("err = %v, want limit_exceeded naming the tenant", err)
	}
	if srv.Calls() != 2 {
		t.Errorf("server saw %d requests, want 2", srv.Calls())
	}
	// Another tenant's budget is its own.
	out, err := b.For("rich", "s").Complete(ctx, prompt(3))
	if err != nil || out[0].Error != nil {
		t.Fatalf("rich tenant: %v %v", err, out[0].Error)
	}
}

func TestTokenBudgetTooSmallForOneRequest(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: "ok"})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{TokenBudget: 2})
	out, err := b.Complete(context.Background(), ask(strings.Repeat("long prompt ", 20)))
	if err != nil {
		t.Fatal(err)
	}
	if e := out[0].Error; e == nil || e.Code != sdk.CodeLimitExceeded {
		t.Fatalf("error = %v, want limit_exceeded", out[0].Error)
	}
	if srv.Calls() != 0 {
		t.Errorf("a request over budget reached the server")
	}
}

func TestCache(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"ok": true}`})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{})
	ctx := context.Background()
	// Three identical requests in one batch are three generations, not one.
	batch := append(append(ask("same"), ask("same")...), ask("same")...)
	if _, err := b.Complete(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if srv.Calls() != 3 {
		t.Fatalf("first batch: %d requests, want 3", srv.Calls())
	}
	m := b.Meter("default", "")
	out, err := m.Complete(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out {
		if !r.Cached || r.Content != `{"ok": true}` || r.PromptTokens != 0 {
			t.Fatalf("second batch response = %+v, want a cache hit", r)
		}
	}
	if srv.Calls() != 3 || m.Usage().Calls != 0 || m.Usage().CacheHits != 3 {
		t.Fatalf("second batch: server %d requests, usage %+v", srv.Calls(), m.Usage())
	}
	// Different parameters are a different request.
	other := ask("same")
	other[0].Temperature = 0.7
	if _, err := b.Complete(ctx, other); err != nil {
		t.Fatal(err)
	}
	if srv.Calls() != 4 {
		t.Fatalf("temperature did not change the cache key")
	}
}

func TestTruncatedAnswersAreNotCached(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"score": 0.`, FinishReason: "length"})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{})
	for range 2 {
		out, err := b.Complete(context.Background(), ask("q"))
		if err != nil || out[0].FinishReason != "length" {
			t.Fatalf("response = %+v, %v", out[0], err)
		}
	}
	if srv.Calls() != 2 {
		t.Fatalf("server saw %d requests, want 2", srv.Calls())
	}
}

func TestDiskCacheSurvivesANewBroker(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"ok": true}`})
	defer srv.Close()
	dir := t.TempDir()
	ctx := context.Background()
	first, _ := newBroker(t, srv, Config{CacheDir: dir, EmbeddingModel: "emb"})
	if _, err := first.Complete(ctx, ask("q")); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Embed(ctx, []string{"hello world"}); err != nil {
		t.Fatal(err)
	}
	first.Close()
	second, _ := newBroker(t, srv, Config{CacheDir: dir, EmbeddingModel: "emb"})
	out, err := second.Complete(ctx, ask("q"))
	if err != nil || !out[0].Cached || out[0].Content != `{"ok": true}` {
		t.Fatalf("response = %+v, %v; want a cache hit", out[0], err)
	}
	vecs, err := second.Embed(ctx, []string{"hello world"})
	if err != nil || len(vecs[0]) != judgetest.Dimensions {
		t.Fatalf("embed = %v, %v", len(vecs), err)
	}
	if srv.Calls() != 2 {
		t.Fatalf("server saw %d requests, want 2 (both from the first broker)", srv.Calls())
	}
}

func TestIdenticalConcurrentRequestsShareOneCall(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: "ok", Delay: 200 * time.Millisecond})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := b.Complete(context.Background(), ask("q"))
			if err != nil || out[0].Content != "ok" {
				t.Errorf("response = %+v, %v", out, err)
			}
		}()
	}
	wg.Wait()
	if srv.Calls() != 1 {
		t.Fatalf("server saw %d requests, want 1", srv.Calls())
	}
	if u := b.Usage(DefaultTenant); u.Calls != 1 || u.CacheHits != 3 {
		t.Fatalf("usage = %+v", u)
	}
}

func TestEmbed(t *testing.T) {
	srv := judgetest.New()
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{EmbeddingModel: "emb"})
	ctx := context.Background()
	texts := []string{"What is the capital of France?", "Paris", "What is the capital of France?"}
	vecs, err := b.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		want := judgetest.Embed(texts[i])
		for k := range v {
			if math.Abs(float64(v[k]-want[k])) > 1e-6 {
				t.Fatalf("vector %d differs at %d", i, k)
			}
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || len(reqs[0].Input) != 2 || reqs[0].Model != "emb" {
		t.Fatalf("requests = %+v, want one with the two distinct texts", reqs)
	}
	m := b.Meter("default", "")
	if _, err := m.Embed(ctx, texts); err != nil {
		t.Fatal(err)
	}
	if srv.Calls() != 1 || m.Usage().CacheHits != 3 {
		t.Fatalf("re-embedding: server %d requests, usage %+v", srv.Calls(), m.Usage())
	}
}

func TestEmbedWithoutModel(t *testing.T) {
	srv := judgetest.New()
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{})
	_, err := b.Embed(context.Background(), []string{"x"})
	if !errors.Is(err, ErrNoEmbeddingModel) || !strings.Contains(err.Error(), "embedding model") {
		t.Fatalf("err = %v", err)
	}
	// The fix it names is the setting that exists: the config file's judge.embedding_model
	// (there is no flag for it).
	if !strings.Contains(err.Error(), "judge.embedding_model") || strings.Contains(err.Error(), "--") {
		t.Fatalf("err = %v, want it to name judge.embedding_model in the config file and no flag", err)
	}
}

func TestEmbedFaultIsRetried(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Embeddings: true, Status: 502, Times: 1})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{EmbeddingModel: "emb", BackoffBase: time.Millisecond})
	if _, err := b.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if u := b.Usage(DefaultTenant); u.Retries != 1 || u.Calls != 1 {
		t.Fatalf("usage = %+v", u)
	}
}

func TestAzure(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: "ok"})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{BaseURL: srv.RootURL(), Model: "gpt-4o", APIType: APIAzure, APIKey: "azure-key",
		AzureDeployments: map[string]string{"gpt-4o": "prod-judge"}})
	out, err := b.Complete(context.Background(), ask("q"))
	if err != nil || out[0].Error != nil {
		t.Fatalf("%v %v", err, out[0].Error)
	}
	req := srv.Requests()[0]
	if req.Path != "/openai/deployments/prod-judge/chat/completions" || req.Authorization != "azure-key" {
		t.Fatalf("request = %s with key %q", req.Path, req.Authorization)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no url", Config{Model: "m"}, "BaseURL is empty"},
		{"bad url", Config{BaseURL: "localhost:8080", Model: "m"}, "http:// or https://"},
		{"no model", Config{BaseURL: "http://x"}, "Model is empty"},
		{"bad api type", Config{BaseURL: "http://x", Model: "m", APIType: "bedrock"}, `APIType "bedrock"`},
		{"budget below -1", Config{BaseURL: "http://x", Model: "m", TokenBudget: -2}, "TokenBudget -2: want > 0, 0 for the default or -1 for unlimited"},
		{"batch cap below -1", Config{BaseURL: "http://x", Model: "m", MaxBatch: -5}, "MaxBatch -5"},
		{"negative response cap", Config{BaseURL: "http://x", Model: "m", MaxResponseBytes: -1}, "MaxResponseBytes -1"},
		{"empty allowed model", Config{BaseURL: "http://x", Model: "m", Models: []string{"big", " "}}, "Models[1] is empty"},
		{"bad tenant", Config{BaseURL: "http://x", Model: "m", Tenants: map[string]Limits{"a": {MaxConcurrency: -1}}}, `tenant "a": MaxConcurrency -1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestClosedBrokerRefuses(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: "ok"})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{})
	b.Close()
	if _, err := b.Complete(context.Background(), ask("q")); !errors.Is(err, ErrClosed) {
		t.Fatalf("err = %v", err)
	}
}
