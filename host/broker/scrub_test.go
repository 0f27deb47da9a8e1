package broker

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/judgetest"
	"github.com/scorekit/scorekit/sdk"
)

// An endpoint that answers with the Authorization header it got, in a completion, in an
// error and in an embeddings error: neither the operator's key nor a tenant's is in
// anything the broker returns (answers, cached answers, error messages, the errors they
// wrap) or caches. Before, completions were passed on as they came, and errors were
// scrubbed of the tenant's own key only.
func TestKeysNeverInAnswers(t *testing.T) {
	echo := `{"choice": "` + judgetest.EchoPlaceholder + `"}`
	main := judgetest.New(
		judgetest.Rule{Match: "refuse", Status: 401, EchoAuth: true},
		judgetest.Rule{Embeddings: true, Status: 403, EchoAuth: true},
		judgetest.Rule{Reply: echo, EchoAuth: true})
	defer main.Close()
	team := judgetest.New(judgetest.Rule{Reply: echo, EchoAuth: true})
	defer team.Close()
	b := routed(t, main, team, Config{MaxRetries: -1, EmbeddingModel: "embed-model"})
	const tenantKey = "sk-tenant-a-0123456789abcdef"
	if err := b.SetTenantKey("a", "team", tenantKey); err != nil {
		t.Fatal(err)
	}
	keys := []string{"sk-operator", "sk-operator-team", tenantKey}
	holdsKey := func(s string) bool {
		for _, k := range keys {
			if strings.Contains(s, k) {
				return true
			}
		}
		return false
	}

	for _, tt := range []struct {
		name, tenant string
		route        Route
		want         string
	}{
		{"the operator's key, default endpoint", "b", Route{}, `{"choice": "Bearer [operator key]"}`},
		{"the operator's key, another endpoint", "b", Route{Endpoint: "team"}, `{"choice": "Bearer [operator key]"}`},
		{"the tenant's own key", "a", Route{Endpoint: "team"}, `{"choice": "Bearer [tenant key]"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, call := range []string{"from the endpoint", "from the cache"} {
				resp, err := meterCall(b, tt.tenant, tt.route, "which one?")
				if err != nil || len(resp) != 1 || resp[0].Error != nil {
					t.Fatalf("%s: %+v, %v", call, resp, err)
				}
				if got := resp[0].Content; got != tt.want {
					t.Fatalf("%s: answer %q; want %q", call, got, tt.want)
				}
				if wantCached := call == "from the cache"; resp[0].Cached != wantCached {
					t.Fatalf("%s: cached %v", call, resp[0].Cached)
				}
			}
		})
	}

	// An error echoing the operator's key: the message, and every error it wraps.
	resp, err := meterCall(b, "b", Route{}, "refuse this")
	if err != nil || resp[0].Error == nil || !strings.Contains(resp[0].Error.Message, "you sent Authorization: Bearer [operator key]") || holdsKey(resp[0].Error.Message) {
		t.Fatalf("an echoed 401: %+v, %v; want the operator's key scrubbed", resp, err)
	}
	_, err = b.For("b", "s").Embed(context.Background(), []string{"some text"})
	if err == nil {
		t.Fatal("embeddings against a 403: no error")
	}
	var se *sdk.Error
	for e := err; e != nil; e = errors.Unwrap(e) {
		if holdsKey(e.Error()) {
			t.Fatalf("the embeddings error wraps one holding the key: %q", e.Error())
		}
	}
	if !errors.As(err, &se) || se.Code != sdk.CodeJudgeError || !strings.Contains(se.Message, "[operator key]") {
		t.Fatalf("the embeddings error: %v; want judge_error naming the scrubbed key", err)
	}

	// The forms JSON text gives a key: an answer decoded after the broker scrubbed it
	// holds none of them.
	const odd = `sk-a/b"c\d<e>&f`
	if err := b.SetTenantKey("c", DefaultEndpoint, odd); err != nil {
		t.Fatal(err)
	}
	for _, escapeHTML := range []bool{false, true} {
		var buf strings.Builder
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(escapeHTML)
		if err := enc.Encode(map[string]string{"choice": odd, "slashes": strings.ReplaceAll(odd, "/", `\/`)}); err != nil {
			t.Fatal(err)
		}
		text := strings.Replace(buf.String(), `\\/`, `\/`, 1) // the slash escaped as some encoders do
		var back map[string]string
		if err := json.Unmarshal([]byte(b.scrubText(text)), &back); err != nil {
			t.Fatal(err)
		}
		if back["choice"] != "[tenant key]" || back["slashes"] != "[tenant key]" {
			t.Fatalf("escape HTML %v: %q decodes to %q", escapeHTML, b.scrubText(text), back)
		}
	}

	// Removing a tenant's key stops scrubbing it: the broker holds it no more.
	if err := b.SetTenantKey("a", "team", ""); err != nil {
		t.Fatal(err)
	}
	if got := b.scrubText("x " + tenantKey); got != "x "+tenantKey {
		t.Fatalf("a removed key is still scrubbed: %q", got)
	}
}

// A key shorter than minScrubbedKey is a placeholder ("EMPTY", "none"), not a secret: it
// is left in answers, which it could otherwise make unreadable; a real key is scrubbed.
func TestShortKeyNotScrubbed(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"choice": "none", "auth": "` + judgetest.EchoPlaceholder + `"}`, EchoAuth: true})
	defer srv.Close()
	for _, tt := range []struct{ key, want string }{
		{"none", `{"choice": "none", "auth": "Bearer none"}`},
		{"sk-12345", `{"choice": "none", "auth": "Bearer [operator key]"}`},
	} {
		b, _ := newBroker(t, srv, Config{APIKey: tt.key})
		resp, err := b.Complete(context.Background(), ask("which?"))
		if err != nil || resp[0].Content != tt.want {
			t.Errorf("key %q: %+v, %v; want %s", tt.key, resp, err, tt.want)
		}
	}
}

// Preflight quotes what the endpoint said: without the operator's key it echoed.
func TestPreflightScrubsTheKey(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Status: 401, EchoAuth: true})
	defer srv.Close()
	b, _ := newBroker(t, srv, Config{APIKey: "sk-operator-preflight"})
	err := b.Preflight(context.Background())
	var pe *PreflightError
	if !errors.As(err, &pe) || pe.Setting != SettingKey || strings.Contains(err.Error(), "sk-operator-preflight") || !strings.Contains(err.Error(), "[operator key]") {
		t.Fatalf("preflight: %v; want the key setting blamed and the echoed key scrubbed", err)
	}
}
