package host

import (
	"errors"
	"strings"
	"testing"
)

func TestLimitsWithin(t *testing.T) {
	ceil := Limits{MemoryMiB: 256, TimeoutMS: 30_000}
	cases := []struct {
		name    string
		ask     Limits
		want    Limits
		wantErr string
	}{
		{"zero takes the ceiling", Limits{}, Limits{MemoryMiB: 256, TimeoutMS: 30_000}, ""},
		{"less is allowed", Limits{MemoryMiB: 64, PoolSize: 2}, Limits{MemoryMiB: 64, TimeoutMS: 30_000, PoolSize: 2}, ""},
		{"equal is allowed", Limits{MemoryMiB: 256}, Limits{MemoryMiB: 256, TimeoutMS: 30_000}, ""},
		{"more is refused", Limits{MemoryMiB: 4096}, Limits{}, "limits.memory_mib is 4096, the host allows at most 256"},
		{"no ceiling set", Limits{MaxCalls: 1 << 30}, Limits{MemoryMiB: 256, TimeoutMS: 30_000, MaxCalls: 1 << 30}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.ask.Within(ceil)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrOverCeiling) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want ErrOverCeiling saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestLimitsLower(t *testing.T) {
	loaded := Limits{MemoryMiB: 256, TimeoutMS: 30_000, PoolSize: 4}
	got := loaded.Lower(Limits{MemoryMiB: 64, TimeoutMS: 60_000, MaxResultBytes: 1 << 10})
	want := Limits{MemoryMiB: 64, TimeoutMS: 30_000, PoolSize: 4, MaxResultBytes: 1 << 10}
	if got != want {
		t.Fatalf("got %+v, want %+v: a tenant lowers, never raises", got, want)
	}
}

func TestLimitsCPUSeconds(t *testing.T) {
	if _, err := (Limits{CPUSeconds: 900}).Within(Limits{CPUSeconds: 600}); !errors.Is(err, ErrOverCeiling) || !strings.Contains(err.Error(), "limits.cpu_seconds is 900") {
		t.Fatalf("err = %v, want the cpu_seconds ceiling named", err)
	}
	if got := (Limits{CPUSeconds: 600}).Lower(Limits{CPUSeconds: 60}); got.CPUSeconds != 60 {
		t.Fatalf("Lower: cpu_seconds %d, want 60", got.CPUSeconds)
	}
}
