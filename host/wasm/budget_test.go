package wasm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// tenantModules writes n copies of testdata/tenant.wat, each with a custom section of its
// own so that each is a different artifact (digest), and returns their paths.
func tenantModules(t testing.TB, n int) []string {
	t.Helper()
	base, err := os.ReadFile(watGuest(t, "tenant"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths := make([]string, n)
	for i := range paths {
		name := fmt.Sprintf("tenant-%03d", i)
		payload := append(append(appendULEB(nil, uint64(len(name))), name...), "tenant"...)
		bin := append(append(append([]byte{}, base...), 0), appendULEB(nil, uint64(len(payload)))...)
		bin = append(bin, payload...)
		paths[i] = filepath.Join(dir, name+".wasm")
		if err := os.WriteFile(paths[i], bin, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

// idleMemory sums the linear memory and the call stack's bound of every idle instance of
// e's pools, walking them rather than trusting the budget's count.
func idleMemory(e *Engine) (bytes int64, instances int) {
	e.mu.Lock()
	arts := append([]*artifact(nil), e.arts...)
	e.mu.Unlock()
	for _, a := range arts {
		a.mu.Lock()
		for _, pl := range a.pools {
			pl.mu.Lock()
			for _, inst := range pl.idle {
				bytes += int64(inst.memoryBytes()) + stackHostBytes(inst.stackKiB)
				instances++
			}
			pl.mu.Unlock()
		}
		a.mu.Unlock()
	}
	return bytes, instances
}

// TestMemoryBudget: 100 tenants, each with its own module and pool, score in turn: with a
// budget of ten instances' memory (linear memory and call stack) the instances kept stay
// within it, every call succeeds (a tenant whose instance was evicted gets a new one),
// and without a budget all 100 are kept.
func TestMemoryBudget(t *testing.T) {
	const tenants = 100
	perInstance := 1<<20 + stackHostBytes(DefaultStackKiB)
	paths := tenantModules(t, tenants)
	tests := []struct {
		name   string
		budget int64
		// wantKept is how many instances stay idle after every tenant scored.
		wantKept int
	}{
		{name: "budget of ten instances", budget: 10 * perInstance, wantKept: 10},
		{name: "no budget", budget: -1, wantKept: tenants},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngineWith(t, Options{MemoryBudgetBytes: tt.budget})
			backends := make([]*backend, tenants)
			for i, p := range paths {
				backends[i] = open(t, e, p, host.Limits{MemoryMiB: 4}, "ok", fmt.Sprintf("tenant-%d", i))
			}
			for round := range 2 {
				for i, b := range backends {
					if res, err := b.Score(context.Background(), &sdk.Run{Output: "x"}, nil); err != nil || res.Score == nil || *res.Score != 1 {
						t.Fatalf("round %d, tenant %d: %+v, %v", round, i, res, err)
					}
					held, _ := idleMemory(e)
					if st := e.MemoryStats(); tt.budget > 0 && (held > tt.budget || st.HeldBytes > tt.budget || st.PeakHeldBytes > tt.budget) {
						t.Fatalf("round %d, tenant %d: instances hold %d bytes (counted %+v), over the budget of %d", round, i, held, st, tt.budget)
					}
				}
			}
			held, kept := idleMemory(e)
			st := e.MemoryStats()
			if kept != tt.wantKept || held != int64(kept)*perInstance || st.HeldBytes != held {
				t.Fatalf("kept %d instances holding %d bytes (counted %+v), want %d of %d bytes", kept, held, st, tt.wantKept, perInstance)
			}
			if tt.budget > 0 && st.Evicted < tenants-tt.wantKept {
				t.Fatalf("evicted %d, want at least %d", st.Evicted, tenants-tt.wantKept)
			}
		})
	}
}

// TestMemoryBudgetConcurrent: the same 100 tenants scoring at once, under a budget of
// five instances: every call succeeds, and once they are done the instances kept are
// within the budget. (Run with -race: eviction races calls taking the same instance.)
func TestMemoryBudgetConcurrent(t *testing.T) {
	const tenants = 100
	perInstance := 1<<20 + stackHostBytes(DefaultStackKiB)
	budget := 5 * perInstance
	paths := tenantModules(t, tenants)
	e := newEngineWith(t, Options{MemoryBudgetBytes: budget})
	var wg sync.WaitGroup
	errs := make(chan error, tenants)
	for i, p := range paths {
		b := open(t, e, p, host.Limits{MemoryMiB: 4, PoolSize: 2}, "ok", fmt.Sprintf("tenant-%d", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if _, err := b.Score(context.Background(), &sdk.Run{Output: "x"}, nil); err != nil {
					errs <- fmt.Errorf("tenant %d: %w", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	held, _ := idleMemory(e)
	if st := e.MemoryStats(); held > budget || st.HeldBytes != held || int64(st.Idle) > budget/perInstance {
		t.Fatalf("after the calls instances hold %d bytes (counted %+v), want at most the budget of %d", held, st, budget)
	}
}
