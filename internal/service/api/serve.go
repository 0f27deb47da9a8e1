package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// ServeOptions bound what one client can hold of the server. Zero fields take defaults.
type ServeOptions struct {
	// ReadHeaderTimeout bounds reading a request's headers. Default 10s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included: a client sending one
	// byte a second is cut off. Default 60s.
	ReadTimeout time.Duration
	// WriteTimeout bounds handling and writing a response; it must exceed the longest
	// ?wait. Default MaxWait + 30s.
	WriteTimeout time.Duration
	// IdleTimeout bounds a kept-alive connection between requests. Default 120s.
	IdleTimeout time.Duration
	// MaxConns caps open connections; one more is answered 503 with Retry-After and
	// closed. Default 1024.
	MaxConns int
	// Grace is how long shutdown waits for requests in flight. Default 10s.
	Grace time.Duration
}

func (o ServeOptions) withDefaults() ServeOptions {
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = 10 * time.Second
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 60 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultMaxWait + 30*time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 120 * time.Second
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 1024
	}
	if o.Grace <= 0 {
		o.Grace = 10 * time.Second
	}
	return o
}

// Serve serves h on ln until ctx is done, then stops taking connections and waits up to
// o.Grace for the requests in flight to finish (SIGTERM and SIGINT end ctx in the command
// line). It returns nil after a clean drain.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, o ServeOptions) error {
	o = o.withDefaults()
	ln = &capListener{Listener: ln, max: int64(o.MaxConns)}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.Grace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
		return fmt.Errorf("serve: requests still in flight after the %s grace period were cut off", o.Grace)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// capListener answers connections beyond max with 503 and closes them, so a flood of
// idle connections cannot hold every file descriptor.
type capListener struct {
	net.Listener
	max  int64
	open atomic.Int64
}

// overloaded is the whole answer to a connection over the cap.
const overloaded = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: 162\r\n\r\n" +
	`{"title":"Service Unavailable","status":503,"code":"overloaded","detail":"the server holds as many connections as it takes; retry after the time in Retry-After"}` + "\n"

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			go func() {
				_ = c.SetWriteDeadline(time.Now().Add(time.Second))
				_, _ = c.Write([]byte(overloaded))
				_ = c.Close()
			}()
			continue
		}
		return &countedConn{Conn: c, l: l}, nil
	}
}

type countedConn struct {
	net.Conn
	l    *capListener
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}
