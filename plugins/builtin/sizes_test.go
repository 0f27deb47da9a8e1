package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/wasm"
	"github.com/scorekit/scorekit/internal/buildtest"
	"github.com/scorekit/scorekit/internal/sizematrix"
	"github.com/scorekit/scorekit/plugins/builtin"
	"github.com/scorekit/scorekit/sdk"
)

// matrixConfigs gives a built-in scorer a config other than its defaults in the size
// matrix: json_valid checks every item of an array, unique and by pattern; the rubric,
// which has no criteria of its own, shows the judge every field the run has.
var matrixConfigs = map[string]string{
	"json_valid": `{"schema": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]"}, "uniqueItems": true}}`,
	"rubric":     `{"instructions": "Does the output answer the input?", "scale": {"min": 1, "max": 5}}`,
}

// allocLimit is the most a native built-in may allocate on one run of the matrix: 16 MiB
// up to 100 KiB outputs (the bound), 96 MiB at 1 MiB (bounded, linear in the run).
// matrixDeadline is the deadline of a WASM or process call in the matrix.
const matrixDeadline = 10 * time.Minute

func allocLimit(size int) uint64 {
	if size <= 100<<10 {
		return 16 << 20
	}
	return 96 << 20
}

// outcome is what the matrix compares across runtimes: everything a result says except its
// telemetry and, for a failed result, the wording of its error.
type outcome struct {
	Status     sdk.Status
	Score      *float64
	Dimensions map[string]float64
	Flags      []string
	Reason     string
	Steps      []sdk.Step
	Code       string
}

func outcomeOf(r sdk.Result) outcome {
	o := outcome{Status: r.Status, Score: r.Score, Dimensions: r.Dimensions, Flags: r.Flags, Reason: r.Reason, Steps: r.Steps}
	if r.Error != nil {
		o.Code, o.Reason = r.Error.Code, ""
	}
	return o
}

// TestSizeMatrix drives every built-in scorer through the size matrix (outputs of 100 B to
// 1 MiB: long inputs and references, lists, JSON, text with thousands of distinct
// characters, 16,000 context passages, metadata 500 levels deep) natively, as WASM and as
// a process plugin (the artifacts `make test` builds):
//
//   - natively, under the default deadline, each call allocates at most allocLimit bytes
//     (measured, not timed) and none times out;
//   - every runtime gives the same result (status, score, dimensions, flags, reason,
//     steps), or the same failed code, so none runs out of memory where another does not.
//     WASM and process calls run under a deadline of matrixDeadline, so that a machine
//     busy with other work cannot turn a result into a timeout; the built-ins' own cost
//     limits are what bound their work, and they are the same in every runtime.
func TestSizeMatrix(t *testing.T) {
	sizes := sizematrix.Sizes
	if testing.Short() {
		sizes = sizes[:len(sizes)-1] // 1 MiB is most of the time, most of it in WASM
	}
	var cases []sizematrix.Case
	for _, size := range sizes {
		cases = append(cases, sizematrix.Runs(size)...)
	}
	ctx := context.Background()
	quiet := host.WithLogger(slog.New(slog.DiscardHandler))

	// Native first, alone in the process, so allocation counts are this call's.
	native := host.NewRegistry()
	for _, f := range builtin.Factories() {
		if err := native.Register(host.Native(f), false); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]outcome{} // scorer + case -> outcome
	nh := host.New(native, quiet)
	for _, name := range native.Names() {
		s := open(t, nh, name)
		for _, c := range cases {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res := s.Score(ctx, c.Run)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > allocLimit(c.Size) {
				t.Errorf("native %s on %s allocated %.1f MiB, over %d MiB", name, c.Name(), float64(alloc)/(1<<20), allocLimit(c.Size)>>20)
			}
			if res.Status == sdk.StatusFailed && res.Error.Code == sdk.CodeTimeout {
				t.Errorf("native %s on %s: %s", name, c.Name(), res.Error.Message)
			}
			want[name+" "+c.Name()] = outcomeOf(res)
		}
	}

	for _, rt := range []string{host.RuntimeWASM, host.RuntimeProcess} {
		t.Run(rt, func(t *testing.T) {
			reg := loadBuiltins(t, rt)
			h := host.New(reg, quiet, host.WithTimeout(matrixDeadline))
			for _, name := range native.Names() {
				s := open(t, h, name)
				for _, c := range cases {
					res := s.Score(ctx, c.Run)
					got := outcomeOf(res)
					if w := want[name+" "+c.Name()]; !reflect.DeepEqual(got, w) {
						var why string
						if res.Error != nil {
							why = " (" + res.Error.Message + ")"
						}
						t.Errorf("%s %s on %s:\n got  %s%s\n want %s (native)", rt, name, c.Name(), show(got), why, show(w))
					}
				}
			}
		})
	}
}

func open(t *testing.T, h *host.Host, name string) *host.Scorer {
	t.Helper()
	var cfg json.RawMessage
	if c, ok := matrixConfigs[name]; ok {
		cfg = json.RawMessage(c)
	}
	s, err := h.Open(context.Background(), name, host.OpenOptions{Config: cfg})
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// loadBuiltins registers the built-in scorers of build/RUNTIME/builtin.plugin.json.
func loadBuiltins(t *testing.T, rt string) *host.Registry {
	t.Helper()
	reg := host.NewRegistry()
	for _, p := range buildtest.Builtins(t, rt, host.Limits{TimeoutMS: int(matrixDeadline.Milliseconds())}) {
		if err := reg.Register(p, false); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// show prints an outcome short enough to read in a failure.
func show(o outcome) string {
	score := "-"
	if o.Score != nil {
		score = fmt.Sprint(*o.Score)
	}
	reason := o.Reason
	if len(reason) > 160 {
		reason = reason[:160] + "..."
	}
	return fmt.Sprintf("%s score %s code %q flags %v reason %q steps %d", o.Status, score, o.Code, o.Flags, reason, len(o.Steps))
}

// TestLongTextsFitGuestMemory scores the matrix's 1 MiB texts with the built-in module
// under several memory limits. A Go guest grows its heap before it collects, and cannot
// collect when the host refuses to grow its memory, so a scorer that makes 50 MiB of
// garbage on a call can fail at 80 MiB where it passes at 64 and at 128: which limits fail
// depends on where the collector's pacing lands. textual_difference did, on 1 MiB of
// unrelated words (a list of every word of both texts, grown by doubling); it now reads
// the words in place.
func TestLongTextsFitGuestMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("1 MiB texts in WASM take seconds; the full run covers them")
	}
	var cases []sizematrix.Case
	for _, c := range sizematrix.Runs(1 << 20) {
		if c.Kind == "similar" || c.Kind == "different" || c.Kind == "unicode" || c.Kind == "question" {
			cases = append(cases, c)
		}
	}
	ctx := context.Background()
	for _, mib := range []int{64, 80, 96} {
		m, err := host.ReadManifest(filepath.Join(buildtest.ModuleRoot(t), "build", "wasm", "builtin"+host.ManifestSuffix))
		if err != nil {
			t.Fatalf("%v: build it with make wasm-plugins", err)
		}
		m.Limits.MemoryMiB = mib
		e, err := wasm.NewEngine(ctx, wasm.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close(context.Background()) })
		ps, err := e.Load(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		reg := host.NewRegistry()
		for _, p := range ps {
			if err := reg.Register(p, false); err != nil {
				t.Fatal(err)
			}
		}
		h := host.New(reg, host.WithLogger(slog.New(slog.DiscardHandler)), host.WithTimeout(matrixDeadline))
		for _, name := range reg.Names() {
			s := open(t, h, name)
			for _, c := range cases {
				if res := s.Score(ctx, c.Run); res.Status == sdk.StatusFailed && res.Error.Code == sdk.CodeLimitExceeded {
					t.Errorf("%s on %s under %d MiB: %.300s", name, c.Name(), mib, res.Error.Message)
				}
			}
		}
	}
}
