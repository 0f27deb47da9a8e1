package wasm

import (
	"context"
	"errors"
	"fmt"
	"github.com/scorekit/scorekit/internal/testkit"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// The RSS bound: a host running a pool of `rssInstances` guests, each holding as much as
// it can under an `rssLimitMiB` limit, stays under
//
//	RSS after loading + rssInstances x rssLimitMiB + rssOverheadMiB
//
// rssOverheadMiB covers what the calls add outside guest memory (the Go heap of the
// host, instance bookkeeping, wazero's per-instance structures). docs/SANDBOX.md states
// the same figure.
const (
	rssInstances   = 4
	rssLimitMiB    = 48
	rssOverheadMiB = 32
	rssChildEnv    = "SCOREKIT_WASM_RSS_CHILD"
)

// TestHostRSS measures a child process (this test binary, re-run) so the figure is the
// host's whole resident memory, not an estimate: the peak (VmHWM, reset after loading)
// must stay under the bound, and must show the guests really held their memory, or the
// bound would prove nothing.
func TestHostRSS(t *testing.T) {
	goGuest(t, "goguest", goGuestPkg) // built once here, reused by the child through the cache dir
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostRSSChild$", "-test.v")
	cmd.Env = append(os.Environ(), rssChildEnv+"="+testBuilds.done["goguest.wasm"])
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var base, peak int
	for line := range strings.Lines(string(out)) {
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "rss base=%d peak=%d", &base, &peak); err == nil {
			break
		}
	}
	if base == 0 || peak == 0 {
		t.Fatalf("child printed no rss line:\n%s", out)
	}
	grew := (peak - base) >> 10 // MiB
	bound := rssInstances*rssLimitMiB + rssOverheadMiB
	t.Logf("RSS after loading %d MiB, peak %d MiB: +%d MiB for %d instances of %d MiB (bound +%d MiB)",
		base>>10, peak>>10, grew, rssInstances, rssLimitMiB, bound)
	if grew > bound {
		t.Errorf("host RSS grew by %d MiB, over %d x %d MiB + %d MiB", grew, rssInstances, rssLimitMiB, rssOverheadMiB)
	}
	if held := rssInstances * 24; grew < held {
		t.Errorf("host RSS grew by %d MiB, less than the %d MiB the guests touched: the measurement is not seeing guest memory", grew, held)
	}
}

// TestHostRSSChild is the child of TestHostRSS; run alone it does nothing.
func TestHostRSSChild(t *testing.T) {
	guest := os.Getenv(rssChildEnv)
	if guest == "" {
		return
	}
	ctx := context.Background()
	e := newEngine(t, nil)
	ps, err := e.Load(ctx, manifestFor(t, guest, host.Limits{MemoryMiB: rssLimitMiB, PoolSize: rssInstances, TimeoutMS: 2000}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := byName(t, ps, "tester").Open(ctx, host.Tenant{Name: "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak RSS: %v", err)
	}
	base := testkit.ProcStatus(t, "VmRSS")
	var wg sync.WaitGroup
	for range 2 * rssInstances { // twice the pool: the rest wait for an instance
		wg.Go(func() {
			// The ones that waited for an instance time out too, some while instantiating.
			_, err := b.Score(ctx, &sdk.Run{Input: "hold"}, nil)
			var se *sdk.Error
			if !errors.As(err, &se) || se.Code != sdk.CodeTimeout {
				t.Errorf("hold: %v, want a timeout", err)
			}
		})
	}
	wg.Wait()
	fmt.Printf("rss base=%d peak=%d\n", base, testkit.ProcStatus(t, "VmHWM"))
}

// stackRSSChildEnv names the stack bomb for TestStackBombRSS's child.
const stackRSSChildEnv = "SCOREKIT_WASM_STACK_RSS_CHILD"

// TestStackBombRSS: 20 calls of a function that calls itself without end, through a pool
// of rssInstances instances, each call failing limit_exceeded and discarding its instance,
// raise the host's RSS (measured in a child, as TestHostRSS) by no more than the pool's
// call stacks at their bound (stackHostBytes, 1.5 times for the copy wazero makes as a
// stack grows) and rssOverheadMiB. Without the bound each call took wazero's stack to its
// 400 MB ceiling, and the host's RSS past 1 GB.
func TestStackBombRSS(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestStackBombRSSChild$", "-test.v")
	cmd.Env = append(os.Environ(), stackRSSChildEnv+"="+watGuest(t, "stackbomb"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var base, peak, after int
	for line := range strings.Lines(string(out)) {
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "rss base=%d peak=%d after=%d", &base, &peak, &after); err == nil {
			break
		}
	}
	if base == 0 || peak == 0 {
		t.Fatalf("child printed no rss line:\n%s", out)
	}
	grew := (peak - base) >> 10 // MiB
	bound := int(int64(rssInstances)*stackHostBytes(DefaultStackKiB)*3/2>>20) + rssOverheadMiB
	t.Logf("RSS after loading %d MiB, peak %d MiB, after the calls %d MiB: +%d MiB for 20 runaway recursions (bound +%d MiB)",
		base>>10, peak>>10, after>>10, grew, bound)
	if grew > bound {
		t.Errorf("host RSS grew by %d MiB over 20 runaway recursions, over the bound of %d MiB", grew, bound)
	}
}

// TestStackBombRSSChild is the child of TestStackBombRSS; run alone it does nothing.
func TestStackBombRSSChild(t *testing.T) {
	guest := os.Getenv(stackRSSChildEnv)
	if guest == "" {
		return
	}
	ctx := context.Background()
	e := newEngine(t, nil)
	ps, err := e.Load(ctx, manifestFor(t, guest, host.Limits{PoolSize: rssInstances}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := byName(t, ps, "stackbomb").Open(ctx, host.Tenant{Name: "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak RSS: %v", err)
	}
	base := testkit.ProcStatus(t, "VmRSS")
	var wg sync.WaitGroup
	for range rssInstances {
		wg.Go(func() {
			for range 20 / rssInstances {
				_, err := b.Score(ctx, &sdk.Run{Input: "down"}, nil)
				var se *sdk.Error
				if !errors.As(err, &se) || se.Code != sdk.CodeLimitExceeded {
					t.Errorf("runaway recursion: %v, want limit_exceeded", err)
				}
			}
		})
	}
	wg.Wait()
	fmt.Printf("rss base=%d peak=%d after=%d\n", base, testkit.ProcStatus(t, "VmHWM"), testkit.ProcStatus(t, "VmRSS"))
}
