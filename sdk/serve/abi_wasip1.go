package serve

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"runtime/debug"
	"unsafe"

	"github.com/scorekit/scorekit/internal/wasmabi"
	"github.com/scorekit/scorekit/sdk"
)

// This file is the Go guest of ABI v1 (docs/ABI.md). The module is a WASI reactor: the
// host runs _initialize once, which initializes packages and so runs the plugin's
// serve.Register, then calls the exports below one at a time. A wasm instance is single
// threaded, which is why the guest's state lives in package variables.

// Main is a plugin's main for GOOS=wasip1. A reactor's main never runs; it exists so the
// same main package builds for every runtime.
func Main() {}

// guestGOGC is the collector's target of a Go guest whose environment sets no GOGC. A
// guest's collector runs on the guest's one thread, inside the calls it slows, and marks
// the scorers' tables (lexicons, phrase sets: most of a guest's live heap) at every cycle;
// at Go's default of 100 a cheap scorer spent a third of its call in it. 400 lets the heap
// grow to five times what is live between cycles (25-33 MiB in use for the built-ins
// instead of 11-13, under the GOMEMLIMIT the host sets at four fifths of the memory limit,
// which makes the collector work harder as the heap nears it). BENCHMARKS.md, "WASM at
// the guest's speed", has the figures.
const guestGOGC = 400

func init() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(guestGOGC)
	}
}

var (
	// input is the buffer the host writes requests into (see alloc).
	input []byte
	// reply holds the last reply until the next call, as the ABI promises the host.
	reply []byte
	// instances are the configured scorers, created on first use, one per factory.
	instances []sdk.Scorer
	infos     []sdk.Info
)

//go:wasmexport scorekit_v1_alloc
func abiAlloc(size uint32) uint32 {
	if int(size) > cap(input) {
		input = make([]byte, size)
	}
	input = input[:size]
	if size == 0 {
		input = make([]byte, 1)
	}
	return uint32(uintptr(unsafe.Pointer(unsafe.SliceData(input))))
}

//go:wasmexport scorekit_v1_info
func abiInfo() uint64 {
	loadInfos()
	return send(mustMarshal(infos))
}

//go:wasmexport scorekit_v1_codecs
func abiCodecs() uint32 {
	return wasmabi.CodecBinary | wasmabi.CodecRevision<<wasmabi.CodecRevisionShift
}

//go:wasmexport scorekit_v1_configure
func abiConfigure(scorer uint32, ptr unsafe.Pointer, size uint32) uint64 {
	s := instance(scorer)
	if s == nil {
		return send(mustMarshal(noScorer().Error))
	}
	c, ok := s.(sdk.Configurer)
	if !ok {
		return send(nil)
	}
	if err := c.Configure(json.RawMessage(request(ptr, size))); err != nil {
		return send(mustMarshal(sdk.FailedErr(err).Error))
	}
	return send(nil)
}

//go:wasmexport scorekit_v1_score
func abiScore(scorer, flags uint32, ptr unsafe.Pointer, size uint32) uint64 {
	return scoreRun(scorer, flags, request(ptr, size))
}

// abiScoreBatch is ABI v2's call: the runs of a batch, each scored as scorekit_v1_score
// scores one, their results handed to the host one by one as they are ready, so a run
// that traps or runs past its deadline costs the host only that run.
//
//go:wasmexport scorekit_v2_score_batch
func abiScoreBatch(scorer, flags uint32, ptr unsafe.Pointer, size uint32) uint32 {
	req := request(ptr, size)
	if len(req) < 4 {
		return 0
	}
	n := uint32(req[0]) | uint32(req[1])<<8 | uint32(req[2])<<16 | uint32(req[3])<<24
	rest := req[4:]
	for i := range n {
		run, next, ok := wasmabi.NextBatchRun(rest)
		if !ok {
			return i
		}
		rest = next
		p, l := wasmabi.Unpack(scoreRun(scorer, flags, run))
		if hostResult(p, l) == 0 {
			return i + 1
		}
	}
	return n
}

//go:wasmimport scorekit_v2 result
func hostResult(ptr, size uint32) uint32

// scoreRun scores one run of the request, as score's reply.
func scoreRun(scorer, flags uint32, req []byte) uint64 {
	binary := flags&wasmabi.FlagBinary != 0
	s := instance(scorer)
	if s == nil {
		return sendResult(binary, noScorer())
	}
	call := sdk.Call{}
	var err error
	if binary {
		call.Run, err = wasmabi.ReadRun(req)
	} else {
		err = json.Unmarshal(req, &call.Run)
	}
	if err != nil {
		return sendResult(binary, sdk.Failed(sdk.CodeInvalidRun, "decode run: "+err.Error()))
	}
	info := &infos[scorer]
	if flags&wasmabi.FlagJudge != 0 && (info.Has(sdk.CapJudge) || info.Has(sdk.CapEmbed)) {
		call.Judge = hostJudge{}
	}
	res, err := s.Score(context.Background(), call)
	if err != nil {
		res = sdk.FailedErr(err)
	}
	return sendResult(binary, res)
}

// resultBuf is reused by every binary reply: the host reads a reply before its next call.
var resultBuf []byte

func sendResult(binary bool, res sdk.Result) uint64 {
	if !binary {
		return send(mustMarshal(res))
	}
	b, err := wasmabi.AppendResult(resultBuf[:0], &res)
	if err != nil {
		fail := sdk.Failed(sdk.CodeScorerError, err.Error())
		b, _ = wasmabi.AppendResult(resultBuf[:0], &fail)
	}
	resultBuf = b
	return send(b)
}

// loadInfos constructs every scorer, for the info export (called once per module).
func loadInfos() {
	for i := range scorers {
		instance(uint32(i))
	}
}

// instance returns scorer number i, constructing it on first use, or nil when there is
// none. An instance serves one scorer, so it constructs only that one: constructors may
// parse lexicons, and a guest pays for every loop.
func instance(i uint32) sdk.Scorer {
	if int(i) >= len(scorers) {
		return nil
	}
	if instances == nil {
		slog.SetDefault(slog.New(hostLogger{}))
		instances = make([]sdk.Scorer, len(scorers))
		infos = make([]sdk.Info, len(scorers))
	}
	if instances[i] == nil {
		instances[i] = scorers[i]()
		infos[i] = instances[i].Info()
	}
	return instances[i]
}

func noScorer() sdk.Result {
	return sdk.Failed(sdk.CodeInvalidRun, "no scorer at this index; call scorekit_v1_info for the list")
}

// request views the host's request in place: the host wrote it into input, so no copy.
func request(ptr unsafe.Pointer, size uint32) []byte {
	if size == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(ptr), size)
}

func send(b []byte) uint64 {
	reply = b
	if len(b) == 0 {
		return 0
	}
	return wasmabi.Pack(uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b)))), uint32(len(b)))
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(sdk.Failed(sdk.CodeScorerError, "encode reply: "+err.Error()))
	}
	return b
}

//go:wasmimport scorekit_v1 judge_complete
func hostJudgeComplete(ptr unsafe.Pointer, size uint32) uint32

//go:wasmimport scorekit_v1 judge_embed
func hostJudgeEmbed(ptr unsafe.Pointer, size uint32) uint32

//go:wasmimport scorekit_v1 reply_read
func hostReplyRead(ptr unsafe.Pointer, size uint32) uint32

//go:wasmimport scorekit_v1 log
func hostLog(level int32, ptr unsafe.Pointer, size uint32)

// hostLogger sends log/slog records to the host's log through the log import, so a
// scorer's slog calls reach the host's logger (capped per call like stdout and stderr).
type hostLogger struct{ attrs []slog.Attr }

func (hostLogger) Enabled(context.Context, slog.Level) bool { return true }

func (h hostLogger) Handle(_ context.Context, r slog.Record) error {
	b := []byte(r.Message)
	add := func(a slog.Attr) bool {
		b = append(b, ' ')
		b = append(b, a.Key...)
		b = append(b, '=')
		b = append(b, a.Value.String()...)
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	if len(b) > 0 {
		hostLog(int32(r.Level), unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b)))
	}
	return nil
}

func (h hostLogger) WithAttrs(attrs []slog.Attr) slog.Handler {
	return hostLogger{attrs: append(append([]slog.Attr(nil), h.attrs...), attrs...)}
}

// WithGroup is not supported by this small handler: attributes keep their plain keys.
func (h hostLogger) WithGroup(string) slog.Handler { return h }

// hostJudge is the sdk.Judge of a WASM guest: each batch is one host call.
type hostJudge struct{}

var _ sdk.Judge = hostJudge{}

func (hostJudge) Complete(_ context.Context, reqs []sdk.CompletionRequest) ([]sdk.CompletionResponse, error) {
	r, err := hostCall(hostJudgeComplete, reqs)
	if err != nil {
		return nil, err
	}
	return r.Responses, nil
}

func (hostJudge) Embed(_ context.Context, texts []string) ([][]float32, error) {
	r, err := hostCall(hostJudgeEmbed, texts)
	if err != nil {
		return nil, err
	}
	return r.Vectors, nil
}

func hostCall(fn func(unsafe.Pointer, uint32) uint32, req any) (wasmabi.Reply, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return wasmabi.Reply{}, &sdk.Error{Code: sdk.CodeJudgeError, Message: "encode judge request: " + err.Error()}
	}
	n := fn(unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b)))
	buf := make([]byte, n)
	if n > 0 {
		buf = buf[:hostReplyRead(unsafe.Pointer(unsafe.SliceData(buf)), n)]
	}
	var r wasmabi.Reply
	if err := json.Unmarshal(buf, &r); err != nil {
		return wasmabi.Reply{}, &sdk.Error{Code: sdk.CodeJudgeError, Message: "decode judge reply: " + err.Error()}
	}
	if r.Error != nil {
		return wasmabi.Reply{}, r.Error
	}
	return r, nil
}
