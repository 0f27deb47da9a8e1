package service_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorekit/scorekit/internal/service"
	"github.com/scorekit/scorekit/internal/service/store"
	"github.com/scorekit/scorekit/internal/servicetest"
)

// heavyModule is a valid module of one function whose body is about size bytes of
// arithmetic: compiling it takes hundreds of MiB (the shape of the hostile publish of issue
// 30), and it exports nothing ABI v1 asks for, so the check refuses it once compiled. seed
// makes each module's bytes (and so its digest) its own.
func heavyModule(size, seed int) []byte {
	var body bytes.Buffer
	body.WriteByte(0)           // no locals
	body.Write([]byte{0x20, 0}) // local.get 0
	for body.Len() < size {
		body.Write([]byte{0x41, 1, 0x6a}) // i32.const 1; i32.add
	}
	body.Write([]byte{0x41})
	body.Write(sleb(int64(seed)))
	body.Write([]byte{0x6a, 0x0b}) // i32.const seed; i32.add; end
	code := append(uleb(1), append(uleb(uint64(body.Len())), body.Bytes()...)...)
	sec := func(id byte, payload []byte) []byte {
		return append(append([]byte{id}, uleb(uint64(len(payload)))...), payload...)
	}
	var m []byte
	m = append(m, "\x00asm\x01\x00\x00\x00"...)
	m = append(m, sec(1, []byte{1, 0x60, 1, 0x7f, 1, 0x7f})...) // (func (param i32) (result i32))
	m = append(m, sec(3, []byte{1, 0})...)
	m = append(m, sec(10, code)...)
	return m
}

func uleb(v uint64) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b |= 0x80
		}
		out = append(out, b)
		if v == 0 {
			return out
		}
	}
}

func sleb(v int64) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0) {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

// childrenRSS is the resident memory of this process's children together, and how many
// there are (read from /proc: the checking children of wasm.Vet are the only ones here).
func childrenRSS() (rss int64, n int) {
	self := strconv.Itoa(os.Getpid())
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces; fields follow the last ')'.
		rest := b[bytes.LastIndexByte(b, ')')+2:]
		f := bytes.Fields(rest)
		if len(f) < 22 || string(f[1]) != self {
			continue
		}
		pages, _ := strconv.ParseInt(string(f[21]), 10, 64)
		rss += pages * int64(os.Getpagesize())
		n++
	}
	return rss, n
}

// peakChildren samples childrenRSS until stop is closed and returns the peaks.
func peakChildren(stop <-chan struct{}) func() (rss int64, n int) {
	var mu sync.Mutex
	var peakRSS int64
	var peakN int
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			rss, n := childrenRSS()
			mu.Lock()
			peakRSS, peakN = max(peakRSS, rss), max(peakN, n)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() (int64, int) {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return peakRSS, peakN
	}
}

// BenchmarkConcurrentPublish is issue 30's publish repro scaled down: 6 publishes of 1 MiB
// one-function modules at once, and the checking children's resident memory together
// sampled every 10 ms.
//
//   - at-quota: the tenant is at its scorer quota, so every publish is refused.
//   - heavy: the tenant has room; every module compiles and is refused after (it
//     exports nothing).
//   - heavy-tenants: as heavy, one publish from each of 6 tenants.
//
// Metrics: peak-children-MiB (all the checking children's RSS at its highest),
// peak-children (how many ran at once), refused (publishes refused, of 6), busy (of those,
// refused for want of a turn: 429), ms/op.
func BenchmarkConcurrentPublish(b *testing.B) {
	const n, size = 6, 1 << 20
	ctx := context.Background()
	for _, tc := range []struct {
		name             string
		atQuota, tenants bool
	}{{"at-quota", true, false}, {"heavy", false, false}, {"heavy-tenants", false, true}} {
		atQuota := tc.atQuota
		b.Run(tc.name, func(b *testing.B) {
			var peakRSS int64
			var peakN int
			var refused, busy atomic.Int64
			for i := range b.N {
				b.StopTimer()
				env := servicetest.New(b, filepath.Join(b.TempDir(), "scorekit.db"), servicetest.Options{NoWorkers: true,
					Publish: service.PublishConfig{MaxScorers: 1}})
				ts := make([]store.Tenant, n)
				for j := range ts {
					name := "acme"
					if tc.tenants {
						name = fmt.Sprint("t", j)
					}
					t, err := env.Service.Tenant(ctx, name)
					if errors.Is(err, service.ErrNotFound) {
						t, err = env.Service.CreateTenant(ctx, name, store.Policy{})
					}
					if err != nil {
						b.Fatal(err)
					}
					ts[j] = t
				}
				t := ts[0]
				if atQuota {
					if _, err := env.Service.Publish(ctx, t, service.PublishRequest{Name: "first", Base: "prescreen"}); err != nil {
						b.Fatal(err)
					}
				}
				stop := make(chan struct{})
				peaks := peakChildren(stop)
				b.StartTimer()
				var wg sync.WaitGroup
				for j := range n {
					wg.Go(func() {
						_, err := env.Service.Publish(ctx, ts[j], service.PublishRequest{Name: fmt.Sprintf("m%d", j), Module: heavyModule(size, i*n+j)})
						if err != nil {
							refused.Add(1)
						}
						// Matched by its text, which the build before these bounds compiles too.
						if err != nil && strings.Contains(err.Error(), "Retry-After") {
							busy.Add(1)
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				close(stop)
				rss, c := peaks()
				peakRSS, peakN = max(peakRSS, rss), max(peakN, c)
				b.StartTimer()
			}
			b.ReportMetric(float64(peakRSS)/(1<<20), "peak-children-MiB")
			b.ReportMetric(float64(peakN), "peak-children")
			b.ReportMetric(float64(refused.Load())/float64(b.N), "refused")
			b.ReportMetric(float64(busy.Load())/float64(b.N), "busy")
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
		})
	}
}
