package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service"
)

// serve drains on SIGTERM and on SIGINT: a request in flight (a GET that waits 3 s on an
// evaluation nobody works) gets its answer, new connections are refused, and the process
// exits 0 within the grace period.
func TestServeDrainsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "scorekit.db")
			if out := scorekit(t, dir, "runs", "import", "--db", db, filepath.Join(root, "examples", "service", "assistant.jsonl")); !strings.Contains(out, "stored") {
				t.Fatalf("import: %s", out)
			}
			addr := freeAddr(t)
			p := start(t, dir, "serve", "--addr", addr, "--db", db, "--workers", "0", "--grace", "10s")
			waitHealthy(t, p, addr)
			c := client{url: "http://" + addr}
			var ev service.EvaluationView
			if st := c.do(t, "POST", "/v1/agents/assistant/evaluations", []byte(`{"limit": 2}`), &ev); st != 202 {
				t.Fatalf("create: %d", st)
			}
			type answer struct {
				status int
				err    error
				took   time.Duration
			}
			inflight := make(chan answer, 1)
			began := time.Now()
			go func() {
				resp, err := http.Get(c.url + "/v1/evaluations/" + ev.ID + "?wait=3s")
				a := answer{err: err, took: time.Since(began)}
				if err == nil {
					a.status = resp.StatusCode
					resp.Body.Close()
				}
				inflight <- a
			}()
			time.Sleep(500 * time.Millisecond)
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond)
			if resp, err := http.Get(c.url + "/healthz"); err == nil {
				resp.Body.Close()
				t.Errorf("a new request after %s was served (%d); want the listener closed", sig, resp.StatusCode)
			}
			a := <-inflight
			if a.err != nil || a.status != 200 || a.took < 3*time.Second {
				t.Fatalf("request in flight: status %d after %s, %v; want 200 after its 3s wait", a.status, a.took, a.err)
			}
			if err := p.wait(t, 15*time.Second); err != nil {
				t.Fatalf("serve exited with %v after %s; want 0:\n%s", err, sig, p.stderr.String())
			}
		})
	}
}

// Without a key, serve runs open on loopback and says so; on another address it refuses,
// and with a key it warns that it is reachable beyond this machine.
func TestServeOpenOnlyOnLoopback(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "scorekit.db")
	addr := freeAddr(t)
	p := start(t, dir, "serve", "--addr", addr, "--db", db)
	waitHealthy(t, p, addr)
	waitOutput(t, p, "serving open for one user on loopback")
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.wait(t, 15*time.Second)

	q := start(t, dir, "serve", "--addr", "0.0.0.0:0", "--db", db)
	if err := q.wait(t, 30*time.Second); err == nil || !strings.Contains(q.stderr.String(), "refusing to serve on") {
		t.Fatalf("serve without keys on 0.0.0.0: %v\n%s", err, q.stderr.String())
	}
	scorekit(t, dir, "tenants", "create", "acme", "--db", db)
	scorekit(t, dir, "keys", "create", "--tenant", "acme", "--db", db)
	port := strings.TrimPrefix(freeAddr(t), "127.0.0.1:")
	r := start(t, dir, "serve", "--addr", "0.0.0.0:"+port, "--db", db)
	waitHealthy(t, r, "127.0.0.1:"+port)
	waitOutput(t, r, "warning: serving on")
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%s/v1/agents", port))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("with a key in the database a request without one is %d; want 401", resp.StatusCode)
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	_ = r.wait(t, 15*time.Second)
}

// waitOutput waits for p's stderr to say want (it is copied from a pipe, after the fact).
func waitOutput(t *testing.T, p *proc, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(p.stderr.String(), want) {
			return
		}
	}
	t.Fatalf("stderr lacks %q:\n%s", want, p.stderr.String())
}
