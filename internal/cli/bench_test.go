package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/scorekit/scorekit/internal/testkit"
)

// BenchmarkScoreExamples measures the whole score command (decode, validate, score with
// the built-in pre-screen, order, encode jsonl) on examples/runs.jsonl repeated to 1,200
// lines, and reports runs scored per second and the process CPU time per run (which a
// busy machine does not inflate). bench/cli measures the built command against a git
// revision.
func BenchmarkScoreExamples(b *testing.B) {
	seed, err := os.ReadFile(examplesPath)
	if err != nil {
		b.Fatal(err)
	}
	data := bytes.Repeat(seed, 100)
	lines := bytes.Count(data, []byte("\n"))
	for _, format := range []string{"jsonl", "table"} {
		b.Run(format, func(b *testing.B) {
			c0 := testkit.CPUTime()
			for b.Loop() {
				e := &env{stdin: bytes.NewReader(data), stdout: io.Discard, stderr: io.Discard, registry: builtinRegistry}
				if code := e.run(b.Context(), []string{"score", "--format", format, "-"}); code != ExitOK {
					b.Fatalf("exit %d", code)
				}
			}
			b.ReportMetric(float64(lines*b.N)/b.Elapsed().Seconds(), "runs/s")
			b.ReportMetric(float64((testkit.CPUTime()-c0).Microseconds())/float64(lines*b.N), "cpu-us/run")
		})
	}
}

// BenchmarkScoreRuntime measures `scorekit score --runtime native` and `--runtime wasm`
// end to end (the WASM engine's load of the built-ins included) on examples/runs.jsonl
// repeated to 20,000 lines, with the default pre-screen, and reports the CPU per run and,
// for WASM, its ratio to native in the same run. It needs the WASM build of the built-ins
// (make wasm-plugins).
func BenchmarkScoreRuntime(b *testing.B) {
	build, err := filepath.Abs(filepath.Join("..", "..", "build"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(build, "wasm", "builtin.plugin.json")); err != nil {
		b.Fatalf("no WASM build of the built-ins in %s: run `make wasm-plugins`", build)
	}
	b.Setenv("SCOREKIT_BUILD", build)
	seed, err := os.ReadFile(examplesPath)
	if err != nil {
		b.Fatal(err)
	}
	data := bytes.Repeat(seed, 20_000/bytes.Count(seed, []byte("\n")))
	lines := bytes.Count(data, []byte("\n"))
	var native float64
	for _, rt := range []string{"native", "wasm"} {
		b.Run(rt, func(b *testing.B) {
			c0 := testkit.CPUTime()
			for b.Loop() {
				e := &env{stdin: bytes.NewReader(data), stdout: io.Discard, stderr: io.Discard, registry: builtinRegistry}
				if code := e.run(b.Context(), []string{"score", "--runtime", rt, "--format", "jsonl", "-"}); code != ExitOK {
					b.Fatalf("exit %d", code)
				}
			}
			cpu := float64((testkit.CPUTime() - c0).Microseconds()) / float64(lines*b.N)
			b.ReportMetric(float64(lines*b.N)/b.Elapsed().Seconds(), "runs/s")
			b.ReportMetric(cpu, "cpu-us/run")
			if rt == "native" {
				native = cpu
			} else if native > 0 {
				b.ReportMetric(cpu/native, "x-native-cpu")
			}
		})
	}
}
