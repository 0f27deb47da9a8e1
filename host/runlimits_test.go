package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/internal/testkit"
	"github.com/scorekit/scorekit/sdk"
)

// TestRunLimits holds each limit in an allowed/denied pair: at the limit the scorer runs,
// one past it the run is failed with limit_exceeded and the scorer is never called.
func TestRunLimits(t *testing.T) {
	small := RunLimits{MaxRunBytes: 200, MaxOutputBytes: 10, MaxContextBytes: 12, MaxPassages: 2, MaxMetadataDepth: 2}
	passages := func(texts ...string) []sdk.Passage {
		out := make([]sdk.Passage, len(texts))
		for i, s := range texts {
			out[i] = sdk.Passage{Text: s}
		}
		return out
	}
	cases := []struct {
		name string
		run  sdk.Run
		msg  string // "" means allowed
	}{
		{"output at the limit", sdk.Run{Output: strings.Repeat("a", 10)}, ""},
		{"output over the limit", sdk.Run{Output: strings.Repeat("a", 11)}, "output is 11 bytes, above the limit of 10 bytes (run_limits.max_output_bytes)"},
		{"passages at the limit", sdk.Run{Output: "o", Context: passages("a", "b")}, ""},
		{"passages over the limit", sdk.Run{Output: "o", Context: passages("a", "b", "c")}, "context has 3 passages, above the limit of 2 (run_limits.max_passages)"},
		{"context text at the limit", sdk.Run{Output: "o", Context: passages("123456", "123456")}, ""},
		{"context text over the limit", sdk.Run{Output: "o", Context: passages("123456", "1234567")}, "context is 13 bytes of text, above the limit of 12 bytes (run_limits.max_context_bytes)"},
		{"metadata at the depth limit", sdk.Run{Output: "o", Metadata: map[string]any{"a": map[string]any{"b": 1}}}, ""},
		{"metadata over the depth limit", sdk.Run{Output: "o", Metadata: map[string]any{"a": map[string]any{"b": []any{1}}}}, "metadata nests 3 or more levels deep, above the limit of 2 (run_limits.max_metadata_depth)"},
		{"run at the size limit", sdk.Run{Input: strings.Repeat("q", 199), Output: "o"}, ""},
		{"run over the size limit", sdk.Run{Input: strings.Repeat("q", 200), Output: "o"}, "the run is 201 bytes, above the limit of 200 bytes (run_limits.max_run_bytes)"},
		{"conversation counts toward the run", sdk.Run{Output: "o", Conversation: []sdk.Turn{{Role: "user", Content: strings.Repeat("c", 200)}}}, "the run is 205 bytes"},
		{"metadata text counts toward the run", sdk.Run{Output: "o", Metadata: map[string]any{"k": strings.Repeat("m", 200)}}, "the run is 202 bytes"},
	}
	r := newRig(t, info("sized"), fixed(sdk.Scored(1, "ok")), WithRunLimits(small))
	s := r.open(t, OpenOptions{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := r.calls.Load()
			got := s.Score(context.Background(), c.run)
			called := r.calls.Load() > before
			if c.msg == "" {
				want{status: sdk.StatusScored, score: ptr(1.0), passed: ptr(true)}.check(t, got)
				if !called {
					t.Error("the scorer was not called for a run within the limits")
				}
				return
			}
			want{status: sdk.StatusFailed, code: sdk.CodeLimitExceeded, msg: c.msg}.check(t, got)
			if called {
				t.Error("the scorer saw a run over a limit")
			}
		})
	}
}

// TestRunLimitsDefaults: a run far larger than any model writes still scores under the
// defaults, and one past the default output limit does not.
func TestRunLimitsDefaults(t *testing.T) {
	r := newRig(t, info("sized"), fixed(sdk.Scored(1, "ok")))
	s := r.open(t, OpenOptions{})
	big := sdk.Run{Input: strings.Repeat("q", 2<<20), Output: strings.Repeat("o", DefaultMaxOutputBytes),
		Context: []sdk.Passage{{Text: strings.Repeat("c", 3<<20)}}}
	want{status: sdk.StatusScored, score: ptr(1.0), passed: ptr(true)}.check(t, s.Score(context.Background(), big))
	big.Output += "o"
	want{status: sdk.StatusFailed, code: sdk.CodeLimitExceeded, msg: "above the limit of 1 MiB (run_limits.max_output_bytes)"}.check(t, s.Score(context.Background(), big))
	if got := r.host.RunLimits(); got.MaxRunBytes != DefaultMaxRunBytes || got.MaxMetadataDepth != DefaultMaxMetadataDepth {
		t.Errorf("Host.RunLimits() = %+v, want the defaults", got)
	}
}

// TestRunLimitsPerTenant: a tenant's limits lower the host's for that tenant only, and can
// never raise them.
func TestRunLimitsPerTenant(t *testing.T) {
	r := newRig(t, info("sized"), fixed(sdk.Scored(1, "ok")), WithRunLimits(RunLimits{MaxOutputBytes: 100}))
	strict := r.open(t, OpenOptions{Tenant: "strict", RunLimits: RunLimits{MaxOutputBytes: 5}})
	greedy := r.open(t, OpenOptions{Tenant: "greedy", RunLimits: RunLimits{MaxOutputBytes: 1 << 30}})
	other := r.open(t, OpenOptions{Tenant: "other"})
	mid := sdk.Run{Output: strings.Repeat("o", 50)}
	want{status: sdk.StatusFailed, code: sdk.CodeLimitExceeded, msg: "above the limit of 5 bytes"}.check(t, strict.Score(context.Background(), mid))
	want{status: sdk.StatusScored, score: ptr(1.0), passed: ptr(true)}.check(t, other.Score(context.Background(), mid))
	large := sdk.Run{Output: strings.Repeat("o", 101)}
	want{status: sdk.StatusFailed, code: sdk.CodeLimitExceeded, msg: "above the limit of 100 bytes"}.check(t, greedy.Score(context.Background(), large))
}

func TestRunLimitsInvalid(t *testing.T) {
	r := newRig(t, info("sized"), fixed(sdk.Scored(1, "ok")))
	_, err := r.host.Open(context.Background(), "sized", OpenOptions{RunLimits: RunLimits{MaxPassages: -1}})
	if err == nil || !strings.Contains(err.Error(), "run_limits.max_passages is -1") {
		t.Fatalf("err = %v, want one naming run_limits.max_passages", err)
	}
}

func TestRunLimitsCheckSize(t *testing.T) {
	l := RunLimits{MaxRunBytes: 1 << 20}
	if err := l.CheckSize(1 << 20); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	err := l.CheckSize(3 << 19)
	if !errors.Is(err, ErrLimitExceeded) || !strings.Contains(err.Error(), "the run is 1.5 MiB, above the limit of 1 MiB (run_limits.max_run_bytes)") {
		t.Errorf("over the limit: %v", err)
	}
}

func TestRunLimitsJSONNames(t *testing.T) {
	var l RunLimits
	if err := json.Unmarshal([]byte(`{"max_run_bytes":1,"max_output_bytes":2,"max_context_bytes":3,"max_passages":4,"max_metadata_depth":5}`), &l); err != nil {
		t.Fatal(err)
	}
	if l != (RunLimits{1, 2, 3, 4, 5}) {
		t.Errorf("got %+v", l)
	}
}

// TestRunLimitsEveryRuntime: the check runs in the host before the backend, so a runtime
// other than native sees nothing of an over-size run either.
func TestRunLimitsEveryRuntime(t *testing.T) {
	for _, rt := range []string{RuntimeNative, RuntimeWASM, RuntimeProcess} {
		t.Run(rt, func(t *testing.T) {
			b := &countingBackend{}
			reg := NewRegistry()
			if err := reg.Register(&runtimePlugin{info: info("sized"), runtime: rt, backend: b}, false); err != nil {
				t.Fatal(err)
			}
			s, err := New(reg, WithRunLimits(RunLimits{MaxOutputBytes: 4})).Open(context.Background(), "sized", OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := s.Score(context.Background(), sdk.Run{Output: "12345"})
			if got.Status != sdk.StatusFailed || got.Error.Code != sdk.CodeLimitExceeded || got.Telemetry.Runtime != rt {
				t.Errorf("got %+v", got)
			}
			if b.calls != 0 {
				t.Errorf("the %s backend was called %d times", rt, b.calls)
			}
		})
	}
}

type runtimePlugin struct {
	info    sdk.Info
	runtime string
	backend Backend
}

func (p *runtimePlugin) Info() sdk.Info  { return p.info }
func (p *runtimePlugin) Runtime() string { return p.runtime }
func (p *runtimePlugin) Open(context.Context, Tenant, json.RawMessage) (Backend, error) {
	return p.backend, nil
}
func (p *runtimePlugin) Close(context.Context) error { return nil }

type countingBackend struct{ calls int }

func (b *countingBackend) Score(context.Context, *sdk.Run, sdk.Judge) (sdk.Result, error) {
	b.calls++
	return sdk.Scored(1, "ok"), nil
}
func (b *countingBackend) Close(context.Context) error { return nil }

// nested returns n arrays nested in one another around v: nested(2, "1") is [[1]].
func nested(n int, v string) string {
	return strings.Repeat("[", n) + v + strings.Repeat("]", n)
}

// TestRunLimitsCheckJSON holds the check before decoding in allowed/denied pairs: metadata
// to max_metadata_depth, any other field to contractDepth more, the size to max_run_bytes.
func TestRunLimitsCheckJSON(t *testing.T) {
	l := RunLimits{MaxMetadataDepth: 3, MaxRunBytes: 1 << 10}
	cases := []struct {
		name, run string
		msg       string // "" means allowed
	}{
		{"metadata at the limit", `{"output": "o", "metadata": {"a": {"b": [1]}}}`, ""},
		{"metadata over the limit", `{"output": "o", "metadata": {"a": {"b": [[1]]}}}`,
			"metadata nests 4 or more levels deep, above the limit of 3 (run_limits.max_metadata_depth)"},
		{"metadata after other fields", `{"output": "o", "context": [{"text": "p"}], "metadata": {"a": [[["x"]]]}}`,
			"metadata nests 4 or more levels deep"},
		{"names and strings that look like structure", `{"output": "[[[[{{{{\"", "meta\"[[[[": "x", "metadata": {"k]]]]": "[[[["}}`, ""},
		{"a tool call's arguments at the limit", `{"output": "o", "conversation": [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": ` + nested(3, "1") + `}}]}]}`, ""},
		{"a tool call's arguments over the limit", `{"output": "o", "conversation": [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": ` + nested(4, "1") + `}}]}]}`,
			`"conversation" nests 9 or more levels deep, above the limit of 8 (run_limits.max_metadata_depth, 3, plus the 5 levels the run contract takes)`},
		{"a field the contract does not name", `{"output": "o", "extra": ` + nested(9, "1") + `}`, `"extra" nests 9 or more levels deep`},
		{"size at the limit", `{"output": "` + strings.Repeat("o", 1<<10-14) + `"}`, ""},
		{"size over the limit", `{"output": "` + strings.Repeat("o", 1<<10-13) + `"}`, "the run is 1.0 KiB, above the limit of 1 KiB (run_limits.max_run_bytes)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := l.CheckJSON([]byte(c.run))
			switch {
			case c.msg == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.msg != "" && (!errors.Is(err, ErrLimitExceeded) || !strings.Contains(err.Error(), c.msg)):
				t.Fatalf("err = %v; want one naming %q", err, c.msg)
			}
		})
	}
}

// TestRunLimitsCheckJSONHostile: metadata nested 2,000,000 levels deep (4 MB) is refused at
// the level past the limit, reading no further and allocating nothing but the error.
func TestRunLimitsCheckJSONHostile(t *testing.T) {
	raw := []byte(`{"output": "o", "metadata": {"a": ` + nested(2_000_000, "1") + `}}`)
	var err error
	allocs := testing.AllocsPerRun(5, func() { err = RunLimits{}.CheckJSON(raw) })
	if !strings.Contains(fmt.Sprint(err), "metadata nests 33 or more levels deep, above the limit of 32 (run_limits.max_metadata_depth)") {
		t.Fatalf("err = %v", err)
	}
	if allocs > 10 { // the error's message
		t.Errorf("%v allocations to refuse it", allocs)
	}
}

// TestRunLimitsCheckJSONAgrees compares the scan with a decoder on generated runs: the depth
// it reports for the first field over a limit is the decoded value's, and a run it lets
// through has no field over its limit.
func TestRunLimitsCheckJSONAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var value func(depth int) any
	value = func(depth int) any {
		switch k := rng.IntN(6); {
		case depth == 0 || k == 0:
			return []any{"s[{\"\\", 1.5, true, nil, `"]}`}[rng.IntN(5)]
		case k < 3:
			return []any{value(depth - 1), value(depth - 1)}[:rng.IntN(3)]
		default:
			m := map[string]any{}
			for i := range rng.IntN(3) {
				m[fmt.Sprintf(`k"{%d`, i)] = value(depth - 1)
			}
			return m
		}
	}
	depthOf := func(v any) int {
		d, _ := measure(v, 1, 1<<30)
		return d
	}
	l := RunLimits{MaxMetadataDepth: 4}.WithDefaults()
	for range 2000 {
		run := map[string]any{"output": "o", "metadata": value(7), "extra": value(11)}
		raw, err := json.Marshal(run)
		if err != nil {
			t.Fatal(err)
		}
		field, depth, limit := jsonNesting(raw, l.MaxMetadataDepth)
		meta, extra := depthOf(run["metadata"]), depthOf(run["extra"])
		switch field {
		case "":
			if meta > 4 || extra > 9 {
				t.Fatalf("%s: let through metadata %d deep, extra %d deep", raw, meta, extra)
			}
		case "metadata", "extra":
			if limit != map[string]int{"metadata": 4, "extra": 9}[field] || depth != limit+1 || depthOf(run[field]) <= limit {
				t.Fatalf("%s: %s at %d over %d; decoded %d deep", raw, field, depth, limit, depthOf(run[field]))
			}
		default:
			t.Fatalf("%s: field %q", raw, field)
		}
	}
}

// BenchmarkCheckJSON: the check a service makes before decoding a run, beside the decoding
// it precedes (DecodeRun's one read), on the decode benchmark's lines.
func BenchmarkCheckJSON(b *testing.B) {
	lines := decodeCorpus(b)[:12]
	for _, c := range []struct {
		name  string
		check func([]byte) error
	}{
		{"check-json", RunLimits{}.CheckJSON},
		{"decode", func(raw []byte) error { _, err := DecodeRun(raw); return err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			n, size := 0, 0
			c0 := testkit.CPUTime()
			for b.Loop() {
				line := lines[n%len(lines)]
				if err := c.check(line); err != nil {
					b.Fatal(err)
				}
				n, size = n+1, size+len(line)
			}
			b.ReportMetric(float64((testkit.CPUTime()-c0).Nanoseconds())/float64(n), "cpu-ns/line")
			b.ReportMetric(float64(size)/float64(n), "bytes/line")
		})
	}
}
