package process

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"google.golang.org/grpc/status"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/pluginpb"
	"github.com/scorekit/scorekit/internal/pluginrpc"
	"github.com/scorekit/scorekit/sdk"
)

// backend is a scorer configured for one tenant: a pool of plugin processes, each with the
// scorer configured in it, each called one call at a time.
type backend struct {
	p       *scorerPlugin
	tenant  string
	config  json.RawMessage
	log     *slog.Logger
	timeout time.Duration
	maxRes  int
	maxCall int

	slots chan struct{} // one per process that may be busy or idle

	mu     sync.Mutex
	idle   []*proc
	live   map[*proc]struct{}
	closed bool

	stopping sync.WaitGroup // processes being stopped off the call path; Close waits
}

// stopLater stops pr without making the caller wait; Close waits for it. The caller holds
// b.mu and b is not closed, so no Add races with Close's Wait.
func (b *backend) stopLater(pr *proc) {
	b.stopping.Add(1)
	go func() {
		defer b.stopping.Done()
		pr.stop()
	}()
}

var _ host.Backend = (*backend)(nil)

func newBackend(p *scorerPlugin, tenant string, config json.RawMessage) *backend {
	lim := p.a.m.Limits
	size := lim.PoolSize
	if size <= 0 {
		size = runtime.GOMAXPROCS(0)
	}
	return &backend{
		p:       p,
		tenant:  tenant,
		config:  config,
		log:     p.a.log.With("scorer", p.info.Name, "tenant", tenant),
		timeout: time.Duration(lim.TimeoutMS) * time.Millisecond,
		maxRes:  lim.MaxResultBytes,
		maxCall: lim.MaxCalls,
		slots:   make(chan struct{}, size),
		live:    map[*proc]struct{}{},
	}
}

// acquire returns an idle process or starts one, waiting while the pool is busy.
func (b *backend) acquire(ctx context.Context) (*proc, error) {
	select {
	case b.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		<-b.slots
		return nil, errors.New("backend is closed")
	}
	for len(b.idle) > 0 {
		pr := b.idle[len(b.idle)-1]
		b.idle = b.idle[:len(b.idle)-1]
		if !pr.client.Exited() {
			b.mu.Unlock()
			return pr, nil
		}
		// Died while idle: replace it without failing anyone's call.
		delete(b.live, pr)
		b.log.Warn("plugin process exited while idle; starting another", "pid", pr.pid)
		b.stopLater(pr)
	}
	b.mu.Unlock()

	pr, err := b.p.a.start(b.log)
	if err != nil {
		<-b.slots
		return nil, err
	}
	if err := pr.configure(ctx, b.p.info.Name, b.config); err != nil {
		pr.stop()
		<-b.slots
		return nil, err
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		pr.stop()
		<-b.slots
		return nil, errors.New("backend is closed")
	}
	b.live[pr] = struct{}{}
	b.mu.Unlock()
	return pr, nil
}

// release returns pr to the pool, or stops it once it has served Limits.MaxCalls calls.
func (b *backend) release(pr *proc) {
	b.mu.Lock()
	switch {
	case b.closed:
		// Close has stopped (or is stopping) every process that was live.
		delete(b.live, pr)
	case b.maxCall > 0 && pr.calls >= b.maxCall:
		delete(b.live, pr)
		b.stopLater(pr)
	default:
		b.idle = append(b.idle, pr)
	}
	b.mu.Unlock()
	<-b.slots
}

// discard kills pr (crashed, hung or cancelled mid-call) and frees its slot; the next call
// starts a fresh process.
func (b *backend) discard(pr *proc) {
	b.mu.Lock()
	delete(b.live, pr)
	b.mu.Unlock()
	pr.kill()
	<-b.slots
}

// Score sends run to a plugin process under the call's deadline (and Limits.TimeoutMS).
func (b *backend) Score(ctx context.Context, run *sdk.Run, judge sdk.Judge) (sdk.Result, error) {
	if b.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.timeout)
		defer cancel()
	}
	name := b.p.info.Name
	runJSON, err := json.Marshal(run)
	if err != nil {
		return sdk.Result{}, &sdk.Error{Code: sdk.CodeInvalidRun, Message: "encode run: " + err.Error()}
	}
	pr, err := b.acquire(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return sdk.Result{}, b.deadline(ctx, "waiting for a plugin process")
		}
		return sdk.Result{}, &sdk.Error{Code: sdk.CodeUnavailable, Message: err.Error()}
	}
	req := &pluginpb.ScoreRequest{Instance: pr.instance, RunJson: runJSON}
	var resp *pluginpb.ScoreResponse
	switch {
	case b.p.a.session:
		resp, err = pr.session(ctx, b.p.info, req, judge)
	default:
		if judge != nil {
			id, js := pr.judgeServer(b.p.info)
			call := js.begin(ctx, judge)
			defer js.end(call)
			req.JudgeBrokerId, req.Call = id, call
		}
		resp, err = pr.conn.Scorer.Score(ctx, req)
	}
	if err != nil {
		b.discard(pr)
		if ctx.Err() != nil {
			return sdk.Result{}, b.deadline(ctx, "the call")
		}
		b.log.Error("plugin process failed during a call; it restarts on the next call", "pid", pr.pid, "error", status.Convert(err).Message())
		return sdk.Result{}, &sdk.Error{Code: sdk.CodeUnavailable, Message: fmt.Sprintf(
			"%s: the plugin process failed during the call (%s); it restarts on the next call", name, status.Convert(err).Message())}
	}
	pr.calls++
	b.release(pr)
	if e := pluginrpc.SDKError(resp.GetError()); e != nil {
		return sdk.Result{}, e
	}
	raw := resp.GetResultJson()
	if b.maxRes > 0 && len(raw) > b.maxRes {
		return sdk.Result{}, &sdk.Error{Code: sdk.CodeLimitExceeded, Message: fmt.Sprintf(
			"%s: result is %d bytes, over the plugin's limit of %d (limits.max_result_bytes)", name, len(raw), b.maxRes)}
	}
	return decodeResult(name, raw)
}

// deadline is the error of a call whose context ended; the process was killed.
func (b *backend) deadline(ctx context.Context, during string) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return &sdk.Error{Code: sdk.CodeCanceled, Message: fmt.Sprintf("%s: canceled during %s", b.p.info.Name, during)}
	}
	return &sdk.Error{Code: sdk.CodeTimeout, Message: fmt.Sprintf(
		"%s: deadline exceeded during %s; a plugin that did not answer was killed and restarts on the next call (raise limits.timeout_ms or the host's timeout if it needs longer)",
		b.p.info.Name, during)}
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

// Close stops the backend's processes and waits for them to exit.
func (b *backend) Close(ctx context.Context) error {
	b.mu.Lock()
	b.closed = true
	procs := make([]*proc, 0, len(b.live))
	for pr := range b.live {
		procs = append(procs, pr)
	}
	b.live = map[*proc]struct{}{}
	b.idle = nil
	b.mu.Unlock()
	var wg sync.WaitGroup
	for _, pr := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Let the scorer run its Close; a plugin that does not answer is killed below.
			rctx, cancel := context.WithTimeout(ctx, time.Second)
			_, _ = pr.conn.Scorer.Release(rctx, &pluginpb.ReleaseRequest{Instance: pr.instance})
			cancel()
			pr.stop()
		}()
	}
	wg.Wait()
	b.stopping.Wait()
	b.p.forget(b)
	return nil
}
