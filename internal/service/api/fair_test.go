package api_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service/api"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// TestSlowBodiesCannotLockOutOtherTenants: tenant A opens as many requests as the server
// takes at once, each sending its body one byte and then nothing. A holds at most its own
// caps (the rest of its requests are refused 429 before their bodies are read); tenant
// B's requests and health probes are served meanwhile; a request without a key is
// refused before its body is read. Loopback only; every loop is bounded in count, every
// wait in time.
func TestSlowBodiesCannotLockOutOtherTenants(t *testing.T) {
	const maxInFlight, perTenant, bodies = 32, 8, 4
	env := servicetest.New(t, filepath.Join(t.TempDir(), "scorekit.db"), servicetest.Options{NoWorkers: true})
	ctx := context.Background()
	keys := map[string]string{}
	for _, name := range []string{"a", "b"} {
		if _, err := env.Service.CreateTenant(ctx, name, store.Policy{}); err != nil {
			t.Fatal(err)
		}
		key, _, err := env.Service.CreateKey(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		keys[name] = key
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- api.Serve(sctx, ln, api.New(env.Service, api.Options{MaxInFlight: maxInFlight, MaxInFlightPerTenant: perTenant, MaxBodiesPerTenant: bodies}),
			api.ServeOptions{ReadTimeout: 30 * time.Second, Grace: time.Second})
	}()
	addr := ln.Addr().String()

	// slow starts a request whose body never comes, and reports its answer, if any.
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
		cancel()
		<-done
	})
	slow := func(key string, answers chan<- int) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		auth := ""
		if key != "" {
			auth = "Authorization: Bearer " + key + "\r\n"
		}
		fmt.Fprintf(c, "POST /v1/runs HTTP/1.1\r\nHost: x\r\n%sContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", auth)
		go func() {
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return // held until the test closes it
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			answers <- resp.StatusCode
		}()
	}

	t.Run("denied: a request without a key is refused before its body", func(t *testing.T) {
		answers := make(chan int, 1)
		slow("", answers)
		select {
		case st := <-answers:
			if st != http.StatusUnauthorized {
				t.Fatalf("a request without a key: %d, want 401", st)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a request without a key was not answered while its body was missing")
		}
	})

	answers := make(chan int, maxInFlight)
	for range maxInFlight {
		slow(keys["a"], answers)
	}
	// A's requests over its caps are answered at once; the others wait for bodies.
	refused := 0
	deadline := time.After(15 * time.Second)
	for refused < maxInFlight-bodies {
		select {
		case st := <-answers:
			if st != http.StatusTooManyRequests {
				t.Fatalf("tenant a's request over its cap: %d, want 429", st)
			}
			refused++
		case <-deadline:
			t.Fatalf("%d of tenant a's %d slow requests were refused within 15s; want all but %d", refused, maxInFlight, bodies)
		}
	}

	t.Run("allowed: tenant b and health probes while a holds its caps", func(t *testing.T) {
		b := client{t: t, url: "http://" + addr, key: keys["b"]}
		var served atomic.Int64
		var wg sync.WaitGroup
		// b's own requests stay well within b's caps (half its bodies at once: a slot frees just
		// after the client reads its answer): what is tested is that a
		// cannot lock b out, not b's caps; ten at once raced b's cap under load.
		sem := make(chan struct{}, bodies/2)
		for i := range 10 {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				if r := b.do("POST", "/v1/runs", []byte(fmt.Sprintf(`{"id": "b%d", "agent": "bot", "output": "x"}`, i))); r.status == 200 {
					served.Add(1)
				} else {
					t.Errorf("tenant b: %d %s", r.status, r.body)
				}
				if st := get(t, addr, "/healthz"); st == 200 {
					served.Add(1)
				} else {
					t.Errorf("healthz: %d", st)
				}
			})
		}
		wg.Wait()
		if served.Load() != 20 {
			t.Fatalf("%d of 20 requests served", served.Load())
		}
	})
	select {
	case st := <-answers:
		t.Fatalf("a request of a that holds its body was answered %d; it should still be waiting", st)
	default:
	}
}
