package pluginrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scorekit/scorekit/internal/pluginpb"
	"github.com/scorekit/scorekit/sdk"
)

// Serve runs factories as a go-plugin process plugin speaking protocol version; it returns
// when the host closes the plugin. Plugins call it through serve.Main with
// ProtocolVersion; tests pass another version to exercise the handshake.
func Serve(factories []func() sdk.Scorer, version int) {
	go exitWithParent(os.Getppid())
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake(),
		VersionedPlugins: map[int]plugin.PluginSet{
			version: {PluginName: &Plugin{Factories: factories}},
		},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return plugin.DefaultGRPCServer(append(opts, ServerOptions()...))
		},
		// JSON lines on stderr are what the host forwards to its structured logger with
		// their level and fields.
		Logger: hclog.New(&hclog.LoggerOptions{
			Name:       "scorer",
			Level:      hclog.Info,
			Output:     os.Stderr,
			JSONFormat: true,
		}),
	})
}

// exitWithParent ends the plugin when the host that started it is gone (killed before it
// could close its plugins): the plugin is then re-parented, and nobody will call it again.
func exitWithParent(ppid int) {
	for range time.Tick(time.Second) {
		if os.Getppid() != ppid {
			os.Exit(0)
		}
	}
}

// server is the plugin side of the Scorer service. Configured instances are kept by id; the
// host calls each instance one call at a time.
type server struct {
	pluginpb.UnimplementedScorerServer
	broker    *plugin.GRPCBroker
	factories map[string]func() sdk.Scorer
	infos     []byte

	mu        sync.Mutex
	next      uint64
	instances map[uint64]sdk.Scorer
	judges    map[uint32]pluginpb.JudgeClient
}

func newServer(broker *plugin.GRPCBroker, factories []func() sdk.Scorer) (*server, error) {
	s := &server{
		broker:    broker,
		factories: make(map[string]func() sdk.Scorer, len(factories)),
		instances: map[uint64]sdk.Scorer{},
		judges:    map[uint32]pluginpb.JudgeClient{},
	}
	infos := make([]sdk.Info, 0, len(factories))
	for _, f := range factories {
		info := f().Info()
		s.factories[info.Name] = f
		infos = append(infos, info)
	}
	b, err := json.Marshal(infos)
	if err != nil {
		return nil, fmt.Errorf("serve: encode scorer infos: %w", err)
	}
	s.infos = b
	return s, nil
}

func (s *server) Info(context.Context, *pluginpb.InfoRequest) (*pluginpb.InfoResponse, error) {
	return &pluginpb.InfoResponse{InfosJson: s.infos, Session: true}, nil
}

func (s *server) Configure(_ context.Context, req *pluginpb.ConfigureRequest) (*pluginpb.ConfigureResponse, error) {
	f, ok := s.factories[req.GetScorer()]
	if !ok {
		return &pluginpb.ConfigureResponse{Error: &pluginpb.Error{
			Code:    sdk.CodeInvalidConfig,
			Message: fmt.Sprintf("plugin carries no scorer %q", req.GetScorer()),
		}}, nil
	}
	sc := f()
	if c, ok := sc.(sdk.Configurer); ok {
		if err := c.Configure(req.GetConfigJson()); err != nil {
			e := ErrorOf(err)
			if e.Code == sdk.CodeScorerError {
				e.Code = sdk.CodeInvalidConfig
			}
			return &pluginpb.ConfigureResponse{Error: e}, nil
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	s.instances[s.next] = sc
	return &pluginpb.ConfigureResponse{Instance: s.next}, nil
}

func (s *server) Score(ctx context.Context, req *pluginpb.ScoreRequest) (*pluginpb.ScoreResponse, error) {
	return s.score(ctx, req, nil), nil
}

// Session serves Score calls on one stream, one at a time; a scorer's judge requests go
// out on the same stream and its answers come back on it.
func (s *server) Session(stream pluginpb.Scorer_SessionServer) error {
	sj := &streamJudge{stream: stream}
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		req := msg.GetScore()
		if req == nil {
			return status.Errorf(codes.InvalidArgument, "session: got %T between calls, want a score request", msg.GetMsg())
		}
		ctx, cancel := stream.Context(), context.CancelFunc(func() {})
		if d := req.GetDeadlineUnixNano(); d != 0 {
			ctx, cancel = context.WithDeadline(ctx, time.Unix(0, d))
		}
		resp := s.score(ctx, req, sj)
		cancel()
		if err := stream.Send(&pluginpb.PluginMessage{Msg: &pluginpb.PluginMessage_Score{Score: resp}}); err != nil {
			return err
		}
	}
}

func (s *server) score(ctx context.Context, req *pluginpb.ScoreRequest, sj *streamJudge) *pluginpb.ScoreResponse {
	s.mu.Lock()
	sc, ok := s.instances[req.GetInstance()]
	s.mu.Unlock()
	if !ok {
		return &pluginpb.ScoreResponse{Error: &pluginpb.Error{
			Code:    sdk.CodeUnavailable,
			Message: fmt.Sprintf("no configured instance %d in this plugin process", req.GetInstance()),
		}}
	}
	call := sdk.Call{}
	if err := json.Unmarshal(req.GetRunJson(), &call.Run); err != nil {
		return &pluginpb.ScoreResponse{Error: &pluginpb.Error{Code: sdk.CodeInvalidRun, Message: "decode run: " + err.Error()}}
	}
	switch id := req.GetJudgeBrokerId(); {
	case req.GetSessionJudge() && sj != nil:
		call.Judge = sj
	case id != 0:
		j, err := s.judge(id)
		if err != nil {
			return &pluginpb.ScoreResponse{Error: &pluginpb.Error{Code: sdk.CodeJudgeError, Message: err.Error()}}
		}
		call.Judge = &remoteJudge{c: j, call: req.GetCall()}
	}
	res, err := score(ctx, sc, call)
	if err != nil {
		return &pluginpb.ScoreResponse{Error: ErrorOf(err)}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return &pluginpb.ScoreResponse{Error: &pluginpb.Error{Code: sdk.CodeInvalidResult, Message: "encode result: " + err.Error()}}
	}
	return &pluginpb.ScoreResponse{ResultJson: b}
}

// score runs one call, turning a panic into an error so one bad run fails alone instead of
// taking the process (and every other tenant's instance in it) down. The caller gets one
// line; the stack goes to stderr, which the host logs.
func score(ctx context.Context, sc sdk.Scorer, call sdk.Call) (res sdk.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			msg := fmt.Sprint(p)
			hclog.New(&hclog.LoggerOptions{Name: "scorer", Output: os.Stderr, JSONFormat: true}).
				Error("scorer panicked", "panic", msg, "stack", string(debug.Stack()))
			first, _, _ := strings.Cut(msg, "\n")
			err = &sdk.Error{Code: sdk.CodeScorerError, Message: "plugin crashed: " + first}
		}
	}()
	return sc.Score(ctx, call)
}

func (s *server) Release(_ context.Context, req *pluginpb.ReleaseRequest) (*pluginpb.ReleaseResponse, error) {
	s.mu.Lock()
	sc, ok := s.instances[req.GetInstance()]
	delete(s.instances, req.GetInstance())
	s.mu.Unlock()
	if c, isCloser := sc.(io.Closer); ok && isCloser {
		if err := c.Close(); err != nil {
			return nil, status.Errorf(status.Code(err), "close instance %d: %v", req.GetInstance(), err)
		}
	}
	return &pluginpb.ReleaseResponse{}, nil
}

// judge returns the client of the host's Judge service at broker id, dialling it the first
// time: the host accepts the connection once per process and quotes the same id after.
func (s *server) judge(id uint32) (pluginpb.JudgeClient, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j, ok := s.judges[id]; ok {
		return j, nil
	}
	conn, err := s.broker.Dial(id)
	if err != nil {
		return nil, fmt.Errorf("dial the host's judge (broker id %d): %w", id, err)
	}
	j := pluginpb.NewJudgeClient(conn)
	s.judges[id] = j
	return j, nil
}

// remoteJudge is the sdk.Judge a process plugin's scorer gets: every request goes to the
// host, which holds the API key, the budget and the cache.
type remoteJudge struct {
	c    pluginpb.JudgeClient
	call uint64
}

var _ sdk.Judge = (*remoteJudge)(nil)

func (j *remoteJudge) Complete(ctx context.Context, reqs []sdk.CompletionRequest) ([]sdk.CompletionResponse, error) {
	b, err := json.Marshal(reqs)
	if err != nil {
		return nil, &sdk.Error{Code: sdk.CodeJudgeError, Message: "encode judge requests: " + err.Error()}
	}
	resp, err := j.c.Complete(ctx, &pluginpb.CompleteRequest{Call: j.call, RequestsJson: b})
	if err != nil {
		return nil, rpcError(err)
	}
	return completions(resp)
}

func (j *remoteJudge) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	resp, err := j.c.Embed(ctx, &pluginpb.EmbedRequest{Call: j.call, Texts: texts})
	if err != nil {
		return nil, rpcError(err)
	}
	return vectors(resp)
}

// completions decodes the host's answer to a batch of completions, whichever transport
// carried it.
func completions(resp *pluginpb.CompleteResponse) ([]sdk.CompletionResponse, error) {
	if e := SDKError(resp.GetError()); e != nil {
		return nil, e
	}
	var out []sdk.CompletionResponse
	if err := json.Unmarshal(resp.GetResponsesJson(), &out); err != nil {
		return nil, &sdk.Error{Code: sdk.CodeJudgeError, Message: "decode judge responses: " + err.Error()}
	}
	return out, nil
}

// vectors decodes the host's answer to an embeddings request, whichever transport carried it.
func vectors(resp *pluginpb.EmbedResponse) ([][]float32, error) {
	if e := SDKError(resp.GetError()); e != nil {
		return nil, e
	}
	out := make([][]float32, len(resp.GetVectors()))
	for i, v := range resp.GetVectors() {
		out[i] = v.GetValues()
	}
	return out, nil
}

func rpcError(err error) *sdk.Error {
	st := status.Convert(err)
	return &sdk.Error{Code: sdk.CodeJudgeError, Message: "judge call to the host failed: " + st.Message()}
}

// streamJudge is the sdk.Judge of a call on a Session: a request goes out on the stream
// and the host's answer is the next message in. One request at a time.
type streamJudge struct {
	mu     sync.Mutex
	stream pluginpb.Scorer_SessionServer
}

var _ sdk.Judge = (*streamJudge)(nil)

func (j *streamJudge) roundTrip(out *pluginpb.PluginMessage) (*pluginpb.HostMessage, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.stream.Send(out); err != nil {
		return nil, rpcError(err)
	}
	in, err := j.stream.Recv()
	if err != nil {
		return nil, rpcError(err)
	}
	return in, nil
}

func (j *streamJudge) Complete(_ context.Context, reqs []sdk.CompletionRequest) ([]sdk.CompletionResponse, error) {
	b, err := json.Marshal(reqs)
	if err != nil {
		return nil, &sdk.Error{Code: sdk.CodeJudgeError, Message: "encode judge requests: " + err.Error()}
	}
	in, err := j.roundTrip(&pluginpb.PluginMessage{Msg: &pluginpb.PluginMessage_Complete{Complete: &pluginpb.CompleteRequest{RequestsJson: b}}})
	if err != nil {
		return nil, err
	}
	resp := in.GetComplete()
	if resp == nil {
		return nil, &sdk.Error{Code: sdk.CodeJudgeError, Message: fmt.Sprintf("session: host answered a judge request with %T", in.GetMsg())}
	}
	return completions(resp)
}

func (j *streamJudge) Embed(_ context.Context, texts []string) ([][]float32, error) {
	in, err := j.roundTrip(&pluginpb.PluginMessage{Msg: &pluginpb.PluginMessage_Embed{Embed: &pluginpb.EmbedRequest{Texts: texts}}})
	if err != nil {
		return nil, err
	}
	resp := in.GetEmbed()
	if resp == nil {
		return nil, &sdk.Error{Code: sdk.CodeJudgeError, Message: fmt.Sprintf("session: host answered an embed request with %T", in.GetMsg())}
	}
	return vectors(resp)
}
