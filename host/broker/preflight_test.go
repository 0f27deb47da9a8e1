package broker

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/judgetest"
)

// closedURL returns the URL of a port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

func TestPreflight(t *testing.T) {
	type setup struct {
		key    string   // the server requires this key; "" for none
		models []string // the server's models list; nil for none
		rules  []judgetest.Rule
		cfg    Config
		badURL string // "closed" for a port nothing listens on, or a path under the server
	}
	tests := []struct {
		name        string
		setup       setup
		wantSetting string   // "" for success
		wantMsg     []string // substrings of the message
		wantChat    int      // chat completions the server saw
	}{
		{"listed model and right key: one free models call", setup{key: "sk-1", models: []string{"judge-model", "m2"}, cfg: Config{APIKey: "sk-1"}}, "", nil, 0},
		{"keyless local endpoint with a models list", setup{models: []string{"judge-model"}}, "", nil, 0},
		{"endpoint without a models list: a 1-token completion", setup{rules: []judgetest.Rule{{Reply: "OK"}}}, "", nil, 1},
		{"wrong URL: nothing listens", setup{badURL: "closed"}, SettingURL, []string{"cannot reach the judge", "connection refused"}, 0},
		{"wrong URL: a path that is not the API", setup{badURL: "/wrong", rules: []judgetest.Rule{{Reply: "OK"}}}, SettingURL, []string{"HTTP 404", "usually ends in /v1"}, 0},
		{"wrong URL: a web page answering 200", setup{rules: []judgetest.Rule{{Raw: "<html>hello</html>"}}}, SettingURL, []string{"not a completion"}, 1},
		{"wrong model with a models list", setup{models: []string{"gpt-4o-mini", "gpt-4o"}, rules: []judgetest.Rule{{Reply: "OK"}}}, SettingModel, []string{`does not serve model "judge-model"`, "HTTP 404", "does not exist", "lists gpt-4o-mini, gpt-4o"}, 1},
		{"missing key", setup{key: "sk-1", models: []string{"judge-model"}}, SettingKey, []string{"no API key was sent", "HTTP 401"}, 0},
		{"wrong key", setup{key: "sk-1", models: []string{"judge-model"}, cfg: Config{APIKey: "sk-2"}}, SettingKey, []string{"the API key was refused"}, 0},
		{"wrong key without a models list", setup{key: "sk-1", rules: []judgetest.Rule{{Reply: "OK"}}, cfg: Config{APIKey: "sk-2"}}, SettingKey, []string{"POST /chat/completions", "HTTP 401"}, 1},
		{"rate limited twice: the endpoint is there and busy", setup{rules: []judgetest.Rule{{Status: 429}}}, "", nil, 2},
		{"a key without quota", setup{rules: []judgetest.Rule{{Status: 429, Code: "insufficient_quota"}}}, SettingKey, []string{"no quota left"}, 1},
		{"endpoint down", setup{rules: []judgetest.Rule{{Status: 503}}}, SettingURL, []string{"HTTP 503 twice", "may be down"}, 2},
		{"down once, then up", setup{rules: []judgetest.Rule{{Status: 503, Times: 1}, {Reply: "OK"}}}, "", nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := judgetest.New(tt.setup.rules...)
			defer srv.Close()
			if tt.setup.key != "" {
				srv.RequireKey(tt.setup.key)
			}
			if tt.setup.models != nil {
				srv.ListModels(tt.setup.models...)
			}
			cfg := tt.setup.cfg
			switch tt.setup.badURL {
			case "":
			case "closed":
				cfg.BaseURL = closedURL(t)
			default:
				cfg.BaseURL = srv.RootURL() + tt.setup.badURL
			}
			b, _ := newBroker(t, srv, cfg)
			b.sleep = func(ctx context.Context, d time.Duration) error { return nil }
			err := b.Preflight(context.Background())
			chats := 0
			for _, r := range srv.Requests() {
				if strings.HasSuffix(r.Path, "/chat/completions") {
					chats++
					if r.MaxTokens != 1 {
						t.Errorf("the preflight completion asked for %d tokens, want 1", r.MaxTokens)
					}
				}
			}
			if chats != tt.wantChat {
				t.Errorf("server saw %d chat completions, want %d", chats, tt.wantChat)
			}
			if tt.wantSetting == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			var pe *PreflightError
			if !errors.As(err, &pe) || !errors.Is(err, ErrPreflight) || pe.Setting != tt.wantSetting {
				t.Fatalf("err = %v, want a PreflightError blaming %s", err, tt.wantSetting)
			}
			for _, m := range tt.wantMsg {
				if !strings.Contains(pe.Message, m) {
					t.Errorf("message %q lacks %q", pe.Message, m)
				}
			}
			if u := b.Usage(DefaultTenant); u != (Usage{}) {
				t.Errorf("the preflight was charged to a tenant: %+v", u)
			}
		})
	}
}
