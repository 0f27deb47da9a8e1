package wasmabi

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/scorekit/scorekit/sdk"
)

func TestRunCodec(t *testing.T) {
	tests := []struct {
		name string
		run  sdk.Run
	}{
		{name: "empty", run: sdk.Run{}},
		{name: "short QA", run: sdk.Run{Input: "What is the capital of France?", Output: "Paris"}},
		{name: "every field", run: sdk.Run{
			ID: "r1", Agent: "triage", Input: "in \"quoted\" \u00e9", Output: "out\n", Expected: "exp",
			Context:       []sdk.Passage{{ID: "1", Text: "a"}, {ID: "doc-3", Text: "b"}},
			CitationAudit: &sdk.CitationAudit{Citations: 2, Sentences: 3, InvalidCitations: []string{"9"}, HallucinationDetected: true},
			Metadata: map[string]any{"purpose": "triage", "n": 2.0, "ok": true, "none": nil,
				"nested": map[string]any{"k": []any{"v", -1.5, false, []any{}}}, "empty": map[string]any{}},
			Conversation: []sdk.Turn{{Role: "system", Content: "s"}, {Role: "assistant", Name: "bot",
				ToolCalls: []sdk.ToolCall{{ID: "c1", Name: "search", Arguments: `{"q":1}`}}}, {Role: "tool", ToolCallID: "c1", Content: "hits"}},
			ToolCalls: []sdk.ToolCall{{ID: "c2", Name: "send", Arguments: "{}", Result: "ok"}},
		}},
		{name: "empty metadata is not absent", run: sdk.Run{Metadata: map[string]any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := AppendRun(nil, &tt.run)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadRun(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.run) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, tt.run)
			}
		})
	}
}

func TestResultCodec(t *testing.T) {
	score, yes := 0.75, true
	tests := []struct {
		name string
		res  sdk.Result
	}{
		{name: "skipped", res: sdk.Skipped("no context")},
		{name: "failed", res: sdk.Failed(sdk.CodeJudgeError, "judge down")},
		{name: "every field", res: sdk.Result{
			Status: sdk.StatusScored, Score: &score, Passed: &yes,
			Dimensions:        map[string]float64{"integrity": 1, "relevance": 0.5},
			SkippedDimensions: map[string]string{"faithfulness": "no evidence"},
			Reason:            "fine", Flags: []string{"refusal"}, Suggestions: []string{"cite"},
			Steps:         []sdk.Step{{Name: "analyze", Prompt: "p", Output: json.RawMessage(`{"v":1}`)}, {Name: "score"}},
			Adjustments:   []sdk.Adjustment{{Rule: "normalize_range", Target: "score", From: 75, To: 0.75}},
			CitationAudit: &sdk.CitationAudit{Citations: 1},
			Telemetry: sdk.Telemetry{DurationMS: 1.25, Runtime: "wasm", JudgeCalls: 2, CacheHits: 3, Retries: 4,
				PromptTokens: 5, CompletionTokens: 6, Nodes: []map[string]any{{"node": "evaluator", "scores": []any{1.0}}}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := AppendResult(nil, &tt.res)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadResult(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.res) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, tt.res)
			}
		})
	}
}

func TestResultCodecRejects(t *testing.T) {
	valid, err := AppendResult(nil, &sdk.Result{Status: sdk.StatusScored, Steps: []sdk.Step{{Name: "s", Output: json.RawMessage(`1`)}}})
	if err != nil {
		t.Fatal(err)
	}
	badStep, err := AppendResult(nil, &sdk.Result{Status: sdk.StatusScored, Steps: []sdk.Step{{Name: "s", Output: json.RawMessage(`{nope`)}}})
	if err != nil {
		t.Fatal(err)
	}
	hugeCount := binary.LittleEndian.AppendUint32(appendStr(nil, "scored"), 0)
	hugeCount = binary.LittleEndian.AppendUint64(hugeCount, 0)
	hugeCount = binary.LittleEndian.AppendUint32(hugeCount, 1<<30)
	tests := []struct {
		name string
		b    []byte
	}{
		{name: "truncated", b: valid[:len(valid)-3]},
		{name: "trailing bytes", b: append(append([]byte(nil), valid...), 0)},
		{name: "step output not JSON", b: badStep},
		{name: "count larger than the payload", b: hugeCount},
		{name: "empty", b: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ReadResult(tt.b); !errors.Is(err, ErrCodec) {
				t.Fatalf("ReadResult error %v, want ErrCodec", err)
			}
		})
	}
}

// runWith encodes an empty run whose time and metadata are the given raw encodings.
func runWith(time string, metadata []byte) []byte {
	var b []byte
	for range 5 {
		b = appendStr(b, "")
	}
	b = binary.LittleEndian.AppendUint32(b, 0) // context
	b = append(b, 0)                           // no citation audit
	return append(appendStr(b, time), metadata...)
}

func TestRunCodecRejects(t *testing.T) {
	deep := []byte{}
	for range maxDepth + 2 {
		deep = binary.LittleEndian.AppendUint32(append(deep, tagArray), 1)
	}
	deep = append(deep, tagNull)
	tests := []struct {
		name string
		b    []byte
	}{
		{name: "unknown value tag", b: runWith("", []byte{9})},
		{name: "metadata not an object", b: runWith("", append([]byte{tagString}, appendStr(nil, "x")...))},
		{name: "time not RFC 3339", b: runWith("yesterday", []byte{tagNull})},
		{name: "nested deeper than the limit", b: runWith("", deep)},
		{name: "object count larger than the payload", b: runWith("", binary.LittleEndian.AppendUint32([]byte{tagObject}, 1<<30))},
		{name: "truncated", b: runWith("", nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ReadRun(tt.b); !errors.Is(err, ErrCodec) {
				t.Fatalf("ReadRun error %v, want ErrCodec", err)
			}
		})
	}
	t.Run("allowed: the same layout with valid fields", func(t *testing.T) {
		metadata := binary.LittleEndian.AppendUint32([]byte{tagObject}, 0)
		r, err := ReadRun(runWith("2026-01-02T03:04:05.5+01:00", append(metadata, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))) // no turns, tool calls or expected tool calls
		if err != nil || r.Time == nil || r.Time.Nanosecond() != 5e8 || r.Metadata == nil {
			t.Fatalf("got %+v, %v", r, err)
		}
	})
}

// TestCodecCarriesEveryField fills every field of sdk.Run and sdk.Result, recursively,
// and holds the codec to a lossless round trip: a field added to the contract that the
// binary codec does not carry fails here, not in a guest.
func TestCodecCarriesEveryField(t *testing.T) {
	var run sdk.Run
	fill(t, reflect.ValueOf(&run).Elem(), "Run")
	b, err := AppendRun(nil, &run)
	if err != nil {
		t.Fatal(err)
	}
	gotRun, err := ReadRun(b)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, gotRun, run)

	var res sdk.Result
	fill(t, reflect.ValueOf(&res).Elem(), "Result")
	if b, err = AppendResult(nil, &res); err != nil {
		t.Fatal(err)
	}
	gotRes, err := ReadResult(b)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, gotRes, res)
}

func sameJSON(t *testing.T, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("round trip lost something:\n got %s\nwant %s", g, w)
	}
}

// fill sets v and everything under it to non-zero values.
func fill(t *testing.T, v reflect.Value, path string) {
	switch {
	case v.Type() == reflect.TypeOf(time.Time{}):
		v.Set(reflect.ValueOf(time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.FixedZone("", 2*3600))))
		return
	case v.Type() == reflect.TypeOf(json.RawMessage(nil)):
		v.Set(reflect.ValueOf(json.RawMessage(`{"x":[1,"y"]}`)))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(t, v.Field(i), path+"."+v.Type().Field(i).Name)
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), path)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(t, v.Index(0), path+"[0]")
		fill(t, v.Index(1), path+"[1]")
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		if v.Type().Elem().Kind() == reflect.Interface {
			v.SetMapIndex(reflect.ValueOf("s"), reflect.ValueOf(any("text")))
			v.SetMapIndex(reflect.ValueOf("n"), reflect.ValueOf(any(2.5)))
			v.SetMapIndex(reflect.ValueOf("nested"), reflect.ValueOf(any(map[string]any{"a": []any{true, nil}})))
			return
		}
		for _, k := range []string{"a", "b"} {
			e := reflect.New(v.Type().Elem()).Elem()
			fill(t, e, path+"["+k+"]")
			v.SetMapIndex(reflect.ValueOf(k), e)
		}
	case reflect.String:
		v.SetString("s-" + path)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Int:
		v.SetInt(7)
	case reflect.Bool:
		v.SetBool(true)
	default:
		t.Fatalf("%s: fill does not know %s; teach it, and the codec, this type", path, v.Type())
	}
}

// codecFingerprints maps each CodecRevision to the fingerprint of the contract's fields
// it encodes (see fingerprint).
var codecFingerprints = map[int]string{
	1: "d2deec6a7752414a",
	2: "0703ef36d864882b",
}

// TestCodecRevision: the binary layout follows the fields of sdk.Run and sdk.Result, so
// when they change, CodecRevision must change with the codec; otherwise a guest built
// before the change would be misread by a host built after it.
func TestCodecRevision(t *testing.T) {
	got := fingerprint(reflect.TypeOf(sdk.Run{})) + "|" + fingerprint(reflect.TypeOf(sdk.Result{}))
	sum := sha256.Sum256([]byte(got))
	fp := hex.EncodeToString(sum[:8])
	if want := codecFingerprints[CodecRevision]; fp != want {
		t.Fatalf("the fields of sdk.Run or sdk.Result changed (fingerprint %s; revision %d was made for %q): "+
			"carry them in the binary codec (internal/wasmabi/codec.go), document the layout in docs/ABI.md, bump CodecRevision "+
			"and add %d: %q to codecFingerprints", fp, CodecRevision, want, CodecRevision+1, fp)
	}
}

// fingerprint describes a type's fields, recursively, as the codec sees them.
func fingerprint(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct:
		if t == reflect.TypeOf(time.Time{}) {
			return "time"
		}
		var b strings.Builder
		b.WriteString("{")
		for i := range t.NumField() {
			f := t.Field(i)
			if f.IsExported() {
				b.WriteString(f.Name + ":" + fingerprint(f.Type) + ";")
			}
		}
		return b.String() + "}"
	case reflect.Pointer:
		return "*" + fingerprint(t.Elem())
	case reflect.Slice:
		return "[]" + fingerprint(t.Elem())
	case reflect.Map:
		return "map[" + fingerprint(t.Key()) + "]" + fingerprint(t.Elem())
	}
	return t.Kind().String()
}

// TestDecoderTruncated holds each fixed-size read of a short payload to its message, and
// the first failure to stick.
func TestDecoderTruncated(t *testing.T) {
	for _, tc := range []struct {
		name    string
		payload []byte
		read    func(*decoder)
		want    string
	}{
		{"byte", nil, func(d *decoder) { d.byte() }, "binary codec: truncated: want 1 more byte, have 0"},
		{"u32", []byte{1, 2}, func(d *decoder) { d.u32() }, "binary codec: truncated: want 4 more bytes, have 2"},
		{"u64", []byte{1, 2, 3}, func(d *decoder) { d.u64() }, "binary codec: truncated: want 8 more bytes, have 3"},
		{"first failure sticks", []byte{1}, func(d *decoder) { d.u32(); d.u64() }, "binary codec: truncated: want 4 more bytes, have 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDecoder(tc.payload)
			tc.read(&d)
			if d.err == nil || d.err.Error() != tc.want || !errors.Is(d.err, ErrCodec) {
				t.Fatalf("error %v, want %q wrapping ErrCodec", d.err, tc.want)
			}
		})
	}
}
