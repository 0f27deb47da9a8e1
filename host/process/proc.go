package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/host/internal/cgroup"
	"github.com/scorekit/scorekit/internal/pluginpb"
	"github.com/scorekit/scorekit/internal/pluginrpc"
	"github.com/scorekit/scorekit/sdk"
)

// proc is one started plugin process, with the instances configured in it: one per
// backend that has had a call served by it.
type proc struct {
	client *plugin.Client
	conn   *pluginrpc.Conn
	r      *procRunner
	out    *outputCap
	log    *slog.Logger
	pid    int // the process group: the plugin's, or bubblewrap's around it
	calls  int // calls served; only the caller holding the process touches it
	recv   int // largest message the host accepts from it

	mu        sync.Mutex
	instances map[*backend]uint64

	judgeOnce sync.Once
	judgeID   uint32
	judges    *judgeServer

	cleanOnce sync.Once
	cleaned   chan struct{}

	// stream is the Session, opened by the first call; ended by cancelling its context.
	stream    pluginpb.Scorer_SessionClient
	endStream context.CancelFunc
}

// How long stopping a process may take: a graceful stop (the plugin's Shutdown, then
// go-plugin's own 2s wait) before the host kills the group, then the kill itself.
const (
	stopGrace = 3 * time.Second
	killWait  = 5 * time.Second
)

// maxRecv is the largest message the host accepts from a plugin under lim: a result, or a
// judge request (whose prompts may quote the run).
func (a *artifact) maxRecv(lim host.Limits) int {
	return max(lim.MaxResultBytes, a.maxCall)
}

// start starts the artifact under lim and connects to it. The artifact's sha256 is checked
// right before it is executed.
func (a *artifact) start(lim host.Limits, log *slog.Logger) (*proc, error) {
	out := &outputCap{log: log, limit: lim.MaxOutputBytes}
	var r *procRunner
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig: pluginrpc.Handshake(),
		VersionedPlugins: map[int]plugin.PluginSet{
			pluginrpc.ProtocolVersion: {pluginrpc.PluginName: &pluginrpc.Plugin{}},
		},
		RunnerFunc: func(_ hclog.Logger, cmd *exec.Cmd, socketDir string) (runner.Runner, error) {
			if err := a.m.VerifyArtifact(); err != nil {
				return nil, err
			}
			var cg *cgroup.Proc
			if a.conf.cg != nil {
				var err error
				if cg, err = a.conf.cg.NewProc(int64(lim.MemoryMiB)<<20, a.opts.MaxProcesses); err != nil {
					return nil, err
				}
			}
			// cmd.Env holds only go-plugin's variables: SkipHostEnv.
			goPlugin := cmd.Env
			if a.conf.bwrap != "" {
				// The plugin makes its sockets in a small tmpfs of its own, not on the
				// host's disk; the host reaches them through /proc/PID/root.
				goPlugin = setEnv(goPlugin, plugin.EnvUnixSocketDir, sandboxSocketDir)
			}
			l := a.conf.command(a.exe, a.m.Args, a.reads, socketDir, lim, pluginEnv(a.m.Env, goPlugin))
			r = newRunner(l, a.exe, log, out, cg, a.conf.bwrap != "")
			return r, nil
		},
		UnixSocketConfig: a.conf.socketConfig(),
		SkipHostEnv:      true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         a.opts.AutoMTLS,
		StartTimeout:     a.opts.StartTimeout,
		Logger:           hclogFor(log),
		SyncStdout:       &lineWriter{log: log, stream: "stdout", out: out},
		SyncStderr:       &lineWriter{log: log, stream: "stderr", out: out},
		GRPCDialOptions:  pluginrpc.DialOptions(a.maxCall, a.maxRecv(lim)),
	})
	pr := &proc{client: client, r: r, out: out, log: log, recv: a.maxRecv(lim), instances: map[*backend]uint64{}}
	rpc, err := client.Client()
	pr.r = r
	if r != nil {
		pr.pid = r.pid
	}
	if err != nil {
		pr.kill()
		if r != nil && r.diedOfOOM() {
			return nil, fmt.Errorf("%w %s: the plugin ran out of memory while starting (limits.memory_mib is %d MiB %s; a Go program needs about 40 MiB of data segment to start, Node about 60): ask for more in the manifest, within the host's ceiling",
				ErrStart, a.m.Name, lim.MemoryMiB, a.conf.memoryScope())
		}
		if r != nil && r.crashed() {
			return nil, fmt.Errorf("%w %s: the plugin crashed while starting (%v); if it is short of memory, limits.memory_mib is %d MiB %s: %w",
				ErrStart, a.m.Name, r.err, lim.MemoryMiB, a.conf.memoryScope(), a.startError(err))
		}
		return nil, a.startError(err)
	}
	raw, err := rpc.Dispense(pluginrpc.PluginName)
	if err != nil {
		pr.kill()
		return nil, fmt.Errorf("%w %s: dispense: %v", ErrStart, a.m.Name, err)
	}
	conn, ok := raw.(*pluginrpc.Conn)
	if !ok {
		pr.kill()
		return nil, fmt.Errorf("%w %s: dispensed %T, want a scorekit plugin connection", ErrStart, a.m.Name, raw)
	}
	pr.conn = conn
	return pr, nil
}

// startBounded is start, given up when ctx ends first; the process is then stopped as soon
// as it has started (or failed to). failed is called once a start that did not return a
// process has really finished, so a pool slot is given back only then.
func (a *artifact) startBounded(ctx context.Context, lim host.Limits, log *slog.Logger, failed func()) (*proc, error) {
	type started struct {
		pr  *proc
		err error
	}
	ch := make(chan started, 1)
	go func() {
		pr, err := a.start(lim, log)
		ch <- started{pr, err}
	}()
	select {
	case s := <-ch:
		if s.err != nil {
			failed()
		}
		return s.pr, s.err
	case <-ctx.Done():
		go func() {
			if s := <-ch; s.err == nil {
				s.pr.kill()
			}
			failed()
		}()
		return nil, fmt.Errorf("%w %s: %w while starting the plugin", ErrStart, a.m.Name, ctx.Err())
	}
}

// startError explains a failed start and says what fixes it.
func (a *artifact) startError(err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, host.ErrHashMismatch):
		return fmt.Errorf("%w %s: %w", ErrStart, a.m.Name, err)
	case strings.Contains(msg, "incompatible API version"):
		return fmt.Errorf("%w %s: protocol version mismatch: %s; this host speaks scorekit plugin protocol v%d: rebuild the plugin against this sdk",
			ErrStart, a.m.Name, msg, pluginrpc.ProtocolVersion)
	case strings.Contains(msg, "exited before we could connect"), strings.Contains(msg, "Failed to read any lines"):
		return fmt.Errorf("%w %s: the plugin process exited at start; run %s by hand with %s=%s set to see why (sandbox: %s)",
			ErrStart, a.m.Name, a.m.ArtifactPath(), pluginrpc.CookieKey, pluginrpc.CookieValue, a.sandbox)
	case strings.Contains(msg, "Unrecognized remote plugin message"):
		return fmt.Errorf("%w %s: %s; a plugin's first line on stdout must be go-plugin's handshake line (serve.Main prints it): print nothing on stdout before it",
			ErrStart, a.m.Name, msg)
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return fmt.Errorf("%w %s: no handshake within the start timeout (%s); raise process.Options.StartTimeout or fix the plugin's start-up",
			ErrStart, a.m.Name, a.opts.StartTimeout)
	}
	return fmt.Errorf("%w %s: %w", ErrStart, a.m.Name, err)
}

// instance returns b's instance in p, configuring it the first time.
func (p *proc) instance(ctx context.Context, b *backend) (uint64, error) {
	p.mu.Lock()
	id, ok := p.instances[b]
	p.mu.Unlock()
	if ok {
		return id, nil
	}
	name := b.sp.info.Name
	resp, err := p.conn.Scorer.Configure(ctx, &pluginpb.ConfigureRequest{Scorer: name, ConfigJson: b.config})
	if err != nil {
		return 0, err
	}
	if e := pluginrpc.SDKError(resp.GetError()); e != nil {
		return 0, &configError{fmt.Errorf("configure %s: %w: %w", name, e, host.ErrInvalidConfig)}
	}
	p.mu.Lock()
	p.instances[b] = resp.GetInstance()
	p.mu.Unlock()
	return resp.GetInstance(), nil
}

// configError is a config the scorer refused: the process is fine.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

// release drops b's instance from p, if it has one, giving the scorer's Close up to a
// second.
func (p *proc) release(ctx context.Context, b *backend) {
	p.mu.Lock()
	id, ok := p.instances[b]
	delete(p.instances, b)
	p.mu.Unlock()
	if !ok || p.r.exited() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, _ = p.conn.Scorer.Release(ctx, &pluginpb.ReleaseRequest{Instance: id})
}

// judgeServer returns the broker id of the process's Judge service, serving it on first use.
func (p *proc) judgeServer() (uint32, *judgeServer) {
	p.judgeOnce.Do(func() {
		p.judges = &judgeServer{calls: map[uint64]judgeCall{}}
		p.judgeID = p.conn.Broker.NextId()
		go p.conn.Broker.AcceptAndServe(p.judgeID, func(opts []grpc.ServerOption) *grpc.Server {
			s := grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(p.recv+pluginrpc.MessageSlack))...)
			pluginpb.RegisterJudgeServer(s, p.judges)
			return s
		})
	})
	return p.judgeID, p.judges
}

// session sends one call on the process's Session and answers the judge requests the
// plugin makes during it, until the plugin's response.
func (p *proc) session(ctx context.Context, info sdk.Info, req *pluginpb.ScoreRequest, judge sdk.Judge) (*pluginpb.ScoreResponse, error) {
	if p.stream == nil {
		sctx, cancel := context.WithCancel(context.Background())
		st, err := p.conn.Scorer.Session(sctx)
		if err != nil {
			cancel()
			return nil, err
		}
		p.stream, p.endStream = st, cancel
	}
	if d, ok := ctx.Deadline(); ok {
		req.DeadlineUnixNano = d.UnixNano()
	}
	req.SessionJudge = judge != nil
	// The stream has no per-call deadline: at the deadline the plugin is killed and the
	// stream ended, which ends the Recv below at once.
	stop := context.AfterFunc(ctx, func() {
		p.r.killGroup()
		p.endStream()
	})
	defer stop()
	if err := p.stream.Send(&pluginpb.HostMessage{Msg: &pluginpb.HostMessage_Score{Score: req}}); err != nil {
		return nil, err
	}
	for {
		msg, err := p.stream.Recv()
		if err != nil {
			return nil, err
		}
		var reply *pluginpb.HostMessage
		switch m := msg.GetMsg().(type) {
		case *pluginpb.PluginMessage_Score:
			return m.Score, nil
		case *pluginpb.PluginMessage_Complete:
			reply = &pluginpb.HostMessage{Msg: &pluginpb.HostMessage_Complete{Complete: complete(ctx, info, judge, m.Complete)}}
		case *pluginpb.PluginMessage_Embed:
			reply = &pluginpb.HostMessage{Msg: &pluginpb.HostMessage_Embed{Embed: embed(ctx, info, judge, m.Embed)}}
		default:
			return nil, fmt.Errorf("session: unexpected message %T from the plugin", m)
		}
		if err := p.stream.Send(reply); err != nil {
			return nil, err
		}
	}
}

// stop asks the plugin to exit (go-plugin's Shutdown, then its own 2s wait) and kills its
// group if it has not within stopGrace. Bounded: a plugin that ignores Shutdown, or a
// child of it that holds its stdio, cannot make the host wait.
func (p *proc) stop() {
	if p.endStream != nil {
		p.endStream()
	}
	select {
	case <-p.cleanup():
	case <-time.After(stopGrace):
		p.kill()
	}
}

// kill kills the process group at once (the plugin may be spinning) and cleans up without
// waiting longer than killWait.
func (p *proc) kill() {
	if p.r != nil {
		p.r.killGroup()
	}
	if p.endStream != nil {
		p.endStream()
	}
	select {
	case <-p.cleanup():
	case <-time.After(killWait):
		p.log.Error("plugin process did not stop after SIGKILL; the host no longer waits for it", "pid", p.pid)
	}
}

// cleanup runs go-plugin's Kill (which closes the connection, asks the plugin to shut down
// and waits for it and its stdio) once, and returns a channel closed when it is done.
func (p *proc) cleanup() <-chan struct{} {
	p.cleanOnce.Do(func() {
		p.cleaned = make(chan struct{})
		go func() {
			p.client.Kill()
			close(p.cleaned)
		}()
	})
	return p.cleaned
}

// exitCause is why p's process died during a call, once it has, when a limit ended it:
// "memory", "processes" or "cpu"; "" otherwise. It waits up to a second for the process to
// exit by itself: killing it first would lose its account (confined, bubblewrap reports
// the plugin's CPU time only once it has reaped it). memByCgroup: memory_mib is the memory
// cgroup's limit on the tree, else RLIMIT_DATA per process.
func (p *proc) exitCause(lim host.Limits, memByCgroup bool) string {
	select {
	case <-p.r.done:
	case <-time.After(time.Second):
		return ""
	}
	p.r.stderrEnded()
	switch {
	// The kernel killed a process of the tree at the memory limit, or the plugin said it
	// ran out.
	case p.r.oomKills > 0 || p.r.oom.Load():
		return "memory"
	// A fork or a thread refused at the cap (a Go runtime aborts when it cannot start a
	// thread, in the same words as below).
	case p.r.pidsRefused > 0:
		return "processes"
	// Under RLIMIT_DATA a thread's stack is what no longer fits: the plugin may abort
	// starting a thread before any allocation of its own fails.
	case !memByCgroup && lim.MemoryMiB > 0 && p.r.noThread.Load():
		return "memory"
	case lim.CPUSeconds > 0 && p.r.cpuSeconds() >= float64(lim.CPUSeconds)-0.5:
		return "cpu"
	}
	return ""
}

// cpuSeconds is the largest CPU time of a process in p's tree: RLIMIT_CPU applies to each.
func (p *proc) cpuSeconds() float64 {
	var most float64
	for _, pid := range processTree(p.pid) {
		most = max(most, cpuSecondsOf(pid))
	}
	return most
}
