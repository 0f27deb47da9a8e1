package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/scorekit/scorekit/internal/judgetest"
)

// fakeEndpoint is an OpenAI-compatible chat endpoint that rates every output 4 (of 5) and
// counts the completions and the API keys it saw. It lists model "m", so the preflight
// costs no completion.
func fakeEndpoint(t *testing.T, calls *atomic.Int32, auth *atomic.Value) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
			return
		}
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		calls.Add(1)
		auth.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,`+
			`"message":{"role":"assistant","content":"{\"rating\": 4}"},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestScoreWithJudge(t *testing.T) {
	var calls atomic.Int32
	var auth atomic.Value
	ts := fakeEndpoint(t, &calls, &auth)
	t.Setenv("SCOREKIT_TEST_KEY", "sk-test")
	cache := t.TempDir()
	configFile := writeFile(t, "config.json", fmt.Sprintf(`{"judge":{"url":%q,"model":"m","key_env":"SCOREKIT_TEST_KEY"}}`, ts.URL+"/v1"))

	cases := []struct {
		name      string
		args      []string
		wantCalls int32 // endpoint calls made by this case
	}{
		{"flags", []string{"--judge-url", ts.URL + "/v1", "--judge-model", "m", "--judge-key-env", "SCOREKIT_TEST_KEY", "--judge-cache", cache}, 1},
		{"same run again is answered from the disk cache", []string{"--judge-url", ts.URL + "/v1", "--judge-model", "m", "--judge-key-env", "SCOREKIT_TEST_KEY", "--judge-cache", cache}, 0},
		{"config file", []string{"--config", configFile}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := calls.Load()
			args := append([]string{"score", "--format", "jsonl", "--scorers", "judged"}, c.args...)
			r := runCLI(t, `{"id":"a","input":"q","output":"an answer"}`, append(args, "-")...)
			if r.code != ExitOK {
				t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
			}
			if got := calls.Load() - before; got != c.wantCalls {
				t.Errorf("endpoint called %d times, want %d", got, c.wantCalls)
			}
			if got := auth.Load(); got != "Bearer sk-test" {
				t.Errorf("Authorization %q, want the key from $SCOREKIT_TEST_KEY", got)
			}
			var rec record
			if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
				t.Fatalf("%v\n%s", err, r.stdout)
			}
			// 4 on the scorer's 1-5 range is 0.75 after the host.
			if rec.Status != "scored" || rec.Score == nil || *rec.Score != 0.75 {
				t.Errorf("status %s score %v, want scored 0.75 (reason %q, error %v)", rec.Status, rec.Score, rec.Reason, rec.Error)
			}
		})
	}
}

func TestScoreWithoutJudgeSkips(t *testing.T) {
	r := runCLI(t, `{"input":"q","output":"a"}`, "score", "--format", "jsonl", "--scorers", "judged", "-")
	if r.code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	var rec record
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Status != "skipped" || !strings.Contains(rec.Reason, "--judge-url") {
		t.Errorf("status %s reason %q, want skipped saying how to configure a judge", rec.Status, rec.Reason)
	}
}

// TestJudgePreflight: before the first run the judge is proved with one request; a wrong
// URL, model or key is a setup error (exit 1) that names the flag to fix, and no run is
// scored. A keyless local endpoint passes when marked "none".
func TestJudgePreflight(t *testing.T) {
	srv := judgetest.New(judgetest.Rule{Reply: `{"rating": 4}`})
	defer srv.Close()
	srv.RequireKey("sk-right")
	srv.ListModels("m")
	local := judgetest.New(judgetest.Rule{Reply: `{"rating": 4}`})
	defer local.Close()
	local.ListModels("llama3")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close()
	t.Setenv("SCOREKIT_RIGHT_KEY", "sk-right")
	t.Setenv("SCOREKIT_WRONG_KEY", "sk-wrong")
	t.Setenv("SCOREKIT_UNSET_KEY", "")

	cases := []struct {
		name     string
		scorers  string
		args     []string
		wantCode int
		wantMsg  []string // substrings of stderr
	}{
		{"right URL, model and key", "judged", []string{"--judge-url", srv.URL(), "--judge-model", "m", "--judge-key-env", "SCOREKIT_RIGHT_KEY"}, ExitOK, nil},
		{"wrong URL", "judged", []string{"--judge-url", closed, "--judge-model", "m", "--judge-key-env", "SCOREKIT_RIGHT_KEY"}, ExitSetup,
			[]string{"cannot reach the judge", "fix --judge-url"}},
		{"wrong model", "judged", []string{"--judge-url", srv.URL(), "--judge-model", "gpt-5-typo", "--judge-key-env", "SCOREKIT_RIGHT_KEY"}, ExitSetup,
			[]string{`does not serve model "gpt-5-typo"`, "lists m", "fix --judge-model"}},
		{"wrong key", "judged", []string{"--judge-url", srv.URL(), "--judge-model", "m", "--judge-key-env", "SCOREKIT_WRONG_KEY"}, ExitSetup,
			[]string{"the API key was refused", "fix --judge-key-env", "$SCOREKIT_WRONG_KEY"}},
		{"key variable not set", "judged", []string{"--judge-url", srv.URL(), "--judge-model", "m", "--judge-key-env", "SCOREKIT_UNSET_KEY"}, ExitSetup,
			[]string{"SCOREKIT_UNSET_KEY is not set", "--judge-key-env none"}},
		{"a keyed endpoint marked none", "judged", []string{"--judge-url", srv.URL(), "--judge-model", "m", "--judge-key-env", "none"}, ExitSetup,
			[]string{"no API key was sent", `it is "none"`}},
		{"keyless local endpoint marked none", "judged", []string{"--judge-url", local.URL(), "--judge-model", "llama3", "--judge-key-env", "none"}, ExitOK, nil},
		{"keyless local endpoint not marked", "judged", []string{"--judge-url", local.URL(), "--judge-model", "llama3", "--judge-key-env", "SCOREKIT_UNSET_KEY"}, ExitSetup,
			[]string{"is not set"}},
		{"no scorer needs the judge: no check, no call", "words", []string{"--judge-url", closed, "--judge-model", "m", "--judge-key-env", "SCOREKIT_UNSET_KEY"}, ExitOK, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// chats counts completions beyond the preflight's 1-token one: scored runs.
			chats := func() int {
				n := 0
				for _, s := range []*judgetest.Server{srv, local} {
					for _, r := range s.Requests() {
						if strings.HasSuffix(r.Path, "/chat/completions") && r.MaxTokens != 1 {
							n++
						}
					}
				}
				return n
			}
			before := chats()
			args := append([]string{"score", "--format", "jsonl", "--scorers", c.scorers}, c.args...)
			r := runCLI(t, `{"id":"a","input":"q","output":"an answer"}`+"\n", append(args, "-")...)
			if r.code != c.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, c.wantCode, r.stderr)
			}
			for _, m := range c.wantMsg {
				if !strings.Contains(r.stderr, m) {
					t.Errorf("stderr lacks %q:\n%s", m, r.stderr)
				}
			}
			if c.wantCode != ExitOK {
				if r.stdout != "" || chats() != before {
					t.Errorf("a failed preflight still scored: stdout %q, %d completions", r.stdout, chats()-before)
				}
				return
			}
			var rec record
			if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil || rec.Status != "scored" {
				t.Errorf("record %+v (%v), want scored", rec, err)
			}
		})
	}
}
