// Package e2e runs the built scorekit binary as real processes: the service scaled out
// over PostgreSQL with a worker killed mid-way, serve draining on SIGTERM and SIGINT, and
// the README's service commands as written.
package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/pgtest"
	"github.com/scorekit/scorekit/internal/testkit"
)

var (
	bin  string // the scorekit binary under test
	root string // the module root
)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return 0, err
	}
	root = filepath.Dir(strings.TrimSpace(string(out)))
	dir, err := os.MkdirTemp("", "scorekit-e2e-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "scorekit")
	build := exec.Command("go", "build", "-o", bin, "./cmd/scorekit")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("go build ./cmd/scorekit: %v\n%s", err, out)
	}
	pgtest.Main(m)
	return 0, nil
}

// postgres returns a new database on the package's cluster, started on first use.
func postgres(t *testing.T) string { return pgtest.Shared(t).Database(t) }

// scorekit runs the binary to completion and returns its stdout.
func scorekit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scorekit %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// proc is a long-running scorekit process; it is killed when the test ends.
type proc struct {
	cmd    *exec.Cmd
	stderr *testkit.SyncBuffer
	done   chan error
}

func start(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	p := &proc{cmd: cmd, stderr: &testkit.SyncBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits for the process to exit and returns its error.
func (p *proc) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(d):
		t.Fatalf("%s still running after %s; stderr:\n%s", p.cmd.Args, d, p.stderr.String())
		return nil
	}
}

// freeAddr returns a loopback address with a free port.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitHealthy waits until serve answers /healthz.
func waitHealthy(t *testing.T, p *proc, addr string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("serve exited: %v\n%s", err, p.stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not answer on %s within 60s:\n%s", addr, p.stderr.String())
}

type client struct {
	url, key string
}

func (c client) do(t *testing.T, method, path string, body []byte, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, c.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
	if resp.StatusCode >= 300 {
		t.Logf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return resp.StatusCode
}

// lines returns the non-empty lines of s.
func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out
}
