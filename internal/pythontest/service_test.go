package pythontest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/judgetest"
)

// buildScorekit builds the scorekit command of this checkout once per test binary.
var buildScorekit = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "scorekit-pythontest-")
	if err != nil {
		return "", err
	}
	exe := filepath.Join(dir, "scorekit")
	cmd := exec.Command("go", "build", "-o", exe, "./cmd/scorekit")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/scorekit: %v\n%s", err, out)
	}
	return exe, nil
})

func scorekitBin(t testing.TB) string {
	t.Helper()
	exe, err := buildScorekit()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// service is a real scorekit serve of this checkout: a SQLite database, the given plugin
// folder, the sandbox required, a judge endpoint, tenant acme and its key.
type service struct {
	url, key string
	db       string
	bin      string
	stderr   *logBuffer
}

// writeManifest writes m into dir as NAME.plugin.json, its artifact absolute.
func writeManifest(t testing.TB, dir string, name, artifact string, env map[string]string, read []string) {
	t.Helper()
	sum, err := fileSum(artifact)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{"name": name, "runtime": "process", "artifact": artifact, "sha256": sum, "env": env, "read": read})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".plugin.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func startService(t *testing.T, plugins, judgeURL string) *service {
	t.Helper()
	bin := scorekitBin(t)
	dir := t.TempDir()
	s := &service{db: filepath.Join(dir, "scorekit.db"), bin: bin, stderr: &logBuffer{t: t}}
	s.cli(t, "tenants", "create", "acme")
	s.key = strings.TrimSpace(s.cli(t, "keys", "create", "--tenant", "acme"))
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", s.db, "--plugins", plugins, "--require-sandbox",
		"--judge-url", judgeURL, "--judge-model", "judge-model", "--judge-key-env", "SCOREKIT_TEST_OPERATOR_KEY")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SCOREKIT_SECRET_KEY="+base64.StdEncoding.EncodeToString(secret), "SCOREKIT_TEST_OPERATOR_KEY=sk-operator-2c9d")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`serving on (http://[0-9.]+:[0-9]+)`)
		for sc.Scan() {
			line := sc.Text()
			s.stderr.Write([]byte(line + "\n"))
			if m := re.FindStringSubmatch(line); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	select {
	case url, ok := <-found:
		if !ok {
			t.Fatalf("scorekit serve exited before serving:\n%s", s.stderr)
		}
		s.url = url
	case <-time.After(60 * time.Second):
		t.Fatalf("scorekit serve did not say where it listens within 60s:\n%s", s.stderr)
	}
	return s
}

func (s *service) cli(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(s.bin, append(args, "--db", s.db)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("scorekit %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// do sends one API request with the tenant's key and decodes the JSON answer into out.
func (s *service) do(t testing.TB, method, path string, body any, out any) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, s.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode
}

// TestPythonJudgeThroughService: the judge example, loaded by scorekit serve under the
// sandbox it requires, asks its question through the host's broker. The scripted judge gets
// the example's prompt with the tenant's own key (stored through the API, sealed), never the
// operator's; the same call again is answered from the broker's cache and reaches no
// endpoint. The plugin's environment holds neither key.
func TestPythonJudgeThroughService(t *testing.T) {
	judge := judgetest.New(judgetest.Rule{Match: "<question>", Reply: `{"score": 0.9, "reasoning": "It names the capital of France."}`},
		judgetest.Rule{Match: "Reply with the word OK.", Reply: "OK"}) // serve's check of the endpoint at start
	defer judge.Close()
	plugins := t.TempDir()
	example := filepath.Join(repoRoot(t), "examples", "python-judge", "answers_question.py")
	pythonExe(t)
	writeManifest(t, plugins, "python-judge", example, map[string]string{"PYTHONPATH": sdkSrc(t)}, []string{sdkSrc(t)})
	svc := startService(t, plugins, judge.URL())

	const tenantKey = "sk-tenant-acme-7d41c0e9"
	if code := svc.do(t, "PUT", "/v1/judge/endpoints/default/key", map[string]string{"key": tenantKey}, nil); code != http.StatusNoContent {
		t.Fatalf("store the tenant's key: HTTP %d", code)
	}
	type result struct {
		Status    string   `json:"status"`
		Score     *float64 `json:"score"`
		Passed    *bool    `json:"passed"`
		Reason    string   `json:"reason"`
		Steps     []struct{ Name, Prompt string }
		Telemetry struct {
			Runtime    string `json:"runtime"`
			JudgeCalls int    `json:"judge_calls"`
			CacheHits  int    `json:"cache_hits"`
		} `json:"telemetry"`
		Error *struct{ Code, Message string } `json:"error"`
	}
	body := map[string]any{"scorer": "answers_question", "steps": true, "run": map[string]any{
		"input": "What is the capital of France?", "output": "Paris is the capital of France.",
		"metadata": map[string]any{"purpose": "a geography tutor"}}}
	var first result
	if code := svc.do(t, "POST", "/v1/score", body, &first); code != http.StatusOK {
		t.Fatalf("score: HTTP %d %+v", code, first)
	}
	if first.Status != "scored" || first.Score == nil || *first.Score != 0.9 || first.Passed == nil || !*first.Passed ||
		first.Reason != "It names the capital of France." || first.Telemetry.Runtime != "process" || first.Telemetry.JudgeCalls != 1 {
		t.Fatalf("first call: %+v (error %+v)", first, first.Error)
	}
	reqs := asked(judge)
	if len(reqs) != 1 {
		t.Fatalf("the judge got %d requests, want 1", len(reqs))
	}
	prompt := reqs[0].LastUser()
	for _, want := range []string{"<question>\nWhat is the capital of France?\n</question>", "<answer>\nParis is the capital of France.\n</answer>",
		"The agent's purpose: a geography tutor"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the judge's prompt lacks %q:\n%s", want, prompt)
		}
	}
	if len(first.Steps) != 1 || first.Steps[0].Prompt != prompt {
		t.Errorf("the result's step does not record the prompt the judge got: %+v", first.Steps)
	}
	if reqs[0].Authorization != "Bearer "+tenantKey {
		t.Errorf("the judge got Authorization %q, want the tenant's key", reqs[0].Authorization)
	}

	var again result
	if code := svc.do(t, "POST", "/v1/score", body, &again); code != http.StatusOK {
		t.Fatalf("score again: HTTP %d", code)
	}
	if again.Status != "scored" || *again.Score != 0.9 || again.Telemetry.CacheHits != 1 || again.Telemetry.JudgeCalls != 0 {
		t.Errorf("the same call again: %+v; want the broker's cache to answer it", again)
	}
	if n := len(asked(judge)); n != 1 {
		t.Errorf("the judge got %d calls after the same call twice, want 1 (cached)", n)
	}

	// The plugin never sees a key: the sandboxed process's environment holds none.
	for _, pid := range processes(t, example) {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			continue
		}
		if bytes.Contains(env, []byte("sk-")) || bytes.Contains(env, []byte("SCOREKIT_SECRET_KEY")) {
			t.Errorf("the plugin's environment holds a key: %s", bytes.ReplaceAll(env, []byte{0}, []byte{' '}))
		}
	}
	if strings.Contains(svc.stderr.String(), tenantKey) {
		t.Errorf("serve's log holds the tenant's key")
	}
}

// asked are the requests the judge got from the scorer (not serve's check at start).
func asked(j *judgetest.Server) []judgetest.Request {
	var out []judgetest.Request
	for _, r := range j.Requests() {
		if strings.Contains(r.LastUser(), "<question>") {
			out = append(out, r)
		}
	}
	return out
}
