package wasm

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tetratelabs/wazero/sys"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/wasmabi"
	"github.com/scorekit/scorekit/sdk"
)

// A guest of ABI v2 scores a batch of runs in one call (docs/ABI.md, "Batches"): the host
// writes the runs, the guest hands each result to the host's result import as soon as it
// has it, and the host settles that run there, as a call of ABI v1 would have settled it:
// the result's size and encoding checked, the run's output logged under its own cap, the
// instance's calls counted. Each run has its own deadline: the import marks where the next
// run starts, and a timer set once per call stops the guest when the run in progress has
// had its time. A run that traps, times out or leaves its reply in doubt fails alone: the
// host discards the instance, as it would after that run alone, and scores the rest of
// the batch on another.

// maxBatchBytes bounds the runs written into a guest for one call (one run always goes,
// whatever its size: the run limits bound it).
const maxBatchBytes = 1 << 20

// batchState is what the result import needs of the batch in progress. The fields the
// timer reads (start, expired, timer) are guarded by the instance's mu.
type batchState struct {
	b     *backend
	inst  *instance
	items []host.BatchItem
	// next is the run in progress: the results before it are settled.
	next int
	// start is when the run in progress started; limit its time (0: the call's context
	// alone bounds the call, as for a batch of one).
	start time.Time
	limit time.Duration
	timer *time.Timer
	// expired: the run in progress reached its deadline and the guest was stopped.
	expired bool
	// stopped: the host answered 0 (it scores the rest elsewhere).
	stopped bool
	// discard: a reply left the instance in doubt.
	discard bool
}

// ObservesContext reports true: a guest is stopped at its context's end by the host's
// checks, so the host calls it on the caller's goroutine (host.ContextObserver).
func (b *backend) ObservesContext() bool { return true }

var _ host.BatchBackend = (*backend)(nil)

// ScoreBatch scores items in order (host.BatchBackend). A v2 guest gets them in batches,
// a v1 guest one call each; either way each run is bounded by timeout (from its start)
// and by limits.timeout_ms, and fails alone.
func (b *backend) ScoreBatch(ctx context.Context, items []host.BatchItem, timeout time.Duration) {
	limit, hostBound := b.pool.timeout(), false
	if timeout > 0 && timeout <= limit {
		limit, hostBound = timeout, true
	}
	for len(items) > 0 {
		if ctx.Err() != nil {
			err := describe(exitFor(ctx), "")
			for i := range items {
				items[i].Err = err
			}
			return
		}
		if !b.p.a.batch {
			it := &items[0]
			start := time.Now()
			rctx, cancel := context.WithTimeoutCause(ctx, limit, host.ErrRunDeadline)
			it.Result, it.Err = b.Score(rctx, it.Run, it.Judge)
			if it.Err != nil && hostBound && ctx.Err() == nil && context.Cause(rctx) == host.ErrRunDeadline {
				it.Err = fmt.Errorf("scorer %s: %w", b.p.info.Name, host.ErrRunDeadline)
			}
			cancel()
			it.Elapsed = time.Since(start)
			items = items[1:]
			continue
		}
		items = items[b.batch(ctx, items, limit, hostBound):]
	}
}

// batch scores a first part of items in one call into an instance of the pool and
// returns how many it settled (at least one). limit bounds each run (0: ctx alone, for a
// batch of one), hostBound says the limit is the caller's timeout rather than the
// scorer's limits.timeout_ms.
func (b *backend) batch(ctx context.Context, items []host.BatchItem, limit time.Duration, hostBound bool) int {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if limit > 0 {
		actx, cancel = context.WithTimeout(ctx, limit)
	}
	inst, err := b.acquire(actx)
	if err == nil && actx.Err() != nil { // the instance is sound; the run's time is gone
		b.release(ctx, inst, true)
		err = b.fail(inst, exitFor(actx))
	}
	timedOut := err != nil && ctx.Err() == nil && actx.Err() != nil
	cancel()
	if err != nil {
		if timedOut && hostBound {
			err = fmt.Errorf("scorer %s: %w", b.p.info.Name, host.ErrRunDeadline)
		}
		items[0].Err = err
		return 1
	}
	a := b.p.a
	// The runs that go: the calls the instance has left, one judge availability (the
	// flag is per call), about maxBatchBytes.
	n := min(len(items), max(b.pool.limits.MaxCalls-inst.calls, 1))
	judged := items[0].Judge != nil
	payload := wasmabi.AppendBatch(inst.payload[:0], 0)
	count := 0
	for ; count < n; count++ {
		it := &items[count]
		if count > 0 && ((it.Judge != nil) != judged || len(payload) >= maxBatchBytes) {
			break
		}
		at := len(payload)
		payload = append(payload, 0, 0, 0, 0)
		var err error
		if a.binary {
			payload, err = wasmabi.AppendRun(payload, it.Run)
		} else {
			var j []byte
			if j, err = json.Marshal(it.Run); err == nil {
				payload = append(payload, j...)
			}
		}
		if err != nil {
			payload = payload[:at]
			if count == 0 {
				inst.payload = payload
				b.release(ctx, inst, true)
				it.Err = &sdk.Error{Code: sdk.CodeInvalidRun, Message: "encode run: " + err.Error()}
				return 1
			}
			break
		}
		binary.LittleEndian.PutUint32(payload[at:], uint32(len(payload)-at-4))
	}
	binary.LittleEndian.PutUint32(payload, uint32(count))
	inst.payload = payload
	settled, keep := b.callBatch(ctx, inst, items[:count], limit, hostBound)
	b.release(ctx, inst, keep)
	return settled
}

// callBatch calls the guest's batch export on items, already encoded in inst.payload,
// and returns how many runs it settled and whether the instance may be kept.
func (b *backend) callBatch(ctx context.Context, inst *instance, items []host.BatchItem, limit time.Duration, hostBound bool) (settled int, keep bool) {
	bs := &inst.bs
	*bs = batchState{b: b, inst: inst, items: items, start: time.Now()}
	if len(items) > 1 {
		bs.limit = limit
	}
	inst.state.judge, inst.state.info, inst.state.tenant, inst.state.batch = items[0].Judge, &b.p.info, b.pool.key.tenant, bs
	defer func() {
		inst.state.judge, inst.state.batch = nil, nil
		bs.items = nil
		b.flushOutput(ctx, inst)
	}()
	ptr, err := inst.write(ctx, inst.payload)
	if err != nil {
		items[0].Err = b.fail(inst, err)
		return 1, false
	}
	var flags uint64
	if items[0].Judge != nil {
		flags |= wasmabi.FlagJudge
	}
	if b.p.a.binary {
		flags |= wasmabi.FlagBinary
	}
	inst.stack = [4]uint64{uint64(b.p.index), flags, uint64(ptr), uint64(len(inst.payload))}
	err = inst.callRuns(ctx, inst.batch, bs)
	k := bs.next
	switch {
	case k >= len(items):
		// Every run has its result; a failure after the last one is the instance's.
		return k, err == nil && !bs.discard
	case bs.expired:
		items[k].Elapsed = time.Since(bs.start)
		if hostBound {
			items[k].Err = fmt.Errorf("scorer %s: %w", b.p.info.Name, host.ErrRunDeadline)
			inst.out.take()
		} else {
			items[k].Err = b.fail(inst, sys.NewExitError(sys.ExitCodeDeadlineExceeded))
		}
		return k + 1, false
	case bs.stopped:
		// The host said stop after a settled run; the rest go to another instance.
		return k, err == nil && !bs.discard
	case err != nil:
		items[k].Elapsed = time.Since(bs.start)
		items[k].Err = b.fail(inst, err)
		return k + 1, false
	}
	items[k].Err = &sdk.Error{Code: sdk.CodeInvalidResult, Message: fmt.Sprintf(
		"%s returned without a result for run %d of the batch; a guest of ABI v2 hands each run's result to %s.%s (docs/ABI.md)",
		wasmabi.ExportScoreBatch, k, wasmabi.ABIModuleV2, wasmabi.ImportResult)}
	return k + 1, false
}

// settle takes the result of the batch's run in progress (the result import, during the
// call) and answers whether the guest goes on: 1 for the next run, 0 to return.
func (bs *batchState) settle(ctx context.Context, ptr, size uint32) uint64 {
	inst := bs.inst
	inst.mu.Lock()
	k, fired := bs.next, inst.fired
	if fired || k >= len(bs.items) || bs.stopped {
		// Stopped at a deadline (the run in progress fails with it), or a result beyond
		// the batch or after the host said stop: the guest does not keep the ABI.
		bs.discard = bs.discard || !fired
		inst.mu.Unlock()
		return 0
	}
	inst.mu.Unlock()
	b := bs.b
	it := &bs.items[k]
	now := time.Now()
	it.Elapsed = now.Sub(bs.start)
	var keep bool
	it.Result, keep, it.Err = b.decode(inst, wasmabi.Pack(ptr, size))
	inst.calls++
	b.flushOutput(ctx, inst)
	more := k+1 < len(bs.items)
	goOn := keep && more && inst.memoryBytes() <= inst.limit*3/4
	inst.mu.Lock()
	bs.next = k + 1
	bs.start = time.Now()
	bs.stopped = !goOn
	bs.discard = bs.discard || !keep
	inst.mu.Unlock()
	if !goOn {
		return 0
	}
	inst.state.judge = bs.items[k+1].Judge
	return 1
}
