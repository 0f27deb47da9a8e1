package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service/api"
)

func TestScorersCommand(t *testing.T) {
	t.Run("text", func(t *testing.T) {
		r := runCLI(t, "", "scorers")
		if r.code != ExitOK {
			t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
		for _, want := range []string{
			"judged 0.1.0 (native)\n  Asks a judge.\n  range 1-5, threshold 0.7\n  dimensions: relevance 0.6, faithfulness 0.4\n  needs: judge\n",
			"words 1.2.0 (native)\n  Counts the words of the output.\n  range 0-1, threshold 0.5\n  needs: none\n  config: scorekit schema words\n",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("output lacks %q:\n%s", want, r.stdout)
			}
		}
	})
	t.Run("json", func(t *testing.T) {
		r := runCLI(t, "", "scorers", "--json")
		if r.code != ExitOK {
			t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
		}
		var list []scorerListing
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
			t.Fatalf("not a JSON array of scorers: %v\n%s", err, r.stdout)
		}
		if len(list) != 2 || list[0].Name != "judged" || list[0].Runtime != "native" || list[1].Name != "words" ||
			list[0].Range.Max != 5 || len(list[0].Dimensions) != 2 || list[1].Threshold != 0.5 {
			t.Errorf("list %+v", list)
		}
	})
}

func TestSchemaCommand(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string // substring of stdout, or of stderr when code is not 0
	}{
		{"list names", nil, ExitOK, "contract: completion_request, completion_response, info, result, run\nscorer configs: judged, words"},
		{"run schema", []string{"run"}, ExitOK, `"output"`},
		{"result schema by file name", []string{"result.schema.json"}, ExitOK, `"skipped"`},
		{"scorer config schema", []string{"words"}, ExitOK, `"per_word": {`},
		{"scorer without a schema takes an empty config", []string{"judged"}, ExitOK, `"additionalProperties": false`},
		{"unknown name", []string{"nope"}, ExitSetup, `schema "nope": not a contract schema`},
		{"too many args", []string{"a", "b"}, ExitSetup, "accepts at most 1 arg"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, "", append([]string{"schema"}, c.args...)...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, c.code, r.stderr)
			}
			got := r.stdout
			if c.code != ExitOK {
				got = r.stderr
			}
			if !strings.Contains(got, c.want) {
				t.Errorf("lacks %q:\n%s", c.want, got)
			}
			if c.code == ExitOK && len(c.args) == 1 && !json.Valid([]byte(r.stdout)) {
				t.Errorf("schema is not valid JSON:\n%s", r.stdout)
			}
		})
	}
}

func TestServe(t *testing.T) {
	e := &env{stderr: &strings.Builder{}, registry: testRegistry}
	s, err := e.openStack(t.Context(), filepath.Join(t.TempDir(), "scorekit.db"), hostOptions{timeout: time.Second},
		jobFlags{workers: 1, chunk: 10, attempts: 1, rescueAfter: time.Minute, poll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.close(context.Background()) })
	ts := httptest.NewServer(api.New(s.svc, api.Options{Open: true}))
	t.Cleanup(ts.Close)

	cases := []struct {
		name, method, path, body string
		status                   int
		want                     string
	}{
		{"health", "GET", "/healthz", "", 200, "ok"},
		{"scorers", "GET", "/v1/scorers", "", 200, `"name":"words"`},
		{"score", "POST", "/v1/score", `{"scorer":"words","run":{"input":"q","output":"a b"}}`, 200, `"status":"scored","score":0.5`},
		{"score with config", "POST", "/v1/score", `{"scorer":"words","run":{"input":"q","output":"a b"},"config":{"per_word":0.1}}`, 200, `"score":0.2`},
		{"skipped is a result", "POST", "/v1/score", `{"scorer":"judged","run":{"input":"q","output":"a"}}`, 200, `"status":"skipped"`},
		{"unknown scorer", "POST", "/v1/score", `{"scorer":"nope","run":{"output":"a"}}`, 404, `"code":"unknown_scorer"`},
		{"invalid run", "POST", "/v1/score", `{"scorer":"words","run":{"input":"q"}}`, 400, `"code":"invalid_run"`},
		{"bad config", "POST", "/v1/score", `{"scorer":"words","run":{"output":"a"},"config":{"x":1}}`, 400, `"code":"invalid_config"`},
		{"unknown request key", "POST", "/v1/score", `{"scorer":"words","runs":{}}`, 400, `runs`},
		{"trailing garbage", "POST", "/v1/score", `{"scorer":"words","run":{"output":"a"}} {}`, 400, `"code":"invalid_request"`},
		{"wrong method", "GET", "/v1/score", "", 405, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), c.method, ts.URL+c.path, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != c.status || !strings.Contains(string(b), c.want) {
				t.Errorf("%s %s: %d %q, want %d containing %q", c.method, c.path, resp.StatusCode, b, c.status, c.want)
			}
			for _, leak := range []string{"cli.", "scoreRequest", "run: run:", "Go struct"} {
				if strings.Contains(string(b), leak) {
					t.Errorf("%s %s: the answer shows %q: %s", c.method, c.path, leak, b)
				}
			}
		})
	}
}

func TestUsage(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string // in stdout for 0, stderr otherwise
	}{
		{"no command prints help", nil, ExitOK, "Available Commands"},
		{"help lists score", []string{"--help"}, ExitOK, "score"},
		{"unknown command", []string{"grade"}, ExitSetup, `unknown command "grade"`},
		{"score without a file", []string{"score"}, ExitSetup, "accepts 1 arg(s), received 0"},
		{"unknown flag", []string{"score", "--colour", "-"}, ExitSetup, "unknown flag: --colour"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, "", c.args...)
			got := r.stdout
			if c.code != ExitOK {
				got = r.stderr
			}
			if r.code != c.code || !strings.Contains(got, c.want) {
				t.Errorf("exit %d, want %d; output lacks %q:\n%s%s", r.code, c.code, c.want, r.stdout, r.stderr)
			}
		})
	}
}
