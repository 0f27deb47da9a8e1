package wasm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// TestCeilings: a manifest may ask for less than the engine's ceilings, never more; the
// error names the field and the ceiling.
func TestCeilings(t *testing.T) {
	guest := watGuest(t, "ok")
	tests := []struct {
		name    string
		ceil    host.Limits
		asks    host.Limits
		wantErr string
	}{
		{name: "denied: 4 GiB under the default 256 MiB ceiling", asks: host.Limits{MemoryMiB: 4096},
			wantErr: "limits.memory_mib is 4096, the host allows at most 256"},
		{name: "allowed: the default ceiling itself", asks: host.Limits{MemoryMiB: 256}},
		{name: "denied: a pool over the engine's ceiling", ceil: host.Limits{PoolSize: 2}, asks: host.Limits{PoolSize: 3},
			wantErr: "limits.pool_size is 3, the host allows at most 2"},
		{name: "allowed: a deadline under the engine's ceiling", ceil: host.Limits{TimeoutMS: 1000}, asks: host.Limits{TimeoutMS: 999}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngineWith(t, Options{Ceilings: tt.ceil})
			_, err := e.Load(context.Background(), manifestFor(t, guest, tt.asks))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, host.ErrOverCeiling) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Load error %v, want %v naming %q", err, host.ErrOverCeiling, tt.wantErr)
			}
		})
	}
	t.Run("defaults stay under a lower ceiling", func(t *testing.T) {
		e := newEngineWith(t, Options{Ceilings: host.Limits{MemoryMiB: 32}})
		b := open(t, e, goGuest(t, "goguest", goGuestPkg), host.Limits{}, "tester", "t")
		_, se := score(t, b, "bomb", nil)
		wantCode(t, se, sdk.CodeLimitExceeded, "memory limit of 32 MiB")
	})
	t.Run("the default deadline is the host's", func(t *testing.T) {
		if got := time.Duration(DefaultLimits().TimeoutMS) * time.Millisecond; got != host.DefaultTimeout {
			t.Fatalf("default timeout %v, want host.DefaultTimeout %v", got, host.DefaultTimeout)
		}
	})
}

// TestTenantLimits: a tenant's limits lower what the plugin was loaded with, for that
// tenant only.
func TestTenantLimits(t *testing.T) {
	e := newEngine(t, nil)
	ps, err := e.Load(context.Background(), manifestFor(t, goGuest(t, "goguest", goGuestPkg), host.Limits{MemoryMiB: 64}))
	if err != nil {
		t.Fatal(err)
	}
	tester := byName(t, ps, "tester")
	openFor := func(tn host.Tenant) *backend {
		b, err := tester.Open(context.Background(), tn, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close(context.Background()) })
		return b.(*backend)
	}
	small := openFor(host.Tenant{Name: "small", Limits: host.Limits{MemoryMiB: 24}})
	hasty := openFor(host.Tenant{Name: "hasty", Limits: host.Limits{TimeoutMS: 200}})
	big := openFor(host.Tenant{Name: "big"})
	t.Run("denied: the small tenant's memory", func(t *testing.T) {
		_, se := score(t, small, "bomb", nil)
		wantCode(t, se, sdk.CodeLimitExceeded, "memory limit of 24 MiB")
	})
	t.Run("denied: the small tenant's deadline", func(t *testing.T) {
		start := time.Now()
		_, se := score(t, hasty, "spin", nil)
		wantCode(t, se, sdk.CodeTimeout, "deadline")
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("stopped after %v; the tenant's 200 ms deadline did not apply", d)
		}
	})
	t.Run("allowed: the plugin's own limit for the other tenant", func(t *testing.T) {
		_, se := score(t, big, "bomb", nil)
		wantCode(t, se, sdk.CodeLimitExceeded, "memory limit of 64 MiB")
		res, se := score(t, big, "fine", nil)
		wantScored(t, res, se)
	})
	t.Run("a tenant cannot raise a limit", func(t *testing.T) {
		b := openFor(host.Tenant{Name: "greedy", Limits: host.Limits{MemoryMiB: 1024}})
		_, se := score(t, b, "bomb", nil)
		wantCode(t, se, sdk.CodeLimitExceeded, "memory limit of 64 MiB")
	})
}

// TestMemoryExhaustion: a Go guest that runs out of memory is limit_exceeded, whether it
// aborts on a large allocation or collects garbage ever longer on small ones, and well
// within its deadline even at the ceiling.
func TestMemoryExhaustion(t *testing.T) {
	e := newEngine(t, nil)
	guest := goGuest(t, "goguest", goGuestPkg)
	tests := []struct {
		name, input string
		limits      host.Limits
	}{
		{name: "1 MiB blocks at 64 MiB", input: "bomb", limits: host.Limits{}},
		{name: "1 MiB blocks at the 256 MiB ceiling", input: "bomb", limits: host.Limits{MemoryMiB: 256}},
		{name: "64-byte objects at 32 MiB, 20 s deadline", input: "crumbs", limits: host.Limits{MemoryMiB: 32, TimeoutMS: 20_000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := open(t, e, guest, tt.limits, "tester", "t")
			_, se := score(t, b, tt.input, nil)
			wantCode(t, se, sdk.CodeLimitExceeded, "raise limits.memory_mib")
			res, se := score(t, b, "fine", nil)
			wantScored(t, res, se)
		})
	}
}

// TestRandom: WASI random comes from the host's CSPRNG, so two instances, and two runs of
// the host, draw different bytes (wazero's default source is seeded and repeats them).
func TestRandom(t *testing.T) {
	guest := goGuest(t, "goguest", goGuestPkg)
	draw := func(e *Engine, tenant string) string {
		b := open(t, e, guest, host.Limits{}, "tester", tenant)
		res, se := score(t, b, "random", nil)
		wantScored(t, res, se)
		if len(res.Reason) != 32 {
			t.Fatalf("reason %q, want 16 random bytes in hex", res.Reason)
		}
		return res.Reason
	}
	e1, e2 := newEngine(t, nil), newEngine(t, nil)
	seen := map[string]string{}
	for _, d := range []struct{ where, bytes string }{
		{"engine 1, tenant a", draw(e1, "a")},
		{"engine 1, tenant b", draw(e1, "b")},
		{"engine 2, tenant a", draw(e2, "a")},
	} {
		if prev, dup := seen[d.bytes]; dup {
			t.Fatalf("%s drew the same bytes as %s: %s", d.where, prev, d.bytes)
		}
		seen[d.bytes] = d.where
	}
}

// TestSleepDeadline: a guest sleeping (WASI poll_oneoff) is woken and stopped at its
// deadline, not at the end of its sleep.
func TestSleepDeadline(t *testing.T) {
	e := newEngine(t, nil)
	b := open(t, e, goGuest(t, "goguest", goGuestPkg), host.Limits{TimeoutMS: 300}, "tester", "t")
	start := time.Now()
	_, se := score(t, b, "sleep", nil)
	wantCode(t, se, sdk.CodeTimeout, "deadline")
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("a one-hour sleep stopped after %v, want about the 300 ms deadline", d)
	}
	res, se := score(t, b, "fine", nil)
	wantScored(t, res, se)
}

// TestLoadFailures: modules that fail in ways only loading finds.
func TestLoadFailures(t *testing.T) {
	e := newEngineWith(t, Options{LoadTimeout: 500 * time.Millisecond})
	tests := []struct {
		name, wat, want string
		wantErr         error
	}{
		{name: "denied: a start function that never returns", wat: "loopstart", want: "the start function: timeout"},
		{name: "denied: an export the host reserves", wat: "reserved", wantErr: ErrReservedExport, want: "scorekit_host_stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := e.Load(context.Background(), manifestFor(t, watGuest(t, tt.wat), host.Limits{}))
			if err == nil || !strings.Contains(err.Error(), tt.want) || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Load error %v, want one containing %q", err, tt.want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("failed after %v, want about the 500 ms load deadline", d)
			}
		})
	}
	t.Run("allowed: the engine loads a good module after them", func(t *testing.T) {
		if _, err := e.Load(context.Background(), manifestFor(t, watGuest(t, "ok"), host.Limits{})); err != nil {
			t.Fatal(err)
		}
	})
}

func byName(t *testing.T, ps []host.Plugin, name string) host.Plugin {
	t.Helper()
	for _, p := range ps {
		if p.Info().Name == name {
			return p
		}
	}
	t.Fatalf("no scorer %s among %v", name, names(ps))
	return nil
}

// TestCodecNegotiation: the host speaks the binary codec only to a guest of its revision.
func TestCodecNegotiation(t *testing.T) {
	e := newEngine(t, nil)
	t.Run("allowed: the Go guest speaks this revision", func(t *testing.T) {
		b := open(t, e, goGuest(t, "goguest", goGuestPkg), host.Limits{}, "tester", "t")
		if !b.p.a.binary {
			t.Fatal("the Go guest is spoken to in JSON, want the binary codec")
		}
	})
	t.Run("denied: another revision is spoken to in JSON", func(t *testing.T) {
		b := open(t, e, watGuest(t, "oldcodec"), host.Limits{}, "ok", "t")
		if b.p.a.binary {
			t.Fatal("a guest of another codec revision is sent binary runs")
		}
		res, se := score(t, b, "", nil)
		wantScored(t, res, se)
	})
}
