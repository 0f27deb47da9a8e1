package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/scorekit/scorekit/host"
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
