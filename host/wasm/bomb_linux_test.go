package wasm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/scorekit/scorekit/internal/testkit"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/sdk"
)

// bombChildEnv names the guest a TestGuestAllocationRSS child calls: "PATH SCORER".
const bombChildEnv = "SCOREKIT_WASM_BOMB_CHILD"

// bombLimits are the limits the bombs run under: the repro (64 MiB, 5 s).
var bombLimits = host.Limits{MemoryMiB: 64, TimeoutMS: 5000, PoolSize: 1}

// TestGuestAllocationRSS: a guest that makes the host allocate outside its linear memory
// (its tables) cannot take the host's resident memory past one instance's
// bound. Each bomb runs in a child process (this test binary, re-run) whose peak RSS
// (VmHWM, reset after loading) is the figure asserted.
func TestGuestAllocationRSS(t *testing.T) {
	tests := []struct {
		name, guest, scorer string
		// code is the error the call ends with; empty: the call scores.
		code string
	}{
		// table.grow past the bound answers -1, as the specification lets a host do; the
		// bomb ignores the answer and returns a result.
		{name: "table grown 200 x 1,000,000 entries", guest: "tablebomb", scorer: "tablebomb"},
	}
	bound := bombLimits.MemoryMiB + tableBytes(DefaultMaxTableEntries)>>20 + rssOverheadMiB
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := watGuest(t, tt.guest)
			cmd := exec.Command(os.Args[0], "-test.run=^TestGuestAllocationRSSChild$", "-test.v")
			cmd.Env = append(os.Environ(), bombChildEnv+"="+path+" "+tt.scorer)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			var base, peak int
			var code string
			for line := range strings.Lines(string(out)) {
				if _, err := fmt.Sscanf(strings.TrimSpace(line), "bomb base=%d peak=%d code=%s", &base, &peak, &code); err == nil {
					break
				}
			}
			if base == 0 || peak == 0 {
				t.Fatalf("child printed no bomb line:\n%s", out)
			}
			grew := (peak - base) >> 10 // MiB
			t.Logf("RSS after loading %d MiB, peak %d MiB: +%d MiB (bound +%d MiB); call: %s", base>>10, peak>>10, grew, bound, code)
			if grew > bound {
				t.Errorf("host RSS grew by %d MiB, over memory_mib %d + tables + %d MiB = %d MiB", grew, bombLimits.MemoryMiB, rssOverheadMiB, bound)
			}
			if want := cmp.Or(tt.code, "scored"); code != want {
				t.Errorf("call ended %s, want %s", code, want)
			}
		})
	}
}

// TestGuestAllocationRSSChild is the child of TestGuestAllocationRSS; run alone it does
// nothing.
func TestGuestAllocationRSSChild(t *testing.T) {
	path, scorer, ok := strings.Cut(os.Getenv(bombChildEnv), " ")
	if !ok {
		return
	}
	ctx := context.Background()
	e := newEngine(t, nil)
	ps, err := e.Load(ctx, manifestFor(t, path, bombLimits))
	if err != nil {
		t.Fatal(err)
	}
	b, err := byName(t, ps, scorer).Open(ctx, host.Tenant{Name: "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak RSS: %v", err)
	}
	base := testkit.ProcStatus(t, "VmRSS")
	code := "scored"
	res, err := b.Score(ctx, &sdk.Run{Input: "q", Output: "a"}, nil)
	var se *sdk.Error
	switch {
	case errors.As(err, &se):
		code = se.Code
		t.Logf("call: %v", se)
	case err != nil:
		t.Fatalf("call: %v, want an *sdk.Error", err)
	case res.Status != sdk.StatusScored:
		code = string(res.Status)
	}
	fmt.Printf("bomb base=%d peak=%d code=%s\n", base, testkit.ProcStatus(t, "VmHWM"), code)
}
