package serve

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
