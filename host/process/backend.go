package process

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/pluginpb"
	"github.com/scorekit/scorekit/internal/pluginrpc"
	"github.com/scorekit/scorekit/sdk"
)

// backend is a scorer configured for one tenant. Its calls go to the processes of the
// tenant's pool of the artifact; each process configures the scorer's instance the first
// time it serves it.
type backend struct {
	sp     *scorerPlugin
	pool   *pool
	config json.RawMessage
	lim    host.Limits
	log    *slog.Logger

	closeOnce sync.Once
}

var _ host.Backend = (*backend)(nil)

func newBackend(sp *scorerPlugin, t host.Tenant, config json.RawMessage) *backend {
	tenant := t.Name
	if tenant == "" {
		tenant = host.DefaultTenant
	}
	lim := sp.a.lim.Lower(t.Limits)
	p := sp.a.pool(tenant, lim)
	return &backend{sp: sp, pool: p, config: config, lim: lim, log: p.log.With("scorer", sp.info.Name)}
}

// configureOne configures the scorer in one process of the pool, so that a config it
// refuses is known at Open. Starting a process is bounded by the start timeout, and so is
// the Configure call.
func (b *backend) configureOne(ctx context.Context, timeout time.Duration) error {
	pr, err := b.pool.acquire(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := pr.instance(ctx, b); err != nil {
		var ce *configError
		if errors.As(err, &ce) {
			b.pool.release(pr)
			return ce.err
		}
		return b.failed(ctx, pr, err, "configuring the scorer")
	}
	b.pool.release(pr)
	return nil
}

// Score sends run to a process of the pool under the call's deadline (and
// Limits.TimeoutMS).
func (b *backend) Score(ctx context.Context, run *sdk.Run, judge sdk.Judge) (sdk.Result, error) {
	if b.lim.TimeoutMS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(b.lim.TimeoutMS)*time.Millisecond)
		defer cancel()
	}
	name := b.sp.info.Name
	runJSON, err := json.Marshal(run)
	if err != nil {
		return sdk.Result{}, &sdk.Error{Code: sdk.CodeInvalidRun, Message: "encode run: " + err.Error()}
	}
	if max := b.sp.a.maxCall; len(runJSON) > max {
		return sdk.Result{}, &sdk.Error{Code: sdk.CodeLimitExceeded, Message: fmt.Sprintf(
			"%s: the run is %d bytes encoded, over the host's limit of %d for process plugins (process.Options.MaxCallBytes)", name, len(runJSON), max)}
	}
	pr, err := b.pool.acquire(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return sdk.Result{}, b.deadline(ctx, "waiting for a plugin process")
		}
		return sdk.Result{}, &sdk.Error{Code: sdk.CodeUnavailable, Message: fmt.Sprintf("%s: %v", name, err)}
	}
	id, err := pr.instance(ctx, b)
	if err != nil {
		var ce *configError
		if errors.As(err, &ce) {
			b.pool.release(pr)
			return sdk.Result{}, ce.err
		}
		return sdk.Result{}, b.failed(ctx, pr, err, "configuring the scorer")
	}
	pr.out.reset()
	req := &pluginpb.ScoreRequest{Instance: id, RunJson: runJSON}
	var resp *pluginpb.ScoreResponse
	switch {
	case b.sp.a.session:
		resp, err = pr.session(ctx, b.sp.info, req, judge)
	default:
		if judge != nil {
			jid, js := pr.judgeServer()
			call := js.begin(ctx, judge, b.sp.info)
			defer js.end(call)
			req.JudgeBrokerId, req.Call = jid, call
		}
		resp, err = pr.conn.Scorer.Score(ctx, req)
	}
	if err != nil {
		return sdk.Result{}, b.failed(ctx, pr, err, "the call")
	}
	pr.calls++
	b.pool.release(pr)
	if e := pluginrpc.SDKError(resp.GetError()); e != nil {
		return sdk.Result{}, b.firstLine(e)
	}
	raw := resp.GetResultJson()
	if len(raw) > b.lim.MaxResultBytes {
		return sdk.Result{}, b.tooBig(len(raw))
	}
	return decodeResult(name, raw)
}

// failed handles a call whose process failed it (crashed, hung, broke the protocol): the
// process is killed, and the error says why, in the terms of the limit that ended it when
// one did.
func (b *backend) failed(ctx context.Context, pr *proc, err error, during string) error {
	name := b.sp.info.Name
	if ctx.Err() != nil || deadlineReached(ctx, err) {
		b.pool.discard(pr)
		return b.deadline(ctx, during)
	}
	msg := status.Convert(err).Message()
	if status.Code(err) == codes.ResourceExhausted {
		b.pool.discard(pr)
		b.log.Warn("plugin sent a message over the host's limit; its process was killed", "pid", pr.pid, "error", msg)
		return b.tooBig(-1)
	}
	cause := pr.exitCause(b.lim, b.sp.a.conf.memoryByCgroup())
	b.pool.discard(pr)
	switch cause {
	case "memory":
		return &sdk.Error{Code: sdk.CodeLimitExceeded, Message: fmt.Sprintf(
			"%s: the plugin process ran out of memory during %s (limits.memory_mib is %d MiB %s); it restarts on the next call",
			name, during, b.lim.MemoryMiB, b.sp.a.conf.memoryScope())}
	case "processes":
		return &sdk.Error{Code: sdk.CodeLimitExceeded, Message: fmt.Sprintf(
			"%s: the plugin process died at its cap on processes during %s (%d processes and threads for it and all it starts, process.Options.MaxProcesses); it restarts on the next call",
			name, during, b.sp.a.opts.MaxProcesses)}
	case "cpu":
		return &sdk.Error{Code: sdk.CodeLimitExceeded, Message: fmt.Sprintf(
			"%s: the plugin process used up its CPU time during %s (limits.cpu_seconds is %d per process); it restarts on the next call",
			name, during, b.lim.CPUSeconds)}
	}
	b.log.Error("plugin process failed during a call; it restarts on the next call", "pid", pr.pid, "error", msg)
	if crash := pr.r.crashLine.Load(); crash != nil {
		// The stack that followed is in the host's log (the plugin's stderr), not here.
		return &sdk.Error{Code: sdk.CodeUnavailable, Message: fmt.Sprintf(
			"%s: plugin crashed: %s; it restarts on the next call", name, *crash)}
	}
	return &sdk.Error{Code: sdk.CodeUnavailable, Message: fmt.Sprintf(
		"%s: the plugin process failed during %s (%s); it restarts on the next call", name, during, msg)}
}

// firstLine keeps a plugin's error to its first line for the caller and logs the whole of
// it: a plugin (an older sdk, or any other) may put a stack trace in the message, which
// belongs in the host's log, not in a result.
func (b *backend) firstLine(e *sdk.Error) *sdk.Error {
	first, rest, ok := strings.Cut(e.Message, "\n")
	if !ok {
		return e
	}
	b.log.Error("plugin error (the caller sees its first line)", "code", e.Code, "error", first, "detail", rest)
	out := *e
	out.Message = strings.TrimSpace(first)
	return &out
}

// deadlineReached reports whether err is the plugin's side of the call's deadline: gRPC
// sends the deadline with a unary call, and the plugin's server may cancel the call a
// moment before the host's own timer fires.
func deadlineReached(ctx context.Context, err error) bool {
	d, ok := ctx.Deadline()
	if c := status.Code(err); !ok || (c != codes.DeadlineExceeded && c != codes.Canceled) || time.Until(d) > time.Second {
		return false
	}
	<-ctx.Done()
	return true
}

// tooBig is the error of a result over Limits.MaxResultBytes; n < 0 when gRPC refused it
// before the host read it.
func (b *backend) tooBig(n int) error {
	size := "larger"
	if n >= 0 {
		size = fmt.Sprintf("%d bytes,", n)
	}
	return &sdk.Error{Code: sdk.CodeLimitExceeded, Message: fmt.Sprintf(
		"%s: the result is %s over the limit of %d bytes (limits.max_result_bytes)", b.sp.info.Name, size, b.lim.MaxResultBytes)}
}

// deadline is the error of a call whose context ended; the process was killed.
func (b *backend) deadline(ctx context.Context, during string) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return &sdk.Error{Code: sdk.CodeCanceled, Message: fmt.Sprintf("%s: canceled during %s", b.sp.info.Name, during)}
	}
	return &sdk.Error{Code: sdk.CodeTimeout, Message: fmt.Sprintf(
		"%s: deadline exceeded during %s; a plugin that did not answer was killed and restarts on the next call (raise limits.timeout_ms or the host's timeout if it needs longer)",
		b.sp.info.Name, during)}
}

// decodeResult checks a plugin's raw result against the result schema: junk is failed
// with invalid_result, never a silent 0.
func decodeResult(name string, raw []byte) (sdk.Result, error) {
	r, err := host.DecodeResult(raw)
	if err != nil {
		return sdk.Result{}, &sdk.Error{Code: sdk.CodeInvalidResult, Message: fmt.Sprintf("%s: %v", name, err)}
	}
	return r, nil
}

// Close releases the scorer's instances; the pool's processes stop when no backend uses
// them any more.
func (b *backend) Close(ctx context.Context) error {
	b.closeOnce.Do(func() {
		b.pool.forget(ctx, b)
		b.sp.a.unuse(b.pool)
		b.sp.forget(b)
	})
	return nil
}
