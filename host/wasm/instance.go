package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/scorekit/scorekit/sdk"
	"github.com/scorekit/scorekit/sdk/serve"
)

// instance is one initialized guest. It serves one call at a time, for one tenant.
type instance struct {
	a    *artifact
	mod  api.Module
	mem  api.Memory
	info api.Function
	// alloc, configure and score are the ABI's exports.
	alloc, configure, score api.Function
	// bufPtr and bufCap describe the guest's input buffer, reused while big enough.
	bufPtr, bufCap uint32
	calls          int
	out            *cappedWriter
	// pending is the reply of the last judge call, until the guest reads it.
	pending []byte
	// payload is the encoded run of the current call, reused across calls.
	payload []byte
	// stack is reused by every call: params in, results out.
	stack [4]uint64
	// state is what host functions need during the current call.
	state callState
}

// callState travels in the context of each call into a guest, for the host functions.
type callState struct {
	inst   *instance
	info   *sdk.Info
	judge  sdk.Judge
	tenant string
}

type callKey struct{}

func (a *artifact) newInstance(ctx context.Context) (*instance, error) {
	inst := &instance{a: a, out: &cappedWriter{max: a.limits.MaxOutputBytes}}
	inst.state.inst = inst
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions("_initialize").
		WithStdout(inst.out).
		WithStderr(inst.out).
		WithSysNanotime().
		WithSysWalltime()
	mod, err := a.rt.InstantiateModule(context.WithValue(ctx, callKey{}, &inst.state), a.cm, cfg)
	if err != nil {
		kept, _ := inst.out.take()
		return nil, fmt.Errorf("instantiate %s: %w%s", a.path, describe(err, ""), tail(kept))
	}
	inst.mod, inst.mem = mod, mod.Memory()
	inst.info = mod.ExportedFunction(serve.ExportInfo)
	inst.alloc = mod.ExportedFunction(serve.ExportAlloc)
	inst.configure = mod.ExportedFunction(serve.ExportConfigure)
	inst.score = mod.ExportedFunction(serve.ExportScore)
	return inst, nil
}

// call calls fn with inst.stack as its parameters and results.
func (inst *instance) call(ctx context.Context, fn api.Function) error {
	return fn.CallWithStack(context.WithValue(ctx, callKey{}, &inst.state), inst.stack[:])
}

// write puts b into the guest's input buffer, asking the guest for a bigger one first
// when b does not fit, and returns the pointer.
func (inst *instance) write(ctx context.Context, b []byte) (uint32, error) {
	if uint32(len(b)) > inst.bufCap || inst.bufCap == 0 {
		size := max(uint32(len(b)), 4096)
		inst.stack[0] = uint64(size)
		if err := inst.call(ctx, inst.alloc); err != nil {
			return 0, err
		}
		inst.bufPtr, inst.bufCap = uint32(inst.stack[0]), size
	}
	if !inst.mem.Write(inst.bufPtr, b) {
		inst.bufCap = 0
		return 0, &sdk.Error{Code: sdk.CodeInvalidResult, Message: fmt.Sprintf(
			"%s returned %d, which leaves no room for %d bytes in a memory of %d bytes; fix the guest's allocator",
			serve.ExportAlloc, inst.bufPtr, len(b), inst.mem.Size())}
	}
	return inst.bufPtr, nil
}

// reply returns a view of the reply packed in v, valid until the next call.
func (inst *instance) reply(v uint64) ([]byte, error) {
	ptr, n := serve.Unpack(v)
	if int(n) > inst.a.limits.MaxResultBytes {
		return nil, &sdk.Error{Code: sdk.CodeLimitExceeded, Message: fmt.Sprintf(
			"reply of %d bytes exceeds the limit of %d; shorten the result or raise limits.max_result_bytes in the manifest",
			n, inst.a.limits.MaxResultBytes)}
	}
	view, ok := inst.mem.Read(ptr, n)
	if !ok {
		return nil, &sdk.Error{Code: sdk.CodeInvalidResult, Message: fmt.Sprintf(
			"reply at %d (+%d bytes) lies outside the module's %d bytes of memory; the guest must return a pointer into its memory (docs/ABI.md)",
			ptr, n, inst.mem.Size())}
	}
	return view, nil
}

// configureWith sends a scorer its config.
func (inst *instance) configureWith(ctx context.Context, index uint32, config []byte) error {
	ptr, err := inst.write(ctx, config)
	if err != nil {
		return err
	}
	inst.stack[0], inst.stack[1], inst.stack[2] = uint64(index), uint64(ptr), uint64(len(config))
	if err := inst.call(ctx, inst.configure); err != nil {
		return err
	}
	view, err := inst.reply(inst.stack[0])
	if err != nil || len(view) == 0 {
		return err
	}
	var e sdk.Error
	if err := json.Unmarshal(view, &e); err != nil || e.Message == "" {
		return &sdk.Error{Code: sdk.CodeInvalidResult, Message: fmt.Sprintf(
			"%s replied %.200q; want nothing or a JSON error {code, message} (docs/ABI.md)", serve.ExportConfigure, view)}
	}
	return &e
}

func (inst *instance) close(ctx context.Context) {
	if inst.mod != nil {
		_ = inst.mod.Close(ctx)
	}
}

// memoryBytes is the guest's current linear memory size.
func (inst *instance) memoryBytes() int { return int(inst.mem.Size()) }

// atMemoryLimit reports whether the guest has grown to (nearly) its memory limit, which
// makes a trap a memory-limit failure rather than a bug.
func (inst *instance) atMemoryLimit() bool {
	limit := inst.a.limits.MemoryMiB << 20
	return inst.mem != nil && inst.memoryBytes() >= limit-limit/16
}

// describe turns an error from a guest call into an *sdk.Error with a code and a message
// that says what happened; output is what the guest wrote to stdout/stderr, kept for
// context (a Go guest prints its panic there).
func describe(err error, output string) error {
	var se *sdk.Error
	if errors.As(err, &se) {
		return se
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded:
			return &sdk.Error{Code: sdk.CodeTimeout, Message: "stopped at its deadline; raise limits.timeout_ms in the manifest or the host's timeout if the scorer needs longer"}
		case sys.ExitCodeContextCanceled:
			return &sdk.Error{Code: sdk.CodeCanceled, Message: "canceled by the caller"}
		}
		msg := fmt.Sprintf("guest exited with code %d", exit.ExitCode())
		if strings.Contains(output, "out of memory") {
			return &sdk.Error{Code: sdk.CodeLimitExceeded, Message: msg + ": out of memory" + tail(output)}
		}
		return &sdk.Error{Code: sdk.CodeTrap, Message: msg + tail(output)}
	}
	return &sdk.Error{Code: sdk.CodeTrap, Message: err.Error() + tail(output)}
}

// tail formats captured guest output for an error message, short enough to read.
func tail(output string) string {
	output = strings.TrimSpace(output)
	if output == "" {
		return ""
	}
	if len(output) > 512 {
		output = output[:512] + "..."
	}
	return "; guest output: " + output
}
