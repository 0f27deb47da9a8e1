package wasm

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

const goGuestPkg = "./testdata/goguest"

// score runs one call and returns the result or the *sdk.Error the backend returned.
func score(t *testing.T, b *backend, input string, judge sdk.Judge) (sdk.Result, *sdk.Error) {
	t.Helper()
	res, err := b.Score(context.Background(), &sdk.Run{Input: input, Output: "one two three"}, judge)
	if err == nil {
		return res, nil
	}
	var se *sdk.Error
	if !errors.As(err, &se) {
		t.Fatalf("Score returned %T %v, want an *sdk.Error with a code", err, err)
	}
	return res, se
}

func wantCode(t *testing.T, se *sdk.Error, code, contains string) {
	t.Helper()
	if se == nil {
		t.Fatalf("call succeeded, want error code %s", code)
	}
	if se.Code != code || !strings.Contains(se.Message, contains) {
		t.Fatalf("error %q: %q, want code %q and a message containing %q", se.Code, se.Message, code, contains)
	}
}

func wantScored(t *testing.T, res sdk.Result, se *sdk.Error) {
	t.Helper()
	if se != nil {
		t.Fatalf("call failed: %v", se)
	}
	if res.Status != sdk.StatusScored {
		t.Fatalf("status %s (%s), want scored", res.Status, res.Reason)
	}
}

func TestLoad(t *testing.T) {
	e := newEngine(t, nil)
	tests := []struct {
		name    string
		wat     string
		tamper  bool
		wantErr error
		wantMsg string
	}{
		{name: "allowed: well-formed module", wat: "ok"},
		{name: "denied: import from an unknown module", wat: "forbidden", wantErr: ErrForbiddenImport, wantMsg: "env.open_socket: a plugin may import only"},
		{name: "denied: WASI socket import", wat: "socket", wantErr: ErrForbiddenImport, wantMsg: "plugins get no network"},
		{name: "denied: missing score export", wat: "noscore", wantErr: ErrMissingExport, wantMsg: "scorekit_v1_score: an ABI v1 guest exports"},
		{name: "denied: ABI v2 export names", wat: "abiv2exports", wantErr: host.ErrABIMismatch, wantMsg: "rebuild the plugin"},
		{name: "denied: ABI v2 in info", wat: "abiv2info", wantErr: host.ErrABIMismatch, wantMsg: "built for ABI v2, host speaks v1; rebuild"},
		{name: "denied: sha256 mismatch", wat: "ok", tamper: true, wantErr: host.ErrHashMismatch, wantMsg: "rebuild the plugin or update the manifest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := manifestFor(t, watGuest(t, tt.wat), host.Limits{})
			if tt.tamper {
				m.SHA256 = strings.Repeat("0", 64)
			}
			ps, err := e.Load(context.Background(), m)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if len(ps) != 1 || ps[0].Info().Name != "ok" || ps[0].Runtime() != host.RuntimeWASM {
					t.Fatalf("loaded %v, want one wasm scorer called ok", ps)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("Load error %v, want %v containing %q", err, tt.wantErr, tt.wantMsg)
			}
		})
	}
}

// TestDeadline: a spinning guest is stopped at its deadline while another tenant's calls
// on the same artifact keep succeeding; the spinning instance is discarded.
func TestDeadline(t *testing.T) {
	e := newEngine(t, nil)
	limits := host.Limits{TimeoutMS: 300}
	tests := []struct {
		name, path, scorer, input string
	}{
		{name: "WAT loop", path: watGuest(t, "loop"), scorer: "loop"},
		{name: "WAT recursion without loops", path: watGuest(t, "recurse"), scorer: "recurse"},
		{name: "Go loop", path: goGuest(t, "goguest", goGuestPkg), scorer: "tester", input: "spin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spinner := open(t, e, tt.path, limits, tt.scorer, "tenant-a")
			other := open(t, e, goGuest(t, "goguest", goGuestPkg), limits, "tester", "tenant-b")
			var ok, failed atomic.Int64
			done := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-done:
						return
					default:
					}
					if _, err := other.Score(context.Background(), &sdk.Run{Input: "q", Output: "an answer"}, nil); err != nil {
						failed.Add(1)
					} else {
						ok.Add(1)
					}
				}
			}()
			start := time.Now()
			_, se := score(t, spinner, tt.input, nil)
			t.Logf("stopped %v after the call began (deadline %d ms); the other tenant completed %d calls meanwhile",
				time.Since(start).Round(time.Millisecond), limits.TimeoutMS, ok.Load())
			close(done)
			wg.Wait()
			wantCode(t, se, sdk.CodeTimeout, "raise limits.timeout_ms")
			if ok.Load() == 0 || failed.Load() != 0 {
				t.Fatalf("other tenant: %d calls ok, %d failed while the loop ran; want all ok", ok.Load(), failed.Load())
			}
			if s := spinner.Stats(); s.Discarded != 1 {
				t.Fatalf("pool stats %+v, want the timed-out instance discarded", s)
			}
		})
	}
}

func TestMemoryLimit(t *testing.T) {
	e := newEngine(t, nil)
	limits := host.Limits{MemoryMiB: 32}
	t.Run("denied: Go guest allocating without end", func(t *testing.T) {
		b := open(t, e, goGuest(t, "goguest", goGuestPkg), limits, "tester", "t")
		_, se := score(t, b, "bomb", nil)
		wantCode(t, se, sdk.CodeLimitExceeded, "memory")
		t.Run("allowed: the next call works", func(t *testing.T) {
			res, se := score(t, b, "fine", nil)
			wantScored(t, res, se)
		})
	})
	t.Run("denied: WAT guest growing memory to the limit", func(t *testing.T) {
		b := open(t, e, watGuest(t, "growbomb"), limits, "growbomb", "t")
		_, se := score(t, b, "", nil)
		wantCode(t, se, sdk.CodeLimitExceeded, "raise limits.memory_mib")
	})
}

func TestResultLimits(t *testing.T) {
	e := newEngine(t, nil)
	guest := goGuest(t, "goguest", goGuestPkg)
	t.Run("denied: 4 MiB result over a 1 MiB limit", func(t *testing.T) {
		b := open(t, e, guest, host.Limits{MaxResultBytes: 1 << 20}, "tester", "t")
		_, se := score(t, b, "huge", nil)
		wantCode(t, se, sdk.CodeLimitExceeded, "raise limits.max_result_bytes")
	})
	t.Run("allowed: 4 MiB result under an 8 MiB limit", func(t *testing.T) {
		b := open(t, e, guest, host.Limits{MaxResultBytes: 8 << 20}, "tester", "t")
		res, se := score(t, b, "huge", nil)
		wantScored(t, res, se)
	})
	t.Run("denied: result pointer outside memory", func(t *testing.T) {
		b := open(t, e, watGuest(t, "oob"), host.Limits{}, "oob", "t")
		_, se := score(t, b, "", nil)
		wantCode(t, se, sdk.CodeInvalidResult, "outside the module's")
		if s := b.Stats(); s.Discarded != 1 {
			t.Fatalf("pool stats %+v, want the misbehaving instance discarded", s)
		}
	})
	t.Run("allowed: result pointer inside memory", func(t *testing.T) {
		b := open(t, e, watGuest(t, "ok"), host.Limits{}, "ok", "t")
		res, se := score(t, b, "", nil)
		wantScored(t, res, se)
	})
}

func TestTrap(t *testing.T) {
	e := newEngine(t, nil)
	guest := goGuest(t, "goguest", goGuestPkg)
	tests := []struct {
		name, path, scorer, input, want string
	}{
		{name: "WAT unreachable", path: watGuest(t, "trap"), scorer: "trap", want: "unreachable"},
		{name: "Go panic", path: guest, scorer: "tester", input: "panic", want: "tester was told to panic"},
		{name: "Go os.Exit", path: guest, scorer: "tester", input: "exit", want: "exited with code 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := open(t, e, tt.path, host.Limits{}, tt.scorer, "t")
			_, se := score(t, b, tt.input, nil)
			wantCode(t, se, sdk.CodeTrap, tt.want)
			if s := b.Stats(); s.Discarded != 1 || s.Idle != 0 {
				t.Fatalf("pool stats %+v, want the trapped instance discarded", s)
			}
		})
	}
	t.Run("allowed: a fresh instance serves the next call", func(t *testing.T) {
		b := open(t, e, guest, host.Limits{}, "tester", "t")
		score(t, b, "panic", nil)
		res, se := score(t, b, "fine", nil)
		wantScored(t, res, se)
		if s := b.Stats(); s.Created != 2 {
			t.Fatalf("pool stats %+v, want a second instance created after the trap", s)
		}
	})
}

func TestOutputCap(t *testing.T) {
	tests := []struct {
		name      string
		max       int
		truncated bool
	}{
		{name: "denied: 10 MiB flood over a 16 KiB cap", max: 16 << 10, truncated: true},
		{name: "allowed: 10 MiB under a 16 MiB cap", max: 16 << 20, truncated: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log records
			e := newEngineWith(t, Options{Logger: slog.New(&log), Ceilings: host.Limits{MaxOutputBytes: 16 << 20}})
			b := open(t, e, goGuest(t, "goguest", goGuestPkg), host.Limits{MaxOutputBytes: tt.max}, "tester", "t")
			res, se := score(t, b, "flood", nil)
			wantScored(t, res, se)
			recs := log.find("guest output")
			if len(recs) != 1 {
				t.Fatalf("%d guest output records, want 1", len(recs))
			}
			r := recs[0]
			if r["bytes"].Int64() != 10<<20 || r["truncated"].Bool() != tt.truncated || r["kept"].Int64() > int64(tt.max) {
				t.Fatalf("logged bytes=%v kept=%v truncated=%v; want 10 MiB written, at most %d kept, truncated=%v",
					r["bytes"], r["kept"], r["truncated"], tt.max, tt.truncated)
			}
		})
	}
}

func TestGuestLog(t *testing.T) {
	var log records
	e := newEngine(t, &log)
	b := open(t, e, goGuest(t, "goguest", goGuestPkg), host.Limits{}, "tester", "acme")
	res, se := score(t, b, "log", nil)
	wantScored(t, res, se)
	recs := log.find("tester logs answer=42")
	if len(recs) != 1 || recs[0]["scorer"].String() != "tester" || recs[0]["tenant"].String() != "acme" {
		t.Fatalf("log records %v, want one from scorer tester, tenant acme", recs)
	}
}

func TestJudge(t *testing.T) {
	e := newEngine(t, nil)
	guest := goGuest(t, "goguest", goGuestPkg)
	t.Run("allowed: declared judge, judge configured", func(t *testing.T) {
		b := open(t, e, guest, host.Limits{}, "asker", "t")
		res, se := score(t, b, "is this fine?", fakeJudge{})
		wantScored(t, res, se)
		if !strings.HasPrefix(res.Reason, "echo: is this fine?") {
			t.Fatalf("reason %q, want the judge's answer", res.Reason)
		}
		t.Run("denied: undeclared embed", func(t *testing.T) {
			if !strings.Contains(res.Reason, `capability "embed" not declared`) {
				t.Fatalf("reason %q, want the embed call denied", res.Reason)
			}
		})
	})
	t.Run("declared judge, none configured: skipped with how to configure one", func(t *testing.T) {
		b := open(t, e, guest, host.Limits{}, "asker", "t")
		res, se := score(t, b, "is this fine?", nil)
		if se != nil || res.Status != sdk.StatusSkipped || !strings.Contains(res.Reason, "--judge-url") {
			t.Fatalf("got %+v, %v; want skipped naming --judge-url", res, se)
		}
	})
	t.Run("denied: undeclared judge called through the raw import", func(t *testing.T) {
		b := open(t, e, guest, host.Limits{}, "tester", "t")
		res, se := score(t, b, "sneak", fakeJudge{})
		if se != nil || res.Status != sdk.StatusFailed || !strings.Contains(res.Error.Message, `capability "judge" not declared`) {
			t.Fatalf("got %+v, %v; want failed with the capability denial", res, se)
		}
	})
}

func TestPool(t *testing.T) {
	e := newEngine(t, nil)
	guest := goGuest(t, "goguest", goGuestPkg)
	t.Run("recycled after max_calls", func(t *testing.T) {
		b := open(t, e, guest, host.Limits{MaxCalls: 3, PoolSize: 1}, "tester", "t")
		for range 7 {
			res, se := score(t, b, "fine", nil)
			wantScored(t, res, se)
		}
		if s := b.Stats(); s.Created != 3 || s.Discarded != 2 {
			t.Fatalf("pool stats %+v after 7 calls at 3 calls per instance, want 3 created, 2 discarded", s)
		}
	})
	t.Run("bounded by pool_size under concurrency", func(t *testing.T) {
		b := open(t, e, guest, host.Limits{PoolSize: 2}, "tester", "t")
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 10 {
					if _, err := b.Score(context.Background(), &sdk.Run{Input: "q", Output: "a b"}, nil); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		if s := b.Stats(); s.Created > 2 || s.Idle > 2 {
			t.Fatalf("pool stats %+v, want at most 2 instances", s)
		}
	})
	t.Run("tenants never share an instance", func(t *testing.T) {
		a := open(t, e, guest, host.Limits{}, "tester", "a")
		b := open(t, e, guest, host.Limits{}, "tester", "b")
		score(t, a, "fine", nil)
		score(t, b, "fine", nil)
		if a.pool == b.pool || a.pool.idle[0] == b.pool.idle[0] || a.pool.idle[0].mod == b.pool.idle[0].mod {
			t.Fatal("two tenants share an instance")
		}
	})
}

func TestConfig(t *testing.T) {
	e := newEngine(t, nil)
	ps, err := e.Load(context.Background(), manifestFor(t, goGuest(t, "goguest", goGuestPkg), host.Limits{}))
	if err != nil {
		t.Fatal(err)
	}
	var picky host.Plugin
	for _, p := range ps {
		if p.Info().Name == "picky" {
			picky = p
		}
	}
	t.Run("allowed: known field", func(t *testing.T) {
		b, err := picky.Open(context.Background(), host.Tenant{Name: "t"}, []byte(`{"min": 5}`))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close(context.Background())
		res, err := b.Score(context.Background(), &sdk.Run{Output: "abc"}, nil)
		if err != nil || res.Value() != 0 || res.Reason != "output shorter than 5" {
			t.Fatalf("got %+v, %v; want the configured minimum applied", res, err)
		}
	})
	t.Run("denied: unknown field", func(t *testing.T) {
		_, err := picky.Open(context.Background(), host.Tenant{Name: "t"}, []byte(`{"mni": 5}`))
		if !errors.Is(err, host.ErrInvalidConfig) || !strings.Contains(err.Error(), `unknown field "mni"`) {
			t.Fatalf("Open error %v, want invalid config naming the field", err)
		}
	})
}
