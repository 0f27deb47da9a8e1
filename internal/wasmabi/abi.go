// Package wasmabi is scorekit's WASM ABI as the Go guest (sdk/serve) and the host
// (host/wasm) both speak it: the names of its imports and exports, its flags, the packing
// of a pointer and a length, the batch framing of ABI v2 and the binary payload codec. It
// is one package both import so that the two sides cannot drift; it is internal because
// the ABI's specification for guests in any language is docs/ABI.md, not a Go API.
package wasmabi

import "github.com/scorekit/scorekit/sdk"

// The names and numbers of scorekit's WASM ABI v1, shared by the Go guest and the host so
// the two cannot drift. docs/ABI.md is the specification for guests in other languages.
const (
	// ABIModule is the import module of the host functions a guest may call.
	ABIModule = "scorekit_v1"
	// ABIExportPrefix starts every export of the ABI; a module exporting names with another
	// scorekit_vN_ prefix was built for another ABI version.
	ABIExportPrefix = "scorekit_v1_"

	// ExportAlloc is alloc(size i32) -> ptr i32: a guest-owned buffer the host writes
	// requests into, valid until the next alloc.
	ExportAlloc = "scorekit_v1_alloc"
	// ExportInfo is info() -> packed i64: a JSON array of sdk.Info, one per scorer.
	ExportInfo = "scorekit_v1_info"
	// ExportConfigure is configure(scorer i32, ptr i32, len i32) -> packed i64: an empty
	// reply on success, else a JSON sdk.Error.
	ExportConfigure = "scorekit_v1_configure"
	// ExportScore is score(scorer i32, flags i32, ptr i32, len i32) -> packed i64: the
	// JSON sdk.Result for the JSON sdk.Run at ptr.
	ExportScore = "scorekit_v1_score"

	// ImportJudgeComplete is judge_complete(ptr i32, len i32) -> i32: runs a JSON array of
	// sdk.CompletionRequest and returns the length of the JSON reply to read.
	ImportJudgeComplete = "judge_complete"
	// ImportJudgeEmbed is judge_embed(ptr i32, len i32) -> i32: embeds a JSON array of
	// strings and returns the length of the JSON reply to read.
	ImportJudgeEmbed = "judge_embed"
	// ImportReplyRead is reply_read(ptr i32, len i32) -> i32: copies the pending reply to
	// ptr and returns the bytes copied.
	ImportReplyRead = "reply_read"
	// ImportLog is log(level i32, ptr i32, len i32): a log line at a log/slog level.
	ImportLog = "log"

	// FlagJudge in score's flags says a judge is available for this call: the guest gives
	// the scorer an sdk.Judge backed by the host functions; without it the scorer gets none.
	FlagJudge = 1
)

// ABI v2 adds one export and one import to v1: a batch of runs per call. A guest that
// exports ExportScoreBatch speaks v2 and the host sends it every run through it; a guest
// without it is a v1 guest, called once per run. Everything else (info, configure, alloc,
// codecs, the judge and log imports) is v1's, unchanged.
const (
	// ABIModuleV2 is the import module of the host functions v2 adds.
	ABIModuleV2 = "scorekit_v2"
	// ExportScoreBatch is score_batch(scorer i32, flags i32, ptr i32, len i32) -> i32: the
	// request at ptr is a batch (u32 n, then n times a u32 length and a run in the codec
	// flags select); the guest scores the runs in order, hands each result to the host
	// with ImportResult as soon as it has it, stops when the host answers 0, and returns
	// the number of results it handed over.
	ExportScoreBatch = "scorekit_v2_score_batch"
	// ImportResult is result(ptr i32, len i32) -> i32: the result of the batch's next run,
	// read by the host during the call. The answer is 1 to go on with the next run, 0 to
	// return now (the host scores the rest elsewhere).
	ImportResult = "result"
)

// AppendBatch appends a batch header for n runs to b: the runs follow, each after
// AppendBatchRun's length.
func AppendBatch(b []byte, n int) []byte {
	return append(b, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
}

// NextBatchRun returns the first run of the batch body b (after its header) and the rest,
// ok false when b is too short for the length it gives.
func NextBatchRun(b []byte) (run, rest []byte, ok bool) {
	if len(b) < 4 {
		return nil, nil, false
	}
	n := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24
	if n > uint64(len(b)-4) {
		return nil, nil, false
	}
	return b[4 : 4+n], b[4+n:], true
}

// Reply is the JSON a judge host function answers with: one of its fields is set.
type Reply struct {
	// Responses answers judge_complete, one per request, in order.
	Responses []sdk.CompletionResponse `json:"responses,omitempty"`
	// Vectors answers judge_embed, one per text, in order.
	Vectors [][]float32 `json:"vectors,omitempty"`
	// Error is set when the whole call failed (capability not declared, no judge
	// configured, budget exhausted, deadline).
	Error *sdk.Error `json:"error,omitempty"`
}

// Pack packs a pointer and a length into the i64 the ABI returns: ptr in the high 32 bits.
func Pack(ptr, size uint32) uint64 { return uint64(ptr)<<32 | uint64(size) }

// Unpack splits a packed i64 into its pointer and length.
func Unpack(v uint64) (ptr, size uint32) { return uint32(v >> 32), uint32(v) }
