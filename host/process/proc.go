package process

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/internal/pluginpb"
	"github.com/scorekit/scorekit/internal/pluginrpc"
	"github.com/scorekit/scorekit/sdk"
)

// proc is one started plugin process with (after configure) one configured instance.
type proc struct {
	client   *plugin.Client
	conn     *pluginrpc.Conn
	pid      int
	instance uint64
	calls    int

	judgeOnce sync.Once
	judgeID   uint32
	judges    *judgeServer

	// stream is the Session, opened by the first call; ended by cancelling its context.
	stream    pluginpb.Scorer_SessionClient
	endStream context.CancelFunc
}

// start starts the artifact and connects to it. go-plugin checks the sha256 (SecureConfig)
// before it executes anything.
func (a *artifact) start(log *slog.Logger) (*proc, error) {
	cmd := exec.Command(a.m.ArtifactPath(), a.m.Args...)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig: pluginrpc.Handshake(),
		VersionedPlugins: map[int]plugin.PluginSet{
			pluginrpc.ProtocolVersion: {pluginrpc.PluginName: &pluginrpc.Plugin{}},
		},
		Cmd:              cmd,
		SecureConfig:     &plugin.SecureConfig{Checksum: a.sum, Hash: sha256.New()},
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         a.opts.AutoMTLS,
		StartTimeout:     a.opts.StartTimeout,
		Logger:           hclogFor(log),
		SyncStdout:       &lineWriter{log: log, stream: "stdout"},
		SyncStderr:       &lineWriter{log: log, stream: "stderr"},
		GRPCDialOptions:  pluginrpc.DialOptions(),
	})
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return nil, a.startError(err)
	}
	raw, err := rpc.Dispense(pluginrpc.PluginName)
	if err != nil {
		client.Kill()
		return nil, fmt.Errorf("%w %s: dispense: %v", ErrStart, a.m.Name, err)
	}
	conn, ok := raw.(*pluginrpc.Conn)
	if !ok {
		client.Kill()
		return nil, fmt.Errorf("%w %s: dispensed %T, want a scorekit plugin connection", ErrStart, a.m.Name, raw)
	}
	pid, _ := strconv.Atoi(client.ID())
	return &proc{client: client, conn: conn, pid: pid}, nil
}

// startError explains a failed start and says what fixes it.
func (a *artifact) startError(err error) error {
	msg := err.Error()
	switch {
	case errors.Is(err, plugin.ErrChecksumsDoNotMatch):
		return fmt.Errorf("%w %s: %w: %s no longer matches the manifest's sha256 %s; rebuild the plugin or update the manifest",
			ErrStart, a.m.Name, host.ErrHashMismatch, a.m.ArtifactPath(), a.m.SHA256)
	case strings.Contains(msg, "incompatible API version"):
		return fmt.Errorf("%w %s: protocol version mismatch: %s; this host speaks scorekit plugin protocol v%d: rebuild the plugin against this sdk",
			ErrStart, a.m.Name, msg, pluginrpc.ProtocolVersion)
	case strings.Contains(msg, "exited before we could connect"), strings.Contains(msg, "Failed to read any lines"):
		return fmt.Errorf("%w %s: the plugin process exited at start; run %s by hand with %s=%s set to see why",
			ErrStart, a.m.Name, a.m.ArtifactPath(), pluginrpc.CookieKey, pluginrpc.CookieValue)
	case strings.Contains(msg, "Unrecognized remote plugin message"):
		return fmt.Errorf("%w %s: %s; a plugin's first line on stdout must be go-plugin's handshake line (serve.Main prints it): print nothing on stdout before it",
			ErrStart, a.m.Name, msg)
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return fmt.Errorf("%w %s: no handshake within the start timeout (%s); raise process.Options.StartTimeout or fix the plugin's start-up",
			ErrStart, a.m.Name, a.opts.StartTimeout)
	}
	return fmt.Errorf("%w %s: %w", ErrStart, a.m.Name, err)
}

// configure makes the scorer's configured instance in the process.
func (p *proc) configure(ctx context.Context, scorer string, config json.RawMessage) error {
	resp, err := p.conn.Scorer.Configure(ctx, &pluginpb.ConfigureRequest{Scorer: scorer, ConfigJson: config})
	if err != nil {
		return fmt.Errorf("configure %s: %w", scorer, err)
	}
	if e := pluginrpc.SDKError(resp.GetError()); e != nil {
		return fmt.Errorf("configure %s: %w", scorer, e)
	}
	p.instance = resp.GetInstance()
	return nil
}

// judgeServer returns the broker id of the process's Judge service, serving it on first use.
func (p *proc) judgeServer(scorer sdk.Info) (uint32, *judgeServer) {
	p.judgeOnce.Do(func() {
		p.judges = &judgeServer{info: scorer, calls: map[uint64]judgeCall{}}
		p.judgeID = p.conn.Broker.NextId()
		go p.conn.Broker.AcceptAndServe(p.judgeID, func(opts []grpc.ServerOption) *grpc.Server {
			s := grpc.NewServer(opts...)
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
	// The stream has no per-call deadline: a plugin still busy at the deadline is killed,
	// which ends the stream and the Recv below.
	stop := context.AfterFunc(ctx, p.signalKill)
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

// signalKill kills the process without waiting or cleaning up.
func (p *proc) signalKill() {
	if pr, err := os.FindProcess(p.pid); err == nil && p.pid > 0 {
		_ = pr.Kill()
	}
}

// stop asks the plugin to exit and waits for it (go-plugin kills it after 2s).
func (p *proc) stop() {
	if p.endStream != nil {
		p.endStream()
	}
	p.client.Kill()
}

// kill kills the process at once, for a plugin that may be spinning, then cleans up.
func (p *proc) kill() {
	p.signalKill()
	if p.endStream != nil {
		p.endStream()
	}
	p.client.Kill()
}
