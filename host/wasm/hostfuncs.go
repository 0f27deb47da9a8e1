package wasm

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/tetratelabs/wazero/api"

	"github.com/scorekit/scorekit/internal/wasmabi"
	"github.com/scorekit/scorekit/sdk"
)

// instantiateHostModule provides the scorekit_v1 import module: the judge, gated by the
// calling scorer's declared capabilities, and logging.
func (a *artifact) instantiateHostModule(ctx context.Context) error {
	b := a.rt.NewHostModuleBuilder(wasmabi.ABIModule)
	fns := map[string]api.GoModuleFunc{
		wasmabi.ImportJudgeComplete: a.judgeFunc(sdk.CapJudge, complete),
		wasmabi.ImportJudgeEmbed:    a.judgeFunc(sdk.CapEmbed, embed),
		wasmabi.ImportReplyRead:     replyRead,
		wasmabi.ImportLog:           a.logFunc,
	}
	for name, fn := range fns {
		sig := hostFunctions[name]
		b.NewFunctionBuilder().WithGoModuleFunction(fn, sig.params, sig.results).Export(name)
	}
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("instantiate host module %s: %w", wasmabi.ABIModule, err)
	}
	v2 := a.rt.NewHostModuleBuilder(wasmabi.ABIModuleV2)
	sig := hostFunctionsV2[wasmabi.ImportResult]
	v2.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(resultFunc), sig.params, sig.results).Export(wasmabi.ImportResult)
	if _, err := v2.Instantiate(ctx); err != nil {
		return fmt.Errorf("instantiate host module %s: %w", wasmabi.ABIModuleV2, err)
	}
	return nil
}

// resultFunc is ABI v2's result import: (ptr, len) of the result of the batch's next run
// -> 1 to go on, 0 to return. Outside a batch it answers 0 and the call is doubted.
func resultFunc(ctx context.Context, mod api.Module, stack []uint64) {
	st, _ := ctx.Value(callKey{}).(*callState)
	if st == nil || st.batch == nil {
		if st != nil {
			st.inst.doubted = true
		}
		stack[0] = 0
		return
	}
	stack[0] = st.batch.settle(ctx, uint32(stack[0]), uint32(stack[1]))
}

func complete(ctx context.Context, j sdk.Judge, req []byte) wasmabi.Reply {
	var reqs []sdk.CompletionRequest
	if err := json.Unmarshal(req, &reqs); err != nil {
		return errReply("judge_complete: want a JSON array of completion requests: " + err.Error())
	}
	out, err := j.Complete(ctx, reqs)
	if err != nil {
		return wasmabi.Reply{Error: judgeError(err)}
	}
	return wasmabi.Reply{Responses: out}
}

func embed(ctx context.Context, j sdk.Judge, req []byte) wasmabi.Reply {
	var texts []string
	if err := json.Unmarshal(req, &texts); err != nil {
		return errReply("judge_embed: want a JSON array of strings: " + err.Error())
	}
	out, err := j.Embed(ctx, texts)
	if err != nil {
		return wasmabi.Reply{Error: judgeError(err)}
	}
	return wasmabi.Reply{Vectors: out}
}

func judgeError(err error) *sdk.Error {
	if e, ok := err.(*sdk.Error); ok {
		return e
	}
	return &sdk.Error{Code: sdk.CodeJudgeError, Message: err.Error()}
}

func errReply(msg string) wasmabi.Reply {
	return wasmabi.Reply{Error: &sdk.Error{Code: sdk.CodeJudgeError, Message: msg}}
}

// judgeFunc is a judge host function: (ptr, len) of the request -> length of the reply,
// which the guest then copies with reply_read.
func (a *artifact) judgeFunc(c sdk.Capability, run func(context.Context, sdk.Judge, []byte) wasmabi.Reply) api.GoModuleFunc {
	return func(ctx context.Context, mod api.Module, stack []uint64) {
		st, _ := ctx.Value(callKey{}).(*callState)
		if st == nil {
			// Unreachable: every call into a guest carries its state.
			panic(fmt.Sprintf("%s: call without call state", wasmabi.ABIModule))
		}
		req, ok := mod.Memory().Read(uint32(stack[0]), uint32(stack[1]))
		var reply wasmabi.Reply
		switch {
		case !ok:
			reply = errReply(fmt.Sprintf("request at %d (+%d bytes) lies outside the module's memory", uint32(stack[0]), uint32(stack[1])))
		case st.info == nil:
			reply = errReply("the judge is available only during " + wasmabi.ExportScore)
		case !st.info.Has(c):
			reply = wasmabi.Reply{Error: &sdk.Error{Code: sdk.CodeJudgeError, Message: fmt.Sprintf(
				"capability %q not declared: scorer %s must list %q in Info.Capabilities to use the judge", c, st.info.Name, c)}}
		case st.judge == nil:
			reply = wasmabi.Reply{Error: &sdk.Error{Code: sdk.CodeUnavailable, Message: sdk.NoJudge(st.info.Name).Reason}}
		default:
			reply = run(ctx, st.judge, req)
		}
		b, err := json.Marshal(reply)
		if err != nil {
			b, _ = json.Marshal(errReply("encode judge reply: " + err.Error()))
		}
		st.inst.pending = b
		stack[0] = uint64(len(b))
	}
}

// replyRead copies the pending judge reply into the guest: (ptr, len) -> bytes copied.
func replyRead(ctx context.Context, mod api.Module, stack []uint64) {
	st, _ := ctx.Value(callKey{}).(*callState)
	ptr, n := uint32(stack[0]), uint32(stack[1])
	if st == nil {
		stack[0] = 0
		return
	}
	p := st.inst.pending
	if uint32(len(p)) < n {
		n = uint32(len(p))
	}
	if !mod.Memory().Write(ptr, p[:n]) {
		n = 0
	}
	st.inst.pending = nil
	stack[0] = uint64(n)
}

// logFunc writes one guest log line, counted against the call's output cap.
func (a *artifact) logFunc(ctx context.Context, mod api.Module, stack []uint64) {
	st, _ := ctx.Value(callKey{}).(*callState)
	level := slog.Level(int32(uint32(stack[0])))
	msg, ok := mod.Memory().Read(uint32(stack[1]), uint32(stack[2]))
	if !ok || st == nil {
		return
	}
	kept := st.inst.out.admitLine(msg)
	if kept == "" {
		return
	}
	attrs := []any{"tenant", st.tenant}
	if st.info != nil {
		attrs = append(attrs, "scorer", st.info.Name)
	}
	a.log.Log(ctx, level, kept, attrs...)
}
