package wasm

import (
	"container/list"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/wasmabi"
	"github.com/scorekit/scorekit/sdk"
)

// instance is one initialized guest. It serves one call at a time, for one tenant, and
// may serve every scorer of its artifact (each configured once, on first use).
type instance struct {
	a    *artifact
	mod  api.Module
	mem  api.Memory
	lin  *linearMemory // nil where memory lives in the Go heap
	info api.Function
	// score is the ABI's export for each run. wazero keeps a call's stack with the
	// function, grown to the deepest the guest went, so the exports called now and then
	// (alloc, configure) are looked up for each call and their stacks go with it: an
	// instance keeps one stack, which the engine's memory budget counts (stackBytes).
	score api.Function
	// batch is ABI v2's batch export (nil for a v1 guest); a v2 guest is called through it
	// alone, so it too keeps one stack.
	batch api.Function
	// doubted is set when the guest misused the ABI in a way that leaves its reply in
	// doubt (a result handed over outside a batch): the instance is discarded.
	doubted bool
	// bs is the state of the batch call in progress, reused call after call.
	bs batchState
	// stop and fuel are the globals the host sets to stop the guest (interrupt.go).
	stop, fuel api.MutableGlobal
	// stackLeft is the guest's stack counter (stack.go), set to stackKiB's slots before
	// each call; stackLow its lowest value, where the module keeps it (measurements).
	stackLeft, stackLow api.MutableGlobal
	stackKiB            int
	// limit is the memory limit in bytes this instance runs under.
	limit int
	// counted is the memory its pool counts for it (PoolStats.MemoryBytes).
	counted int
	// pool is the pool the instance serves (nil for the probe Load makes); charged is
	// what the engine's memory budget counts for it, and idleAt its place in the
	// budget's idle list while idle.
	pool    *pool
	charged int64
	idleAt  *list.Element
	// configured maps a scorer's index to the config it was configured with.
	configured map[uint32]string
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

	// mu guards the interrupt's view of the current call.
	mu      sync.Mutex
	gen     uint64          // counts calls, so a late interrupt cannot hit the next one
	calling bool            // a call into the guest is running
	done    <-chan struct{} // the running call's context, for sleeps
	wake    chan struct{}   // closed when a batch's run reaches its deadline, for sleeps
	fired   bool            // the flag is set: the instance must not run again
	closed  bool
}

// callState travels in the context of each call into a guest, for the host functions.
type callState struct {
	inst   *instance
	info   *sdk.Info
	judge  sdk.Judge
	tenant string
	// batch is the batch being scored, for the result import; nil outside one.
	batch *batchState
}

type callKey struct{}

// newInstance instantiates the artifact with a memory of at most lim.MemoryMiB and a call
// stack of at most lim.StackKiB, then runs its start function and _initialize under the
// load deadline (not the deadline of the call that needed an instance: the instance
// outlives the call).
func (a *artifact) newInstance(ctx context.Context, lim host.Limits) (*instance, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.loadTimeout)
	defer cancel()
	limitMiB := lim.MemoryMiB
	inst := &instance{a: a, out: &cappedWriter{max: a.limits.MaxOutputBytes}, limit: limitMiB << 20, stackKiB: lim.StackKiB,
		configured: map[uint32]string{}}
	inst.state.inst = inst
	if a.minMemory > inst.limit {
		return nil, &sdk.Error{Code: sdk.CodeLimitExceeded, Message: fmt.Sprintf(
			"the module starts with %d MiB of memory, over the %d MiB limit; raise limits.memory_mib or shrink the module's initial memory",
			a.minMemory>>20, limitMiB)}
	}
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions(). // run below, where the interrupt can stop them
		WithStdout(inst.out).
		WithStderr(inst.out).
		WithRandSource(rand.Reader).
		WithSysNanotime().
		WithSysWalltime().
		WithNanosleep(inst.sleep).
		// A Go guest's collector paces itself on time as well as allocation, so on a busy
		// machine its heap can outgrow the limit that a quiet one stays under; a soft limit
		// below the hard one makes it collect before reaching it. Other guests ignore it.
		WithEnv("GOMEMLIMIT", strconv.Itoa(limitMiB*4/5)+"MiB")
	for _, kv := range a.guestEnv {
		cfg = cfg.WithEnv(kv[0], kv[1])
	}
	alloc := &allocator{limit: uint64(inst.limit)}
	ictx := experimental.WithMemoryAllocator(context.WithValue(ctx, callKey{}, &inst.state), alloc)
	mod, err := a.rt.InstantiateModule(ictx, a.cm, cfg)
	if err != nil {
		kept, _ := inst.out.take()
		return nil, fmt.Errorf("instantiate %s: %w%s", a.path, describe(err, ""), tail(kept))
	}
	inst.mod, inst.mem, inst.lin = mod, mod.Memory(), alloc.mem
	if a.termination == terminateChecks {
		inst.stop = mod.ExportedGlobal(exportStop).(api.MutableGlobal)
		inst.fuel = mod.ExportedGlobal(exportFuel).(api.MutableGlobal)
		inst.stackLeft = mod.ExportedGlobal(exportStack).(api.MutableGlobal)
		if g, ok := mod.ExportedGlobal(exportStackLow).(api.MutableGlobal); ok {
			inst.stackLow = g
			g.Set(uint64(stackSlots(inst.stackKiB)))
		}
	}
	inst.info = mod.ExportedFunction(wasmabi.ExportInfo)
	inst.score = mod.ExportedFunction(wasmabi.ExportScore)
	inst.batch = mod.ExportedFunction(wasmabi.ExportScoreBatch)
	if !inst.lin.hold() {
		inst.close(ctx)
		return nil, fmt.Errorf("instantiate %s: %w", a.path, ErrClosed)
	}
	defer inst.lin.unhold()
	for _, name := range []string{exportStart, "_initialize"} {
		fn := mod.ExportedFunction(name)
		if fn == nil {
			continue
		}
		if err := inst.call(ctx, fn); err != nil {
			kept, _ := inst.out.take()
			inst.close(context.WithoutCancel(ctx))
			what := "_initialize"
			if name == exportStart {
				what = "the start function"
			}
			return nil, fmt.Errorf("instantiate %s: %s: %w", a.path, what, describe(err, kept))
		}
	}
	return inst, nil
}

// call calls fn with inst.stack as its parameters and results. When ctx is done during
// the call, the interrupt stops the guest at its next loop or function entry and call
// returns the context's exit error; the instance may not be used again (see spent).
func (inst *instance) call(ctx context.Context, fn api.Function) error {
	return inst.callRuns(ctx, fn, nil)
}

// callRuns is call for a batch: with bs.limit set, each of the batch's runs is also
// stopped bs.limit after it started (the result import marks where each starts), and
// bs.expired then says the call ended so.
func (inst *instance) callRuns(ctx context.Context, fn api.Function, bs *batchState) error {
	if ctx.Err() != nil {
		return exitFor(ctx)
	}
	inst.mu.Lock()
	if inst.closed || inst.fired {
		inst.mu.Unlock()
		return fmt.Errorf("instance %w", ErrClosed)
	}
	inst.gen++
	gen := inst.gen
	inst.calling, inst.done = true, ctx.Done()
	if bs != nil && bs.limit > 0 {
		bs.start = time.Now()
		inst.wake = make(chan struct{})
		bs.timer = time.AfterFunc(bs.limit, func() { inst.runExpired(gen, bs) })
	}
	inst.mu.Unlock()
	if inst.stackLeft != nil {
		inst.stackLeft.Set(uint64(stackSlots(inst.stackKiB)))
	}
	stop := context.AfterFunc(ctx, func() { inst.interrupt(gen) })
	err := fn.CallWithStack(context.WithValue(ctx, callKey{}, &inst.state), inst.stack[:])
	stop()
	inst.mu.Lock()
	if bs != nil && bs.timer != nil {
		bs.timer.Stop()
		bs.timer = nil
	}
	inst.calling, inst.done, inst.wake = false, nil, nil
	fired := inst.fired
	expired := bs != nil && bs.expired
	inst.mu.Unlock()
	if fired && err != nil {
		if expired {
			return sys.NewExitError(sys.ExitCodeDeadlineExceeded)
		}
		return exitFor(ctx)
	}
	if err != nil && inst.stackLeft != nil && int32(inst.stackLeft.Get()) < 0 || isStackOverflow(err) {
		return stackLimitError(inst.stackKiB)
	}
	return err
}

// interrupt stops the guest at its next check if call number gen is still running: the
// guest reads the globals from another thread, and a decrement of the fuel racing this
// store only delays the stop by one period.
func (inst *instance) interrupt(gen uint64) {
	inst.mu.Lock()
	defer inst.mu.Unlock()
	if inst.calling && inst.gen == gen && !inst.closed && inst.stop != nil {
		inst.fired = true
		inst.stop.Set(1)
		inst.fuel.Set(1)
	}
}

// runExpired stops the guest if the batch's run in progress has reached its deadline,
// and otherwise waits for the run in progress's deadline: runs start in the result
// import, which only moves the start, so the timer is set once per call.
func (inst *instance) runExpired(gen uint64, bs *batchState) {
	inst.mu.Lock()
	defer inst.mu.Unlock()
	if !inst.calling || inst.gen != gen || inst.closed || inst.stop == nil || bs.timer == nil {
		return
	}
	if left := bs.limit - time.Since(bs.start); left > 0 {
		bs.timer.Reset(left)
		return
	}
	bs.expired = true
	inst.fired = true
	inst.stop.Set(1)
	inst.fuel.Set(1)
	close(inst.wake)
}

// stackPeak is the deepest the guest's call stack went in the instance's calls, in KiB as
// the host weighs it, where the module keeps it (stackInstrumentation.peak); else 0.
func (inst *instance) stackPeak() float64 {
	if inst.stackLow == nil {
		return 0
	}
	used := int64(stackSlots(inst.stackKiB)) - int64(int32(inst.stackLow.Get()))
	return float64(max(used, 0)*slotBytes) / 1024
}

// spent reports whether the instance was interrupted or closed and must be discarded.
func (inst *instance) spent() bool {
	inst.mu.Lock()
	defer inst.mu.Unlock()
	return inst.fired || inst.closed
}

// sleep is the guest's clock sleep (WASI poll_oneoff): it ends early when the running
// call's context is done, so a sleeping guest meets its deadline too.
func (inst *instance) sleep(ns int64) {
	inst.mu.Lock()
	done, wake := inst.done, inst.wake
	inst.mu.Unlock()
	t := time.NewTimer(time.Duration(ns))
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	case <-wake:
	}
}

// exitFor is the exit error of a call stopped because ctx is done.
func exitFor(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return sys.NewExitError(sys.ExitCodeDeadlineExceeded)
	}
	return sys.NewExitError(sys.ExitCodeContextCanceled)
}

// write puts b into the guest's input buffer, asking the guest for a bigger one first
// when b does not fit, and returns the pointer.
func (inst *instance) write(ctx context.Context, b []byte) (uint32, error) {
	if uint32(len(b)) > inst.bufCap || inst.bufCap == 0 {
		size := max(uint32(len(b)), 4096)
		inst.stack[0] = uint64(size)
		if err := inst.call(ctx, inst.mod.ExportedFunction(wasmabi.ExportAlloc)); err != nil {
			return 0, err
		}
		inst.bufPtr, inst.bufCap = uint32(inst.stack[0]), size
	}
	if !inst.mem.Write(inst.bufPtr, b) {
		inst.bufCap = 0
		return 0, &sdk.Error{Code: sdk.CodeInvalidResult, Message: fmt.Sprintf(
			"%s returned %d, which leaves no room for %d bytes in a memory of %d bytes; fix the guest's allocator",
			wasmabi.ExportAlloc, inst.bufPtr, len(b), inst.mem.Size())}
	}
	return inst.bufPtr, nil
}

// reply returns a view of the reply packed in v, valid until the next call.
func (inst *instance) reply(v uint64, maxBytes int) ([]byte, error) {
	ptr, n := wasmabi.Unpack(v)
	if int(n) > maxBytes {
		return nil, &sdk.Error{Code: sdk.CodeLimitExceeded, Message: fmt.Sprintf(
			"reply of %d bytes exceeds the limit of %d; shorten the result or raise limits.max_result_bytes in the manifest",
			n, maxBytes)}
	}
	view, ok := inst.mem.Read(ptr, n)
	if !ok {
		return nil, &sdk.Error{Code: sdk.CodeInvalidResult, Message: fmt.Sprintf(
			"reply at %d (+%d bytes) lies outside the module's %d bytes of memory; the guest must return a pointer into its memory (docs/ABI.md)",
			ptr, n, inst.mem.Size())}
	}
	return view, nil
}

// configureWith sends scorer index its config, once per instance.
func (inst *instance) configureWith(ctx context.Context, index uint32, config []byte) error {
	ptr, err := inst.write(ctx, config)
	if err != nil {
		return err
	}
	inst.stack[0], inst.stack[1], inst.stack[2] = uint64(index), uint64(ptr), uint64(len(config))
	if err := inst.call(ctx, inst.mod.ExportedFunction(wasmabi.ExportConfigure)); err != nil {
		return err
	}
	view, err := inst.reply(inst.stack[0], inst.a.limits.MaxResultBytes)
	if err != nil {
		return err
	}
	if len(view) == 0 {
		inst.configured[index] = string(config)
		return nil
	}
	var e sdk.Error
	if err := json.Unmarshal(view, &e); err != nil || e.Message == "" {
		return &sdk.Error{Code: sdk.CodeInvalidResult, Message: fmt.Sprintf(
			"%s replied %.200q; want nothing or a JSON error {code, message} (docs/ABI.md)", wasmabi.ExportConfigure, view)}
	}
	return &e
}

// close closes the module. Its memory is unmapped now, or when the call holding it ends.
func (inst *instance) close(ctx context.Context) {
	inst.mu.Lock()
	closed := inst.closed
	inst.closed = true
	inst.mu.Unlock()
	if inst.mod != nil && !closed {
		_ = inst.mod.Close(ctx)
	}
}

// memoryBytes is the guest's current linear memory size.
func (inst *instance) memoryBytes() int { return int(inst.mem.Size()) }

// stackBytes is the most host memory the instance's call stack may keep (stack.go).
func (inst *instance) stackBytes() int64 { return stackHostBytes(inst.stackKiB) }

// atMemoryLimit reports whether the guest has grown to (nearly) its memory limit, which
// makes a trap or a deadline a memory-limit failure rather than a bug or slowness.
func (inst *instance) atMemoryLimit() bool {
	return inst.mem != nil && inst.memoryBytes() >= inst.limit-inst.limit/16
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
	if errors.Is(err, ErrClosed) {
		return &sdk.Error{Code: sdk.CodeUnavailable, Message: err.Error()}
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
